#!/usr/bin/env bash
# Prints the compiled test files that need no broker (test/lib, test/tools, test/fixtures), one a line: the files
# `npm run test:unit` runs, and the ones scripts/test.sh runs again on the next Node LTS. A file that imports the
# Kafka helpers, the embedded broker or testcontainers starts a broker, so it is left out.
set -euo pipefail
cd "$(dirname "$0")/.."
find dist/test/lib dist/test/tools dist/test/fixtures -name '*.test.js' 2>/dev/null | sort \
  | xargs grep -L -E "helpers/kafka\.js|embedded-broker/|testcontainers"
