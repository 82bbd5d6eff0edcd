#!/usr/bin/env bash
# Installs the Debian packages named as arguments that are not installed yet (machine set-up for the tests and
# benchmarks: kcat, docker.io, debootstrap, ...). Debian's package mirror is reachable here; other package
# managers are not. Waits for apt's lock instead of failing when another install holds it.
set -euo pipefail
missing=()
for pkg in "$@"; do
  dpkg-query -W -f='${Status}' "$pkg" 2>/dev/null | grep -q 'install ok installed' || missing+=("$pkg")
done
[ ${#missing[@]} -eq 0 ] && exit 0
if [ "$(id -u)" -ne 0 ]; then
  echo "ensure-apt: need root to install ${missing[*]} (apt-get install ${missing[*]})" >&2
  exit 1
fi
echo "ensure-apt: installing ${missing[*]}" >&2
apt_get() { DEBIAN_FRONTEND=noninteractive apt-get -o DPkg::Lock::Timeout=600 -qq "$@"; }
# A stale package list makes install fail on moved files; refresh once and retry.
apt_get install -y --no-install-recommends "${missing[@]}" >/dev/null \
  || { apt_get update >/dev/null && apt_get install -y --no-install-recommends "${missing[@]}" >/dev/null; }
