#!/usr/bin/env bash
# Provisions PostgreSQL 15 with pgvector on a fresh Debian machine of this kind and prints a
# TEST_DATABASE_URL on its last line. Idempotent: safe to run again on a machine that has it.
set -euo pipefail

PG_MAJOR=15
DB_USER=memory_test
DB_PASS=memory_test
DB_NAME=memory_test

export DEBIAN_FRONTEND=noninteractive
need_update=1
apt_update() { if [ "$need_update" = 1 ]; then apt-get update -qq >&2; need_update=0; fi; }

if ! command -v pg_ctlcluster >/dev/null || [ ! -d "/usr/lib/postgresql/$PG_MAJOR" ]; then
  apt_update
  apt-get install -y -qq "postgresql-$PG_MAJOR" >&2
fi

if [ ! -f "/usr/share/postgresql/$PG_MAJOR/extension/vector.control" ]; then
  # pgvector for PG 15 is not packaged for bookworm's PG; build it from Debian trixie's source package.
  if ! grep -rqs 'trixie' /etc/apt/sources.list.d/; then
    cat > /etc/apt/sources.list.d/trixie-src.sources <<'SRC'
Types: deb-src
URIs: http://deb.debian.org/debian
Suites: trixie
Components: main
Signed-By: /usr/share/keyrings/debian-archive-keyring.gpg
SRC
    need_update=1
  fi
  apt_update
  apt-get install -y -qq "postgresql-server-dev-$PG_MAJOR" build-essential dpkg-dev >&2
  build=$(mktemp -d)
  (cd "$build" && apt-get source -qq pgvector >&2 && cd pgvector-*/ \
     && make -s PG_CONFIG="/usr/lib/postgresql/$PG_MAJOR/bin/pg_config" >&2 \
     && make -s install PG_CONFIG="/usr/lib/postgresql/$PG_MAJOR/bin/pg_config" >&2)
  rm -rf "$build"
fi

if ! pg_lsclusters -h | awk '{print $1" "$2}' | grep -qx "$PG_MAJOR main"; then
  pg_createcluster "$PG_MAJOR" main >&2
fi
wait_until_ready() {
  for _ in $(seq 1 30); do
    pg_isready -q -h 127.0.0.1 -p 5432 && break
    sleep 1
  done
  pg_isready -h 127.0.0.1 -p 5432 >&2
}
pg_ctlcluster "$PG_MAJOR" main start >&2 2>/dev/null || true
wait_until_ready

# The buffer cache docs/deployment.md recommends and docker-compose.yml sets: bench/heavy-subject.ts's 100k subject
# fits in it, as on a tuned server.
if [ "$(su postgres -c "psql -Atqc 'show shared_buffers'")" != 1GB ]; then
  su postgres -c "psql -q -c \"alter system set shared_buffers = '1GB'\"" >&2
  pg_ctlcluster "$PG_MAJOR" main restart >&2
  wait_until_ready
fi

su postgres -c "psql -v ON_ERROR_STOP=1 -q" >&2 <<SQL
DO \$\$ BEGIN
  IF NOT EXISTS (SELECT FROM pg_roles WHERE rolname = '$DB_USER') THEN
    CREATE ROLE $DB_USER LOGIN PASSWORD '$DB_PASS';
  END IF;
END \$\$;
SELECT 'CREATE DATABASE $DB_NAME OWNER $DB_USER' WHERE NOT EXISTS (SELECT FROM pg_database WHERE datname = '$DB_NAME')\gexec
\c $DB_NAME
CREATE EXTENSION IF NOT EXISTS vector;
SQL

echo "postgres://$DB_USER:$DB_PASS@127.0.0.1:5432/$DB_NAME"
