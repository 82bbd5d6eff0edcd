#!/usr/bin/env bash
# Prints the Debian mirror this machine's apt uses for SUITE (default bookworm): the first URI of an enabled
# `deb` source whose suite is exactly SUITE, read as apt reads them: /etc/apt/sources.list, then the *.list
# (one-line) and *.sources (deb822) files in /etc/apt/sources.list.d/ in name order; other file names are ignored.
# SQUEEZE_APT_ROOT replaces /etc/apt (the tests point it at sample files). Exits 1 with a one-line reason when no
# source serves SUITE.
set -euo pipefail
suite="${1:-bookworm}"
root="${SQUEEZE_APT_ROOT:-/etc/apt}"

files=()
[ -f "$root/sources.list" ] && files+=("$root/sources.list")
if [ -d "$root/sources.list.d" ]; then
  while IFS= read -r f; do files+=("$f"); done < <(find "$root/sources.list.d" -maxdepth 1 -type f \
    \( -name '*.list' -o -name '*.sources' \) | LC_ALL=C sort)
fi

mirror=""
for f in "${files[@]}"; do
  case "$f" in
    *.sources) program='
      function flush() {
        if (types ~ /(^| )deb( |$)/ && (" " suites " ") ~ (" " suite " ") && enabled != "no" && uris != "") {
          split(uris, u, " "); print u[1]; found = 1; exit
        }
        types = ""; suites = ""; uris = ""; enabled = ""; field = ""
      }
      /^#/ { next }
      /^[ \t]*$/ { flush(); next }
      /^[ \t]/ { if (field == "uris") uris = uris " " $0; else if (field == "suites") suites = suites " " $0; next }
      {
        field = tolower(substr($0, 1, index($0, ":") - 1)); value = substr($0, index($0, ":") + 1)
        gsub(/^[ \t]+|[ \t]+$/, "", value)
        if (field == "types") types = value; else if (field == "suites") suites = value
        else if (field == "uris") uris = value; else if (field == "enabled") enabled = tolower(value)
      }
      END { if (!found) flush() }' ;;
    *) program='
      { sub(/#.*/, "") }
      $1 == "deb" {
        i = 2
        if ($i ~ /^\[/) { while ($i !~ /\]$/ && i < NF) i++; i++ }
        if ($(i + 1) == suite) { print $i; exit }
      }' ;;
  esac
  mirror="$(awk -v suite="$suite" "$program" "$f")"
  [ -n "$mirror" ] && break
done

if [ -z "$mirror" ]; then
  echo "apt-mirror: no enabled deb source for Debian $suite in $root/sources.list or $root/sources.list.d/" >&2
  exit 1
fi
echo "${mirror%/}"
