#!/usr/bin/env bash
# `make deb`: a Debian package of the built binary, with dpkg-deb alone (no debhelper, no debian/ tree).
# It is `make install PREFIX=/usr` into a staging root, plus what Debian asks of a package: a stripped
# binary, the copyright file, a changelog.gz, md5sums, dependencies from dpkg-shlibdeps, and a postinst
# that creates the pricesvc system user. Prints the path of the .deb on its last line.
# Usage: packaging/package-deb.sh [OUTDIR]   (default var/deb)
set -euo pipefail
cd "$(dirname "$0")/.."
out=$(realpath -m "${1:-var/deb}")
bin=.build/release/pricesvc
[ -x "$bin" ] || { echo "package-deb: no $bin: run make build first" >&2; exit 1; }

# The version is the binary's (BuildInfo.version), with the commit when the source is not that release's tag.
line=$("$bin" --version)                       # pricesvc 0.1.0 (commit f581074d35ee, Swift 6.3)
version=$(sed -n 's/^pricesvc \([0-9][^ ]*\) (commit \([^,]*\),.*/\1/p' <<<"$line")
commit=$(sed -n 's/^pricesvc \([0-9][^ ]*\) (commit \([^,]*\),.*/\2/p' <<<"$line")
[ -n "$version" ] || { echo "package-deb: cannot read the version from '$line'" >&2; exit 1; }
if [ "$commit" = "v$version" ]; then debversion=$version; else debversion="$version+git.${commit//-/.}"; fi
arch=$(dpkg --print-architecture)

stage=$(mktemp -d)
trap 'rm -rf "$stage"' EXIT
root=$stage/root
PREFIX=/usr DESTDIR=$root packaging/install.sh >/dev/null
strip --remove-section=.comment --remove-section=.note --strip-unneeded "$root/usr/bin/pricesvc"

# A manual page made of `pricesvc --help` (every command and setting), so `man pricesvc` works.
mkdir -p "$root/usr/share/man/man1"
{
  printf '.TH PRICESVC 1 "" "pricesvc %s" "User Commands"\n.SH NAME\npricesvc \\- community-reported parking prices behind PostgreSQL row-level security\n' "$version"
  printf '.SH DESCRIPTION\n.nf\n'
  "$bin" --help | sed -e 's/\\/\\e/g' -e "s/^[.']/\\\\\&&/"
  printf '.fi\n.SH SEE ALSO\n/usr/share/doc/pricesvc/README.md, /usr/share/doc/pricesvc/docs/\n'
} | gzip -9n >"$root/usr/share/man/man1/pricesvc.1.gz"
# And one of `pricesvc-backup --help`.
{
  printf '.TH PRICESVC-BACKUP 1 "" "pricesvc %s" "User Commands"\n.SH NAME\npricesvc-backup \\- back up and restore pricesvc'"'"'s PostgreSQL with pgBackRest\n' "$version"
  printf '.SH DESCRIPTION\n.nf\n'
  "$root/usr/bin/pricesvc-backup" --help | sed -e 's/\\/\\e/g' -e "s/^[.']/\\\\\&&/"
  printf '.fi\n.SH SEE ALSO\n/usr/share/doc/pricesvc/docs/operations.md, pgbackrest(1)\n'
} | gzip -9n >"$root/usr/share/man/man1/pricesvc-backup.1.gz"

doc=$root/usr/share/doc/pricesvc
rm -f "$doc/LICENSE"
cat >"$doc/copyright" <<COPYRIGHT
Format: https://www.debian.org/doc/packaging-manuals/copyright-format/1.0/
Upstream-Name: pricesvc

Files: *
Copyright: 2026 the pricesvc contributors
License: Expat

License: Expat
$(sed -e 's/^$/./' -e 's/^/ /' LICENSE | tail -n +5)
COPYRIGHT
gzip -9n "$doc/CHANGELOG.md"
{
  echo "pricesvc ($debversion) unstable; urgency=medium"
  echo
  echo "  * Built from commit $commit."
  echo "  * The release notes are CHANGELOG.md.gz in this directory."
  echo
  echo " -- pricesvc maintainers <maintainers@pricesvc.invalid>  $(date -R -d "@${SOURCE_DATE_EPOCH:-$(git log -1 --format=%ct 2>/dev/null || date +%s)}")"
} | gzip -9n >"$doc/changelog.gz"

mkdir -p "$root/DEBIAN"
# dpkg-shlibdeps wants a debian/control to read; it only needs the package's name.
mkdir -p "$stage/debian"
printf 'Source: pricesvc\n\nPackage: pricesvc\nArchitecture: any\n' >"$stage/debian/control"
depends=$(cd "$stage" && dpkg-shlibdeps -O -e"$root/usr/bin/pricesvc" 2>/dev/null | sed -n 's/^shlibs:Depends=//p')
[ -n "$depends" ] || { echo "package-deb: dpkg-shlibdeps found no dependencies" >&2; exit 1; }
size=$(du -sk --exclude=DEBIAN "$root" | cut -f1)
cat >"$root/DEBIAN/control" <<CONTROL
Package: pricesvc
Version: $debversion
Architecture: $arch
Maintainer: pricesvc maintainers <maintainers@pricesvc.invalid>
Installed-Size: $size
Depends: adduser, $depends
Recommends: postgresql-15 | postgresql (>= 15), postgresql-15-postgis-3, pgbackrest, python3, curl
Section: net
Priority: optional
Description: community-reported parking prices behind PostgreSQL row-level security
 pricesvc is a self-hosted backend for community-reported parking prices. It
 speaks a subset of the PostgREST and Supabase Auth protocols, so the Supabase
 SDKs are its clients; PostgreSQL's row-level security is its security boundary.
 .
 This package holds the pricesvc binary (Swift runtime linked in), its SQL
 migrations in /usr/share/pricesvc/migrations, a hardened systemd unit, and
 pricesvc-backup (backups, their listing and restores with pgBackRest) with a
 systemd service and timers that schedule it.
CONTROL
echo /etc/pricesvc/pricesvc.env >"$root/DEBIAN/conffiles"
cat >"$root/DEBIAN/postinst" <<'POSTINST'
#!/bin/sh
set -e
if [ "$1" = configure ]; then
    if ! getent passwd pricesvc >/dev/null; then
        adduser --system --group --no-create-home --home /nonexistent --quiet pricesvc
    fi
fi
exit 0
POSTINST
chmod 0755 "$root/DEBIAN/postinst"
(cd "$root" && find . -path ./DEBIAN -prune -o -type f -printf '%P\0' | sort -z | grep -zv '^etc/' \
  | xargs -0 md5sum) >"$root/DEBIAN/md5sums"
chmod 0644 "$root/DEBIAN/control" "$root/DEBIAN/conffiles" "$root/DEBIAN/md5sums"

mkdir -p "$out"
deb=$out/pricesvc_${debversion}_$arch.deb
dpkg-deb --root-owner-group -Zgzip --build "$root" "$deb" >/dev/null
echo "$deb"
