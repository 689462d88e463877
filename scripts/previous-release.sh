#!/usr/bin/env bash
# The previous release's pricesvc and its migrations/, built from git once and cached by commit, for the
# rolling-upgrade test (tests/e2e/test_upgrade.py: the old binary serves beside the new one, and its
# migrate is refused). Prints the directory holding `pricesvc` and `migrations/`.
#
#   scripts/previous-release.sh [COMMIT]   (default: PREVIOUS_RELEASE below)
#
# A release build takes minutes; the result, var/previous-release/COMMIT/, is reused until removed.
# Bump PREVIOUS_RELEASE to the last released commit when cutting a release (docs/upgrading.md).
set -euo pipefail
cd "$(dirname "$0")/.."
root=$(pwd -P)
PREVIOUS_RELEASE=f581074d35ee75ebb5b874a352da05f6db2315f4  # main before schema versions (issue 24)
commit=$(git rev-parse --verify "${1:-$PREVIOUS_RELEASE}^{commit}")
out=$root/var/previous-release/$commit
if [ -x "$out/pricesvc" ] && [ -d "$out/migrations" ]; then
  echo "$out"
  exit 0
fi
export PATH=/opt/swift/usr/bin:$PATH
work=$root/var/previous-release/build-$commit
rm -rf "$work" "$out.partial"
mkdir -p "$work" "$out.partial"
git archive "$commit" | tar -x -C "$work"
# The sources' own Package.resolved pins the dependencies; the shared cache saves the download.
(cd "$work" && nice swift build -c release --product pricesvc >&2)
cp "$work/.build/release/pricesvc" "$out.partial/pricesvc"
cp -r "$work/migrations" "$out.partial/migrations"
rm -rf "$work" "$out"
mv "$out.partial" "$out"
echo "$out"
