#!/usr/bin/env bash
# The demo command: set up (as the test command does), build, and run `squeeze compare` end to end on the
# embedded default broker (or KAFKA_BROKERS) with generated Cap'n Proto HTTP logs. Extra arguments go to
# `squeeze compare`, e.g. npm run demo -- --records 200000 --kind journald.
set -euo pipefail
cd "$(dirname "$0")/.."
source scripts/node-lts.sh
squeeze_use_node "$SQUEEZE_NODE_LTS"
bash scripts/setup.sh
npx tsc -p tsconfig.json
bin/squeeze compare --source generate --kind http --records 50000 \
  --chart squeeze-compare.svg --markdown squeeze-compare.md --json squeeze-compare.json "$@"
