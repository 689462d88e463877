# Sourced by scripts/dev/pg-cluster.sh and scripts/topology/cluster.sh (they define PGBIN and die first).
# The migrations create PostGIS and pg_trgm (migrations/0023_places.sql): a server without them cannot be
# migrated, so say which package is missing before any cluster is made.
require_extensions() {
    local share
    share=$("$PGBIN/pg_config" --sharedir 2>/dev/null) || share=/usr/share/postgresql/15
    [ -f "$share/extension/postgis.control" ] ||
        die "PostGIS is missing from $share (apt-get install postgresql-15-postgis-3; scripts/dev/install-deps.sh installs it)"
    [ -f "$share/extension/pg_trgm.control" ] ||
        die "pg_trgm is missing from $share (apt-get install postgresql-contrib)"
}
