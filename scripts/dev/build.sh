#!/usr/bin/env bash
# The release binary, one definition for `make build`, `make test`, the benchmarks and the package:
# the Swift runtime and Foundation are linked in (--static-swift-stdlib), so the binary needs only
# Debian's libraries (libpq, libmicrohttpd, libssl, libc, …) and runs without the toolchain in /opt/swift.
# The commit comes from `git describe` (Plugins/BuildCommit), a prebuild command, which SwiftPM runs only
# when it plans the build again: --disable-build-manifest-caching makes it plan every time (about 2 s),
# else a new commit with no source change would keep the old commit in the binary.
# Extra arguments go to `swift build`.
set -euo pipefail
cd "$(dirname "$0")/../.."
export PATH=/opt/swift/usr/bin:$PATH
exec swift build -c release --product pricesvc --static-swift-stdlib --disable-build-manifest-caching "$@"
