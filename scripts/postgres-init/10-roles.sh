#!/bin/sh
# First start of an empty data volume only (the postgres image's /docker-entrypoint-initdb.d/): the
# roles and database of roles.psql, with the passwords compose passes in. On a volume made before
# this script existed, run the same by hand (docs/production.md, "Database roles").
set -eu
psql --username "$POSTGRES_USER" --dbname "$POSTGRES_DB" \
  -v app_role=shiri -v app_database=shiri -v app_password="$SHIRI_DB_PASSWORD" \
  -v exporter_role=shiri_exporter -v exporter_password="$EXPORTER_DB_PASSWORD" \
  -f /docker-entrypoint-initdb.d/roles.psql
