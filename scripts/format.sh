#!/usr/bin/env bash
# npm run format: ESLint's fixes first (they may leave lines Prettier would lay out differently), then Prettier over
# every source. Fails when ESLint leaves findings it cannot fix; Prettier still runs.
set -uo pipefail
cd "$(dirname "$0")/.."
npx eslint --fix .
status=$?
npx prettier --write --log-level warn '**/*.{ts,js,mjs,cjs}' || status=1
exit $status
