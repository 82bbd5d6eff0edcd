#!/usr/bin/env bash
# Benchmarks of squeeze's producer, consumer and copier against peers (kcat, Kafka's Java tools,
# @confluentinc/kafka-javascript, kafkajs), in one run on one local broker and the same inputs.
# Installs the benchmark-only peers (Debian packages; npm into the git-ignored bench/.peers/), builds, runs.
#   bash scripts/bench.sh [ceiling] [producer] [consumer] [copier] [decode]      (default: all)
# Env: BENCH_RUNS (3), BENCH_CORPUS_RECORDS, BENCH_HTTP_RECORDS, BENCH_PARTITIONS, KAFKA_BROKERS. Safe to run again.
set -euo pipefail
cd "$(dirname "$0")/.."

APT_PACKAGES=(kcat time zstd lz4 build-essential python3 zlib1g-dev libssl-dev libzstd-dev libcurl4-openssl-dev liblz4-dev libsasl2-dev)
missing=()
for p in "${APT_PACKAGES[@]}"; do dpkg -s "$p" >/dev/null 2>&1 || missing+=("$p"); done
if [ "${#missing[@]}" -gt 0 ]; then
  echo "bench: installing ${missing[*]} (apt-get)" >&2
  SUDO=""; [ "$(id -u)" -eq 0 ] || SUDO="sudo"
  $SUDO apt-get update -qq
  DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq "${missing[@]}" >/dev/null
fi

bash scripts/setup.sh

# @confluentinc/kafka-javascript: its prebuilt binary download fails offline, so it is built from the
# bundled librdkafka against Debian's zstd/lz4/ssl/sasl/curl (CKJS_LINKING=dynamic). npm 11 runs a
# dependency's install script only when allowScripts approves it: the peers' own package.json does.
PEERS=bench/.peers
mkdir -p "$PEERS"
cat > "$PEERS/package.json" <<'JSON'
{
  "name": "squeeze-bench-peers",
  "private": true,
  "description": "Benchmark-only peers, installed by scripts/bench.sh; never needed by squeeze's services",
  "dependencies": { "@confluentinc/kafka-javascript": "1.10.1" },
  "allowScripts": { "@confluentinc/kafka-javascript": true }
}
JSON
if ! ls "$PEERS"/node_modules/@confluentinc/kafka-javascript/build/Release/*.node >/dev/null 2>&1; then
  echo "bench: building @confluentinc/kafka-javascript into $PEERS (about 2 minutes on 2 cores)" >&2
  if ! (cd "$PEERS" && CKJS_LINKING=dynamic npm install --no-audit --no-fund --allow-scripts=@confluentinc/kafka-javascript >"install.log" 2>&1); then
    echo "bench: @confluentinc/kafka-javascript did not build (see $PEERS/install.log); its rows are skipped" >&2
  fi
fi

npx tsc -p tsconfig.json
node dist/bench/run.js "$@"
