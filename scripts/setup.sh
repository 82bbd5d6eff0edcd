#!/usr/bin/env bash
# Installs Node dependencies (native codecs build from their npm tarballs, offline) and fetches the Kafka jars
# from Maven Central into .kafka/ (skipped when already there). Safe to run again.
set -euo pipefail
cd "$(dirname "$0")/.."

# A symlinked node_modules is another checkout's install: npm ci through it empties that checkout's modules.
if [ ! -L node_modules ] && { [ ! -f node_modules/.package-lock.json ] || [ package-lock.json -nt node_modules/.package-lock.json ]; }; then
  # The lz4 package ships a prebuilt-looking build/ folder that node-gyp deletes while npm may still be
  # extracting it; when that race hits, a second clean install goes through.
  npm ci --no-audit --no-fund || { echo "npm ci failed; retrying once" >&2; npm ci --no-audit --no-fund; }
fi
bash scripts/fetch-kafka.sh >/dev/null
# kcat (librdkafka's producer) writes the foreign-client topics the compare baseline tests read.
bash scripts/ensure-apt.sh kcat
