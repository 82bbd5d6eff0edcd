#!/usr/bin/env bash
# The fast test path (npm run test:unit): the build, then the broker-free test files but the stress ones
# (scripts/unit-test-files.sh --fast).
# No root, no Docker, no network: it installs nothing, so node_modules and the pinned Node must already be there
# (npm test or scripts/setup.sh put them there once). `npm test` stays the one full command.
set -euo pipefail
cd "$(dirname "$0")/.."
source scripts/node-lts.sh
squeeze_use_node "$SQUEEZE_NODE_LTS"
# The lz4 CLI is the reference decoder of the codec tests; without it they would fail on a missing program.
# The compressors' own CLIs write the files the lz4 and compressed-file tests read.
for tool in lz4 zstd bzip2 xz; do
  command -v "$tool" >/dev/null || { echo "test:unit: needs the $tool CLI on PATH (apt-get install lz4 zstd bzip2 xz-utils, or npm test once)" >&2; exit 1; }
done
npm run --silent build
mapfile -t files < <(bash scripts/unit-test-files.sh --fast)
echo "test:unit: ${#files[@]} broker-free test files on Node $(node --version)" >&2
# Two at a time: these files are CPU-bound and start no broker, and the machines have 2 cores.
node --test --test-concurrency=2 --test-timeout=120000 "${files[@]}"
