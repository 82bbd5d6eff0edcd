#!/usr/bin/env bash
# The one test command (README, .ci/run): installs what a fresh clone lacks, then builds and runs every test
# against a real Kafka broker (KAFKA_BROKERS, else testcontainers, else the embedded JVM broker).
set -euo pipefail
cd "$(dirname "$0")/.."

bash scripts/setup.sh
rm -rf dist
npx tsc -p tsconfig.json
# Test files run one at a time: each integration file starts its own broker, and the machines have 2 cores.
# Only *.test.js files: node --test would otherwise also run every helper module under dist/test/ as a file.
mapfile -t files < <(find dist/test -name '*.test.js' | sort)
node --test --test-concurrency=1 --test-timeout=300000 --test-force-exit "${files[@]}"
