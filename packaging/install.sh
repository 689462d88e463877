#!/usr/bin/env bash
# `make install PREFIX=/usr/local DESTDIR=`: the built binary, its migrations, the systemd unit, the
# backup tool pricesvc-backup (its code in PREFIX/lib/pricesvc) with its service and timers, the
# sysusers.d entry of its dedicated user, an example settings file (never over an existing one) and the
# docs. PREFIX=/usr puts configuration in /etc and the unit in /lib/systemd/system (Debian's places);
# any other prefix keeps everything under it. SYSCONFDIR and UNITDIR override those two.
# The binary finds the migrations as PREFIX/bin/../share/pricesvc/migrations (docs/packaging.md).
set -euo pipefail
cd "$(dirname "$0")/.."
prefix=${PREFIX:-/usr/local}
destdir=${DESTDIR:-}
case "$prefix" in /*) ;; *) echo "install: PREFIX must be an absolute path, got '$prefix'" >&2; exit 2 ;; esac
if [ "$prefix" = /usr ]; then
  sysconfdir=${SYSCONFDIR:-/etc}; unitdir=${UNITDIR:-/lib/systemd/system}
else
  sysconfdir=${SYSCONFDIR:-$prefix/etc}; unitdir=${UNITDIR:-$prefix/lib/systemd/system}
fi
bin=.build/release/pricesvc
[ -x "$bin" ] || { echo "install: no $bin: run make build first" >&2; exit 1; }

root=$destdir$prefix
install -d -m 0755 "$root/bin" "$root/share/pricesvc/migrations" "$root/share/doc/pricesvc" \
  "$root/lib/sysusers.d" "$root/lib/pricesvc" "$destdir$unitdir" "$destdir$sysconfdir/pricesvc"
install -m 0755 "$bin" "$root/bin/pricesvc"
# The SQL files, the schema version (VERSION) and the superseded checksums (superseded.txt): the migrator
# reads all three (docs/upgrading.md). A file removed from migrations/ must not linger.
rm -f "$root/share/pricesvc/migrations/"*.sql "$root/share/pricesvc/migrations/VERSION" \
  "$root/share/pricesvc/migrations/superseded.txt"
install -m 0644 migrations/*.sql migrations/VERSION migrations/superseded.txt "$root/share/pricesvc/migrations/"
sed -e "s|@BINDIR@|$prefix/bin|g" -e "s|@SYSCONFDIR@|$sysconfdir|g" -e "s|@DOCDIR@|$prefix/share/doc/pricesvc|g" packaging/pricesvc.service.in \
  > "$destdir$unitdir/pricesvc.service"
chmod 0644 "$destdir$unitdir/pricesvc.service"
# pricesvc-backup and the code it shares with scripts/dev/backup.sh and scripts/topology/cluster.sh. backup-info.py is
# run as `python3 FILE`, a part of the tool rather than a program: installed without its #! line.
sed -e '1s|^#!/usr/bin/env bash$|#!/bin/bash|' scripts/ops/pricesvc-backup >"$root/bin/pricesvc-backup"
chmod 0755 "$root/bin/pricesvc-backup"
install -m 0644 scripts/ops/backup-lib.sh "$root/lib/pricesvc/backup-lib.sh"
sed -e '1{/^#!/d}' scripts/ops/backup-info.py >"$root/lib/pricesvc/backup-info.py"
chmod 0644 "$root/lib/pricesvc/backup-info.py"
sed -e "s|@BINDIR@|$prefix/bin|g" -e "s|@SYSCONFDIR@|$sysconfdir|g" -e "s|@DOCDIR@|$prefix/share/doc/pricesvc|g" \
  packaging/pricesvc-backup@.service.in >"$destdir$unitdir/pricesvc-backup@.service"
chmod 0644 "$destdir$unitdir/pricesvc-backup@.service"
install -m 0644 packaging/pricesvc-backup-full.timer packaging/pricesvc-backup-incr.timer "$destdir$unitdir/"
install -m 0644 packaging/pricesvc.sysusers "$root/lib/sysusers.d/pricesvc.conf"
[ -e "$destdir$sysconfdir/pricesvc/pricesvc.env" ] || install -m 0600 packaging/pricesvc.env "$destdir$sysconfdir/pricesvc/pricesvc.env"
install -m 0644 README.md CHANGELOG.md LICENSE "$root/share/doc/pricesvc/"
install -d -m 0755 "$root/share/doc/pricesvc/docs"
install -m 0644 docs/*.md docs/alerts.yml docs/grafana-dashboard.json "$root/share/doc/pricesvc/docs/"
echo "installed: $root/bin/pricesvc, $root/bin/pricesvc-backup, $root/share/pricesvc/migrations, $destdir$unitdir/pricesvc.service, pricesvc-backup@.service and its timers"
