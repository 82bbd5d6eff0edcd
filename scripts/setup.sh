#!/usr/bin/env bash
# Installs Node dependencies (native codecs build from their npm tarballs, offline) and fetches the Kafka jars
# from Maven Central into .kafka/ (skipped when already there). Safe to run again.
set -euo pipefail
cd "$(dirname "$0")/.."

if [ ! -f node_modules/.package-lock.json ] || [ package-lock.json -nt node_modules/.package-lock.json ]; then
  npm ci --no-audit --no-fund
fi
bash scripts/fetch-kafka.sh >/dev/null
