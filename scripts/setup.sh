#!/usr/bin/env bash
# Installs Node dependencies (native codecs build from their npm tarballs, offline) and fetches the Kafka jars
# from Maven Central into .kafka/ (skipped when already there). Safe to run again.
set -euo pipefail
cd "$(dirname "$0")/.."

# The pinned Node LTS and its headers (scripts/node-lts.sh): npm passes ~/.npmrc's nodedir on to scripts as
# npm_config_nodedir, which must not pick the headers the addons are built against (node-lts.sh overrides it).
source scripts/node-lts.sh
squeeze_use_node "$SQUEEZE_NODE_LTS"
# Compilers for the native addons (node-gyp builds them from source).
bash scripts/ensure-apt.sh make g++ python3

# Installed again when the lockfile changed or another Node built node_modules.
built_by=node_modules/.squeeze-built-by
if [ ! -f node_modules/.package-lock.json ] || [ package-lock.json -nt node_modules/.package-lock.json ] \
  || [ "$(cat "$built_by" 2>/dev/null)" != "$(node --version)" ]; then
  npm ci --no-audit --no-fund
  node --version > "$built_by"
fi
# squeeze's own addon is built again when its sources changed since its last build (a pull brought new ones):
# without it the code falls back to the TypeScript paths, and the tests that hold the C to them would fail.
addon=native/squeeze-lz4/build/Release/squeeze_lz4.node
if [ ! -f "$addon" ] || [ -n "$(find native/squeeze-lz4/src native/squeeze-lz4/binding.gyp -newer "$addon" -print -quit)" ]; then
  npm rebuild squeeze-lz4 --no-audit --no-fund >/dev/null
fi
bash scripts/fetch-kafka.sh >/dev/null
