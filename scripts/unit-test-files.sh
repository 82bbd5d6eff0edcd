#!/usr/bin/env bash
# Prints the compiled test files that need no broker (test/lib, test/tools, test/fixtures), one a line: the files
# scripts/test.sh runs again on the next Node LTS. A file that imports the Kafka helpers, the embedded broker or
# testcontainers starts a broker, so it is left out. With --fast (npm run test:unit), the stress files are left out
# too: they run in npm test, on both Node versions.
set -euo pipefail
cd "$(dirname "$0")/.."
# Stress tests: many processes ending worker threads in the middle of native calls. They prove no crash, not a
# unit's behaviour, and take the time of many unit files.
STRESS='dist/test/lib/codecs/native-threads.test.js'
list() {
  find dist/test/lib dist/test/tools dist/test/fixtures -name '*.test.js' 2>/dev/null | sort \
    | xargs grep -L -E "helpers/kafka\.js|embedded-broker/|testcontainers"
}
if [[ "${1:-}" == --fast ]]; then list | grep -v -x -F "$STRESS"; else list; fi
