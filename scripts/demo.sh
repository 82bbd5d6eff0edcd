#!/usr/bin/env bash
# The demo command: set up (as the test command does), build, and run `squeeze demo` on the embedded default
# broker (or KAFKA_BROKERS). Extra arguments go to `squeeze demo`, e.g. npm run demo -- --records 100000.
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/setup.sh
npx tsc -p tsconfig.json
node dist/services/cli/main.js demo "$@"
