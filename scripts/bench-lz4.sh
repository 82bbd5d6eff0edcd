#!/usr/bin/env bash
# lz4 level-1 compression speed on the producer's batches: squeeze's binding next to the nan `lz4` package it
# replaced, lz4-napi's frame encoder, and Debian's `lz4` CLI on a file of the same batches (bench/lz4-speed.ts).
# The two npm peers go into the git-ignored bench/.peers/lz4/ (never needed by the services), built for the
# Node the benchmark runs on. Env: BENCH_RUNS (5), BENCH_CORPUS_RECORDS (200000), BENCH_HTTP_RECORDS (100000).
set -euo pipefail
cd "$(dirname "$0")/.."

bash scripts/ensure-apt.sh lz4 time
source scripts/node-lts.sh
squeeze_use_node "$SQUEEZE_NODE_LTS"
bash scripts/setup.sh

PEERS="${BENCH_PEERS_DIR:-bench/.peers}/lz4"
if [ "$(cat "$PEERS/.built-by" 2>/dev/null)" != "$(node --version)" ]; then
  rm -rf "$PEERS" && mkdir -p "$PEERS"
  cat > "$PEERS/package.json" <<JSON
{
  "name": "squeeze-bench-lz4-peers",
  "private": true,
  "description": "Benchmark-only lz4 peers, installed by scripts/bench-lz4.sh",
  "dependencies": { "lz4": "0.6.5", "lz4-napi": "2.10.0" },
  "allowScripts": { "lz4": true }
}
JSON
  (cd "$PEERS" && npm install --no-audit --no-fund >install.log 2>&1) || { tail -n 15 "$PEERS/install.log" >&2; exit 1; }
  node --version > "$PEERS/.built-by"
fi

npx tsc -p tsconfig.json
node dist/bench/lz4-speed.js
