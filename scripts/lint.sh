#!/usr/bin/env bash
# Lint and format check (scripts/test.sh runs it after the build): the generated codecs match their schemas,
# ESLint (eslint.config.js) finds nothing, and every source is as Prettier (.prettierrc.json) writes it.
# `npm run format` fixes what the tools can fix.
set -euo pipefail
cd "$(dirname "$0")/.."
node tools/capnp-gen.ts --check lib/formats/http-request.capnp
npx eslint --max-warnings 0 .
npx prettier --check --log-level warn '**/*.{ts,js,mjs,cjs}'
