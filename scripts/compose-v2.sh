#!/usr/bin/env bash
# Installs Docker Compose v2 as the docker CLI plugin, so `docker compose` runs the project's docker-compose.yml as
# users run it. No release binary is reachable here, and Debian's docker-compose (1.29) rejects the file's top-level
# `name`: the plugin is built from its Go module at a pinned version with the machine's Go, once, into a cache outside
# the checkout keyed by that version (as scripts/node-lts.sh caches Node), so a warm run (and CI's fresh clone)
# builds nothing. Prints the plugin's path.
#   SQUEEZE_COMPOSE_CACHE   the cache folder (default ~/.cache/squeeze/compose)
#   DOCKER_CONFIG           the docker CLI's config folder, whose cli-plugins/ gets the plugin (default ~/.docker)
set -euo pipefail

# The newest release the Go module proxy serves. Its client library negotiates the API version down to the
# engine's, so Debian's docker.io engine serves it.
SQUEEZE_COMPOSE_VERSION=v2.40.3

cache="${SQUEEZE_COMPOSE_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/squeeze/compose}"
dir="$cache/$SQUEEZE_COMPOSE_VERSION"
bin="$dir/docker-compose"

if [ ! -x "$bin" ]; then
  command -v go >/dev/null || { echo "compose-v2: Go is needed to build Docker Compose" >&2; exit 1; }
  echo "compose-v2: building Docker Compose $SQUEEZE_COMPOSE_VERSION from its Go module into $dir" >&2
  mkdir -p "$cache"
  tmp="$(mktemp -d "$cache/.build.XXXXXX")"
  trap 'rm -rf "$tmp"' EXIT
  # `go install pkg@version` refuses the module (its go.mod has exclude directives): its source, fetched and checked
  # against the checksum database by `go mod download`, is built as the main module instead.
  src="$(cd "$tmp" && GOFLAGS= go mod download -json "github.com/docker/compose/v2@$SQUEEZE_COMPOSE_VERSION" \
    | sed -n 's/^\t"Dir": "\(.*\)",$/\1/p')"
  [ -d "$src" ] || { echo "compose-v2: go mod download gave no source folder" >&2; exit 1; }
  cp -R "$src" "$tmp/src" && chmod -R u+w "$tmp/src"
  # As compose's own Makefile and Dockerfile build it: static (no cgo), trimmed paths, the version stamped in.
  # nice: the build shares the machine's cores with whatever else runs. GOFLAGS is cleared: a machine-wide -mod or
  # -tags setting would change what gets built.
  (cd "$tmp/src" && CGO_ENABLED=0 GOFLAGS= nice -n 15 go build -trimpath -o "$tmp/cmd" \
    -ldflags "-s -w -X github.com/docker/compose/v2/internal.Version=$SQUEEZE_COMPOSE_VERSION" ./cmd)
  "$tmp/cmd" version >/dev/null
  mkdir -p "$dir"
  mv "$tmp/cmd" "$bin.partial" && mv "$bin.partial" "$bin"
fi

plugins="${DOCKER_CONFIG:-$HOME/.docker}/cli-plugins"
mkdir -p "$plugins"
if [ "$(readlink "$plugins/docker-compose" 2>/dev/null)" != "$bin" ]; then
  ln -sfn "$bin" "$plugins/docker-compose"
fi
echo "$plugins/docker-compose"
