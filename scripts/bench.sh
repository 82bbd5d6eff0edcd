#!/usr/bin/env bash
# Benchmarks of squeeze's producer, consumer and copier against peers (kcat, rsyslog+omkafka, Kafka's Java tools,
# @confluentinc/kafka-javascript, kafkajs), in one run on one local broker and the same inputs.
# Installs the benchmark-only peers (Debian packages; npm into the git-ignored bench/.peers/), builds, runs.
#   bash scripts/bench.sh [ceiling] [producer] [levels] [lz4] [keeping-up] [consumer] [copier] [decode] [parse] [e2e]
#     [restart] [positions] [audit]
#   (default: all; audit: BENCH_AUDIT_SMALL, BENCH_AUDIT_SMALL_MIB, BENCH_AUDIT_LARGE, BENCH_AUDIT_LARGE_MIB, see bench/audit-scale.ts)
# Env: BENCH_RUNS (3), BENCH_CORPUS_RECORDS, BENCH_HTTP_RECORDS, BENCH_PARTITIONS, KAFKA_BROKERS, BENCH_SKIP=confluent
# (leave that peer out; a peer that cannot be built otherwise fails the run). Safe to run again.
set -euo pipefail
cd "$(dirname "$0")/.."

APT_PACKAGES=(kcat rsyslog rsyslog-kafka time zstd lz4 build-essential python3 zlib1g-dev libssl-dev libzstd-dev libcurl4-openssl-dev liblz4-dev libsasl2-dev)
bash scripts/ensure-apt.sh "${APT_PACKAGES[@]}"

source scripts/node-lts.sh
squeeze_use_node "$SQUEEZE_NODE_LTS"
bash scripts/setup.sh

# Only the producer section runs @confluentinc/kafka-javascript: other sections need not build it.
if [ $# -eq 0 ] || [[ " $* " == *" producer "* ]]; then bash scripts/bench-peers.sh; fi

npx tsc -p tsconfig.json
node dist/bench/run.js "$@"
