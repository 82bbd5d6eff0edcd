#!/usr/bin/env bash
# Installs the benchmark-only Node peer, @confluentinc/kafka-javascript, into the git-ignored bench/.peers/
# (scripts/bench.sh runs this). Its prebuilt binary download fails offline, so it is built from the bundled
# librdkafka against Debian's zstd/lz4/ssl/sasl/curl (CKJS_LINKING=dynamic). npm 11 runs a dependency's
# install script only when the project's package.json `allowScripts` approves it (`--allow-scripts` is refused
# in project installs), so the peers' package.json carries that approval. A peer that does not build fails
# here, loudly, unless BENCH_SKIP (comma-separated) names it: `BENCH_SKIP=confluent`.
# Env: BENCH_PEERS_DIR (bench/.peers), BENCH_CONFLUENT_VERSION (1.10.1).
set -euo pipefail
cd "$(dirname "$0")/.."

PEERS="${BENCH_PEERS_DIR:-bench/.peers}"
if [[ ",${BENCH_SKIP:-}," == *",confluent,"* ]]; then
  echo "bench: BENCH_SKIP=confluent: @confluentinc/kafka-javascript is left out; its rows will be absent" >&2
  exit 0
fi
# librdkafka's configure leaves out a codec whose headers are missing, and the addon then refuses that codec only
# when a producer asks for it; a build counts only when it carries every codec the benchmarks use.
built() {
  ls "$PEERS"/node_modules/@confluentinc/kafka-javascript/build/Release/*.node >/dev/null 2>&1 &&
    (cd "$PEERS" && node -e '
      const f = require("./node_modules/@confluentinc/kafka-javascript").features
      process.exit(["gzip", "snappy", "lz4", "zstd"].every((c) => f.includes(c)) ? 0 : 1)')
}
built && exit 0
# The headers librdkafka is built against (dynamic linking): without libzstd-dev it builds with no zstd at all.
bash scripts/ensure-apt.sh build-essential python3 zlib1g-dev libssl-dev libzstd-dev libcurl4-openssl-dev liblz4-dev libsasl2-dev
rm -rf "$PEERS/node_modules"

mkdir -p "$PEERS"
cat > "$PEERS/package.json" <<JSON
{
  "name": "squeeze-bench-peers",
  "private": true,
  "description": "Benchmark-only peers, installed by scripts/bench-peers.sh; never needed by squeeze's services",
  "dependencies": { "@confluentinc/kafka-javascript": "${BENCH_CONFLUENT_VERSION:-1.10.1}" },
  "allowScripts": { "@confluentinc/kafka-javascript": true }
}
JSON
echo "bench: building @confluentinc/kafka-javascript into $PEERS with npm $(npm --version) (about 2 minutes on 2 cores)" >&2
# npm skips an unapproved install script without failing, so success is the built addon, not npm's exit code.
if ! (cd "$PEERS" && CKJS_LINKING=dynamic npm install --no-audit --no-fund >install.log 2>&1) || ! built; then
  echo "bench: @confluentinc/kafka-javascript did not build; last lines of $PEERS/install.log:" >&2
  tail -n 15 "$PEERS/install.log" | sed 's/^/  /' >&2
  echo "bench: fix the build, or set BENCH_SKIP=confluent to run the benchmarks without its rows" >&2
  exit 1
fi
