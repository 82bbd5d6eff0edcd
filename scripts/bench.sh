#!/usr/bin/env bash
# Benchmarks of squeeze's producer, consumer and copier against peers (kcat, Kafka's Java tools,
# @confluentinc/kafka-javascript, kafkajs), in one run on one local broker and the same inputs.
# Installs the benchmark-only peers (Debian packages; npm into the git-ignored bench/.peers/), builds, runs.
#   bash scripts/bench.sh [ceiling] [producer] [consumer] [copier] [decode]      (default: all)
# Env: BENCH_RUNS (3), BENCH_CORPUS_RECORDS, BENCH_HTTP_RECORDS, BENCH_PARTITIONS, KAFKA_BROKERS, BENCH_SKIP=confluent
# (leave that peer out; a peer that cannot be built otherwise fails the run). Safe to run again.
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

bash scripts/bench-peers.sh

npx tsc -p tsconfig.json
node dist/bench/run.js "$@"
