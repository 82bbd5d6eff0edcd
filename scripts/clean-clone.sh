#!/usr/bin/env bash
# Clones the committed HEAD of this checkout into DEST (a new folder whose parent holds nothing else), so the
# suite can prove it needs nothing outside the repository: no shared/ folder beside it, no git-ignored file, no local edit.
# Refuses a dirty tree: an uncommitted or untracked file would otherwise be silently left out of the proof.
#   bash scripts/clean-clone.sh DEST        (in the checkout to clone) prints DEST's absolute path on success
set -euo pipefail
cd "$(git rev-parse --show-toplevel)"

DEST="${1:?usage: scripts/clean-clone.sh DEST}"
if [ -n "$(git status --porcelain)" ]; then
  echo "clean-clone: refusing: the working tree has uncommitted or untracked files, which a clean clone would leave out:" >&2
  git status --porcelain | head -n 20 >&2
  echo "clean-clone: commit or stash them, or run without CI=true / SQUEEZE_TEST_IN_CLEAN_CLONE=1" >&2
  exit 1
fi
if [ -e "$DEST" ]; then
  echo "clean-clone: $DEST already exists" >&2
  exit 1
fi
head="$(git rev-parse HEAD)"
mkdir -p "$(dirname "$DEST")"
git clone --quiet --no-checkout --no-hardlinks "$PWD" "$DEST"
# HEAD may be detached on no branch (as in CI): fetch it by name rather than hope a branch carries it.
git -C "$DEST" fetch --quiet "$PWD" HEAD
git -C "$DEST" checkout --quiet --detach "$head"
DEST="$(cd "$DEST" && pwd)"
if [ -e "$(dirname "$DEST")/shared" ]; then
  echo "clean-clone: $(dirname "$DEST")/shared exists; pick a DEST whose parent holds no shared/ folder" >&2
  exit 1
fi
echo "$DEST"
