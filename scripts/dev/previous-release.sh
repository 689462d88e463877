#!/usr/bin/env bash
# The previous release's pricesvc and its migrations/, built from git once and cached by commit, for the
# rolling-upgrade test (integration/e2e/test_upgrade.py: the old binary serves beside the new one, and its
# migrate is refused). Prints the directory holding `pricesvc` and `migrations/`.
#
#   scripts/dev/previous-release.sh [COMMIT]   (default: PREVIOUS_RELEASE below)
#
# A release build takes minutes. A commit never changes, so its result is kept in a cache that every clone on
# this machine shares, $PRICESVC_CACHE_DIR/previous-release/COMMIT/ (default ~/.cache/pricesvc), until removed.
# Concurrent callers (make test starts it in the background; the test asks for it) build it once.
# Bump PREVIOUS_RELEASE to the last released commit when cutting a release (docs/upgrading.md).
set -euo pipefail
cd "$(dirname "$0")/../.."
PREVIOUS_RELEASE=f581074d35ee75ebb5b874a352da05f6db2315f4  # main before schema versions
commit=$(git rev-parse --verify "${1:-$PREVIOUS_RELEASE}^{commit}")
cache=${PRICESVC_CACHE_DIR:-${XDG_CACHE_HOME:-$HOME/.cache}/pricesvc}/previous-release
mkdir -p "$cache"
out=$cache/$commit
exec 9>"$cache/.$commit.lock"
flock 9
if [ -x "$out/pricesvc" ] && [ -d "$out/migrations" ]; then
  echo "$out"
  exit 0
fi
export PATH=/opt/swift/usr/bin:$PATH
work=$cache/build-$commit
rm -rf "$work" "$out.partial"
mkdir -p "$work" "$out.partial"
git archive "$commit" | tar -x -C "$work"
# The sources' own Package.resolved pins the dependencies; the shared cache saves the download.
(cd "$work" && nice swift build -c release --product pricesvc 9>&- >&2)
cp "$work/.build/release/pricesvc" "$out.partial/pricesvc"
cp -r "$work/migrations" "$out.partial/migrations"
rm -rf "$work" "$out"
mv "$out.partial" "$out"
echo "$out"
