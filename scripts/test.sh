#!/usr/bin/env bash
# The one test command (README, .ci/run): installs what a fresh clone lacks, then builds and runs every test
# against a real Kafka broker (KAFKA_BROKERS, else testcontainers, else the embedded JVM broker).
# With CI=true or SQUEEZE_TEST_IN_CLEAN_CLONE=1 the suite runs once, in a fresh clone of HEAD in a temporary
# folder with nothing beside it (no shared/): the proof that the tests need nothing outside the repository.
set -euo pipefail
cd "$(dirname "$0")/.."

# One test run per machine at a time: runs share the Docker engine (the run that started it stops it), the
# Kubernetes cluster's state and fixed ports, so a second run waits for the first instead of failing in its middle.
# flock holds the lock and runs this script again under it; -o keeps the lock's descriptor from the run's processes,
# so a daemon or broker left running never holds it.
if [ -z "${SQUEEZE_TEST_LOCK_HELD:-}" ]; then
  lock="${SQUEEZE_TEST_LOCK:-/tmp/squeeze-test.lock}"
  flock -n "$lock" true || echo "test: another test run on this machine holds $lock; waiting up to 90 min for it to end" >&2
  rc=0
  SQUEEZE_TEST_LOCK_HELD=1 flock -o -w 5400 -E 75 "$lock" bash "$PWD/scripts/test.sh" "$@" || rc=$?
  [ "$rc" != 75 ] || echo "test: $lock still held after 90 min; is a test run hung? (fuser -v $lock)" >&2
  exit "$rc"
fi

if { [ "${CI:-}" = true ] || [ "${SQUEEZE_TEST_IN_CLEAN_CLONE:-}" = 1 ]; } && [ -z "${SQUEEZE_TEST_CLONE_OF:-}" ]; then
  tmp="$(mktemp -d)"
  trap 'rm -rf "$tmp"' EXIT
  clone="$(bash scripts/clean-clone.sh "$tmp/squeeze")"
  echo "test: running the suite in a clean clone of $(git rev-parse --short HEAD) at $clone" >&2
  # Maven reuses ~/.m2 and npm its cache, so the clone's setup fetches little.
  SQUEEZE_TEST_CLONE_OF="$PWD" bash "$clone/scripts/test.sh"
  exit 0
fi

# Node LTS from the npm registry (scripts/node-lts.sh), not the machine's node, for the build, the addons and the suite.
source scripts/node-lts.sh
squeeze_use_node "$SQUEEZE_NODE_LTS"
bash scripts/setup.sh
# Peers the tests run against: kcat (librdkafka) writes foreign-client topics, the lz4 CLI is the reference decoder,
# the capnp tool writes the reference packed encoding.
bash scripts/ensure-apt.sh kcat lz4 capnproto zstd bzip2 xz-utils
# Docker Compose v2, the docker CLI plugin the compose tests run docker-compose.yml with: built from its Go module
# on first use and cached outside the checkout (scripts/compose-v2.sh), so a warm run builds nothing.
bash scripts/compose-v2.sh >/dev/null
# The Kubernetes binaries for the cluster tests at the end: built from the Go module proxy into a cache outside the
# checkout on first use (scripts/k8s-binaries.sh, long on a cold machine), so a warm run builds nothing.
bash scripts/k8s-binaries.sh >/dev/null
# Integration tests run on a containerized broker (testcontainers) when a Docker engine answers; start one if
# none does, build the images no registry gives us, and stop the engine again if we started it. In CI the
# container path is required: a broker selection that would fall back to the JVM broker fails instead.
if [ "${CI:-}" = true ]; then
  export SQUEEZE_REQUIRE_CONTAINER_BROKER="${SQUEEZE_REQUIRE_CONTAINER_BROKER:-1}"
fi
# Ryuk, testcontainers' reaper, is an image from Docker Hub; the tests stop their containers themselves and
# docker-engine.sh stop removes what a killed test file left.
# Reports take their width from COLUMNS where stdout is no terminal: the tests expect a pipe's default width.
unset COLUMNS
export TESTCONTAINERS_RYUK_DISABLED="${TESTCONTAINERS_RYUK_DISABLED:-true}"
# A local engine publishes container ports on 127.0.0.1; testcontainers would pick the bridge gateway instead
# when it finds /.dockerenv (as on these machines).
case "${DOCKER_HOST:-unix://}" in unix://*) export TESTCONTAINERS_HOST_OVERRIDE="${TESTCONTAINERS_HOST_OVERRIDE:-127.0.0.1}" ;; esac
if [ "${SQUEEZE_NO_TESTCONTAINERS:-}" != 1 ]; then
  if bash scripts/docker-engine.sh start; then
    trap 'bash scripts/docker-engine.sh stop' EXIT
    bash scripts/build-images.sh
  elif [ "${SQUEEZE_REQUIRE_CONTAINER_BROKER:-}" = 1 ]; then
    exit 1
  else
    echo "test: no Docker engine; the integration tests use the embedded JVM broker" >&2
  fi
fi
rm -rf dist
npx tsc -p tsconfig.json
# Lint and format are part of the test command: a finding fails it.
bash scripts/lint.sh
# Test files run one at a time: each integration file starts its own broker, and the machines have 2 cores.
# Only *.test.js files: node --test would otherwise also run every helper module under dist/test/ as a file.
mapfile -t files < <(find dist/test -name '*.test.js' | sort)
# No --test-force-exit: under process isolation it can end a file's process before its last verdicts reach the
# runner (nodejs/node#64833), which then reports fewer tests and still exits 0. Each file closes what it opens.
run_tests() { node --test --test-concurrency=1 --test-timeout=300000 "$@"; }
echo "test: the whole suite on Node $(node --version)" >&2
run_tests "${files[@]}"

# The next LTS runs the library's tests that need no broker (scripts/unit-test-files.sh: npm run test:unit's
# files and the stress ones: a few minutes, not the whole suite's time again): the code and every native addon as built
# above (all N-API) load and pass on it too. Integration, service, fuzz and deployment tests, and any file that
# starts a broker, run on the suite's LTS only.
mapfile -t unit < <(bash scripts/unit-test-files.sh)
squeeze_use_node "$SQUEEZE_NODE_NEXT"
echo "test: the ${#unit[@]} broker-free library test files on Node $(node --version)" >&2
run_tests "${unit[@]}"

# A real single-node Kubernetes cluster from those binaries (scripts/k8s-cluster.sh), each script starting and
# stopping its own: the manifests and Strimzi's resources admitted by the API server (k8s-e2e.sh), then squeeze's
# workloads on Kafka inside the cluster, scaled, restarted and checked for loss (k8s-workloads-e2e.sh).
squeeze_use_node "$SQUEEZE_NODE_LTS"
echo "test: the Kubernetes cluster tests" >&2
bash scripts/k8s-e2e.sh
bash scripts/k8s-workloads-e2e.sh
