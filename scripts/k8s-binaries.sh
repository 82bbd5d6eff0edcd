#!/usr/bin/env bash
# Builds (once) the Kubernetes binaries that scripts/k8s-cluster.sh runs, from the wrapper module tools/k8s, into a
# cache outside the checkout keyed by version, as scripts/node-lts.sh does for Node: no release download site is
# reachable here, the Go module proxy is. Prints the folder that holds the binaries.
#   scripts/k8s-binaries.sh          build what is missing, print the bin folder
#   scripts/k8s-binaries.sh --dir    print the bin folder only (exit 1 when a binary is missing)
# SQUEEZE_K8S_CACHE overrides the cache root; the build runs under `nice` because the machine is shared.
set -euo pipefail
root="$(cd "$(dirname "$0")/.." && pwd)"
module="$root/tools/k8s"
version="$(awk '$1 == "k8s.io/kubernetes" && $2 ~ /^v/ { print $2 }' "$module/go.mod")"
[ -n "$version" ] || { echo "k8s-binaries: no k8s.io/kubernetes version in $module/go.mod" >&2; exit 1; }
cache="${SQUEEZE_K8S_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/squeeze/k8s}"
bin="$cache/$version/bin"
commands=(kube-apiserver kube-controller-manager kube-scheduler kubelet kubectl kube-proxy)

have_all() {
  local c
  for c in "${commands[@]}"; do [ -x "$bin/$c" ] || return 1; done
}

if [ "${1:-}" = "--dir" ]; then
  have_all || exit 1
  echo "$bin"
  exit 0
fi

if ! have_all; then
  command -v go >/dev/null || { echo "k8s-binaries: go is not installed" >&2; exit 1; }
  mkdir -p "$cache/$version"
  tmp="$(mktemp -d "$cache/$version/.build.XXXXXX")"
  chmod 755 "$tmp"
  trap 'rm -rf "$tmp"' EXIT
  # Version stamps as Kubernetes' hack/lib/version.sh sets them: the API server, the kubelet's node status and
  # kubectl's skew check read them.
  minor="${version#v1.}"
  minor="${minor%%.*}"
  stamps=""
  for pkg in k8s.io/component-base/version k8s.io/client-go/pkg/version; do
    stamps+=" -X $pkg.gitVersion=$version -X $pkg.gitMajor=1 -X $pkg.gitMinor=$minor -X $pkg.gitTreeState=clean"
  done
  echo "k8s-binaries: building Kubernetes $version (${commands[*]}) into $bin" >&2
  start=$(date +%s)
  (cd "$module" && CGO_ENABLED=0 nice -n 15 go build -trimpath -ldflags "-s -w$stamps" \
    -o "$tmp/" "${commands[@]/#/k8s.io/kubernetes/cmd/}")
  rm -rf "$bin"
  mv "$tmp" "$bin"
  trap - EXIT
  echo "k8s-binaries: built in $(($(date +%s) - start)) s, $(du -sh "$bin" | cut -f1) in $bin" >&2
fi
echo "$bin"
