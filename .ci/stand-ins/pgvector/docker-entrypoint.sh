#!/usr/bin/env bash
# Entrypoint of the pgvector/pgvector:pg17 stand-in. It honours what the official postgres image documents:
# POSTGRES_PASSWORD (required unless POSTGRES_HOST_AUTH_METHOD=trust), POSTGRES_USER (default postgres; the
# bootstrap superuser), POSTGRES_DB (default: the user's name), PGDATA, POSTGRES_INITDB_ARGS,
# POSTGRES_HOST_AUTH_METHOD (default scram-sha-256) and /docker-entrypoint-initdb.d/*.sql|*.sh, run once, when
# the data directory is empty. Runs postgres as the postgres user, as PID 1.
set -Eeuo pipefail

if [ "${1:0:1}" = '-' ]; then set -- postgres "$@"; fi

# `postgres --version` and the like only print: no data directory, no initialisation.
server=false
if [ "$1" = postgres ]; then
  server=true
  for arg in "$@"; do
    case "$arg" in -V | --version | -'?' | --help | --describe-config | -C) server=false ;; esac
  done
fi

if [ "$server" = true ] && [ "$(id -u)" = 0 ]; then
  mkdir -p "$PGDATA"
  chown postgres:postgres "$PGDATA"
  chmod 0700 "$PGDATA"
  exec setpriv --reuid=postgres --regid=postgres --init-groups "${BASH_SOURCE[0]}" "$@"
fi

if [ "$server" = true ] && [ ! -s "$PGDATA/PG_VERSION" ]; then
  : "${POSTGRES_USER:=postgres}"
  : "${POSTGRES_DB:=$POSTGRES_USER}"
  auth=${POSTGRES_HOST_AUTH_METHOD:-scram-sha-256}
  if [ -z "${POSTGRES_PASSWORD:-}" ] && [ "$auth" != trust ]; then
    echo >&2 'error: the database is uninitialized and POSTGRES_PASSWORD is not set (or set POSTGRES_HOST_AUTH_METHOD=trust)'
    exit 1
  fi
  # shellcheck disable=SC2086 # POSTGRES_INITDB_ARGS is a list of arguments, as in the official image.
  initdb --username="$POSTGRES_USER" --pwfile=<(printf '%s\n' "${POSTGRES_PASSWORD:-}") ${POSTGRES_INITDB_ARGS:-} -D "$PGDATA"
  printf '\nhost all all all %s\n' "$auth" >> "$PGDATA/pg_hba.conf"
  printf "\nlisten_addresses = '*'\n" >> "$PGDATA/postgresql.conf"

  # A private socket and no TCP while the database is made, so a health check (pg_isready on the usual
  # socket) and clients see the server only once it is complete.
  init_socket=$(mktemp -d)
  pg_ctl -D "$PGDATA" -o "-c listen_addresses='' -k $init_socket" -w start
  init_psql=(psql -v ON_ERROR_STOP=1 --no-psqlrc --host "$init_socket" --username "$POSTGRES_USER")
  if [ "$POSTGRES_DB" != postgres ]; then
    "${init_psql[@]}" --dbname postgres --set db="$POSTGRES_DB" <<<'CREATE DATABASE :"db";'
  fi
  for file in /docker-entrypoint-initdb.d/*; do
    case "$file" in
      *.sh) echo "running $file"; PGHOST=$init_socket PGUSER=$POSTGRES_USER PGDATABASE=$POSTGRES_DB bash "$file" ;;
      *.sql) echo "running $file"; "${init_psql[@]}" --dbname "$POSTGRES_DB" -f "$file" ;;
      *) ;;
    esac
  done
  pg_ctl -D "$PGDATA" -m fast -w stop
  rmdir "$init_socket"
  echo 'PostgreSQL init process complete; ready for start up.'
fi

exec "$@"
