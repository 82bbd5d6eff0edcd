#!/usr/bin/env bash
# Fetches the jars of the embedded Kafka broker (kafka/pom.xml) into the git-ignored .kafka/jars/<version>/.
# Idempotent: a marker written after a successful copy makes a warm machine skip Maven entirely.
# Prints the jar folder on stdout (last line); progress goes to stderr.
set -euo pipefail

ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
POM="$ROOT/kafka/pom.xml"

VERSION="$(sed -n 's:.*<kafka\.version>\(.*\)</kafka\.version>.*:\1:p' "$POM" | head -n1)"
if [[ -z "$VERSION" ]]; then
  echo "fetch-kafka: no <kafka.version> in $POM" >&2
  exit 2
fi

JARS="$ROOT/.kafka/jars/$VERSION"
MARKER="$JARS/.complete"

if [[ -f "$MARKER" ]]; then
  echo "fetch-kafka: Kafka $VERSION jars already present" >&2
  echo "$JARS"
  exit 0
fi

# Parallel test processes may all find the marker missing: let one fetch, the others wait and re-check.
mkdir -p "$ROOT/.kafka"
if command -v flock >/dev/null 2>&1; then
  exec 9>"$ROOT/.kafka/fetch.lock"
  flock -w 600 9
  if [[ -f "$MARKER" ]]; then
    echo "fetch-kafka: Kafka $VERSION jars fetched by another process" >&2
    echo "$JARS"
    exit 0
  fi
fi

if ! command -v mvn >/dev/null 2>&1; then
  echo "fetch-kafka: mvn not found on PATH (Maven is needed once to fetch Kafka $VERSION jars)" >&2
  exit 3
fi

echo "fetch-kafka: fetching Kafka $VERSION jars with Maven into $JARS" >&2
# Copy into a temporary folder and rename, so an interrupted fetch never leaves a half-filled jar folder.
TMP="$JARS.tmp.$$"
rm -rf "$TMP"
mkdir -p "$(dirname "$JARS")"
trap 'rm -rf "$TMP"' EXIT
start=$(date +%s)
mvn -B -q -Dstyle.color=never -f "$POM" dependency:copy-dependencies -DincludeScope=runtime -DoutputDirectory="$TMP" >&2
count=$(find "$TMP" -maxdepth 1 -name '*.jar' | wc -l)
if [[ "$count" -lt 10 ]]; then
  echo "fetch-kafka: Maven copied only $count jars into $TMP" >&2
  exit 4
fi
rm -rf "$JARS"
mv "$TMP" "$JARS"
trap - EXIT
printf 'kafka.version=%s\njars=%s\nfetched=%s\n' "$VERSION" "$count" "$(date -u +%Y-%m-%dT%H:%M:%SZ)" > "$MARKER"
echo "fetch-kafka: $count jars in $(( $(date +%s) - start ))s" >&2
echo "$JARS"
