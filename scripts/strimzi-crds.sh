#!/usr/bin/env bash
# Prints a folder holding Strimzi's CustomResourceDefinitions for the kafka.strimzi.io/v1 API of Strimzi VERSION
# (default 0.49.0), unpacked once into a cache outside the checkout. Their source is Maven Central: Strimzi
# publishes no CRD file there, but its io.strimzi:api test jar carries crds/v1/*.yaml, which Strimzi's build
# generates with its own CRD generator from the same API classes as the CRDs it ships. Strimzi releases that have
# no test jar on Maven Central (1.0.x at the time of writing) cannot be fetched this way.
#   scripts/strimzi-crds.sh [VERSION]
set -euo pipefail
version="${1:-0.49.0}"
cache="${SQUEEZE_STRIMZI_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/squeeze/strimzi}"
dir="$cache/$version/crds"
if ! ls "$dir"/*.yaml >/dev/null 2>&1; then
  command -v mvn >/dev/null || { echo "strimzi-crds: mvn is not installed" >&2; exit 1; }
  mkdir -p "$cache"
  tmp="$(mktemp -d "$cache/.fetch.XXXXXX")"
  trap 'rm -rf "$tmp"' EXIT
  mvn -q dependency:copy -Dartifact="io.strimzi:api:$version:jar:tests" -DoutputDirectory="$tmp" >"$tmp/mvn.log" 2>&1 \
    || { grep ERROR "$tmp/mvn.log" | head -n 3 >&2; echo "strimzi-crds: no io.strimzi:api:$version test jar" >&2; exit 1; }
  (cd "$tmp" && unzip -q "api-$version-tests.jar" 'crds/v1/*.yaml')
  rm -rf "$dir"
  mkdir -p "$(dirname "$dir")"
  mv "$tmp/crds/v1" "$dir"
fi
echo "$dir"
