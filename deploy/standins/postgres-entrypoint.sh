#!/bin/sh
# The official image's first start, reduced: initdb with POSTGRES_PASSWORD, create POSTGRES_DB, listen on all addresses.
set -e
if [ ! -s "$PGDATA/PG_VERSION" ]; then
  pwfile=$(mktemp)
  printf '%s' "${POSTGRES_PASSWORD:?POSTGRES_PASSWORD is required}" > "$pwfile"
  initdb -D "$PGDATA" -U "${POSTGRES_USER:-postgres}" --pwfile="$pwfile" --auth-local=trust --auth-host=scram-sha-256 >/dev/null
  rm -f "$pwfile"
  echo "host all all all scram-sha-256" >> "$PGDATA/pg_hba.conf"
  pg_ctl -D "$PGDATA" -o "-c listen_addresses=''" -w start >/dev/null
  if [ -n "$POSTGRES_DB" ] && [ "$POSTGRES_DB" != postgres ]; then createdb -U "${POSTGRES_USER:-postgres}" "$POSTGRES_DB"; fi
  pg_ctl -D "$PGDATA" -m fast -w stop >/dev/null
fi
exec "$@" -c listen_addresses='*'
