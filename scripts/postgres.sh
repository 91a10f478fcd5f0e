#!/usr/bin/env bash
# Start or stop a throwaway PostgreSQL cluster for development and tests.
#   scripts/postgres.sh up     install when missing, start on a free port, write DATABASE_URL
#                              (the functions' role) and AITASK_MIGRATE_DATABASE_URL (the owner)
#   scripts/postgres.sh down   stop it and delete its data
#   scripts/postgres.sh install  only install the server when missing (scripts/warm.sh)
# The server refuses to run as root, so it runs as the `postgres` user.
source "$(dirname "$0")/lib.sh"

# The cluster lives outside the clone: the server runs as the `postgres` user, which may not be
# able to reach a clone under a private home folder. One cluster per clone.
PG_ROOT="${AITASK_PG_DIR:-/tmp/aitasks-pg-$(printf '%s' "$ROOT" | md5sum | cut -c1-10)}"
# A second cluster (the benchmarks') keeps its state apart: AITASK_PG_STATE=bench.
STATE_DIR="$LOCAL/pg${AITASK_PG_STATE:+-$AITASK_PG_STATE}"
PGDATA_DIR="$PG_ROOT/data"
PGSOCK_DIR="$PG_ROOT/sock"

pg_bin() {
  local dir
  for dir in /usr/lib/postgresql/*/bin; do
    [ -x "$dir/pg_ctl" ] && { echo "$dir"; return; }
  done
  return 1
}

# From / so that a clone the postgres user cannot enter (a private /tmp folder) does not matter.
as_postgres() { (cd / && runuser -u postgres -- "$@"); }

install() (
  locked apt
  pg_bin >/dev/null || apt_get_install postgresql postgresql-contrib
)

up() {
  if [ -f "$STATE_DIR/port" ] && [ -f "$PGDATA_DIR/postmaster.pid" ] \
    && as_postgres "$(pg_bin)/pg_ctl" -D "$PGDATA_DIR" status >/dev/null 2>&1; then
    log "already running on port $(cat "$STATE_DIR/port")"
    return
  fi
  install
  local bin; bin="$(pg_bin)"
  id postgres >/dev/null 2>&1 || useradd --system --home /var/lib/postgresql postgres
  rm -rf "$STATE_DIR" "$PG_ROOT"
  mkdir -p "$STATE_DIR" "$PGDATA_DIR" "$PGSOCK_DIR"
  chmod 755 "$PG_ROOT"
  chown -R postgres "$PG_ROOT"
  as_postgres "$bin/initdb" -D "$PGDATA_DIR" -U postgres -A trust -E UTF8 --no-instructions >/dev/null
  # TLS as in AWS: a throwaway CA and a server certificate for 127.0.0.1, so every local
  # connection (sslmode=prefer) goes through rustls with certificate verification.
  # AITASK_PG_TLS=0 leaves it off (the benchmarks compare plain connections).
  if [ "${AITASK_PG_TLS:-1}" = "1" ]; then
    local tls="$PG_ROOT/tls"
    mkdir -p "$tls"
    openssl req -x509 -newkey rsa:2048 -nodes -days 3650 -subj "/CN=aitasks local CA" \
      -keyout "$tls/ca.key" -out "$tls/ca.crt" \
      -addext "basicConstraints=critical,CA:TRUE" -addext "keyUsage=critical,keyCertSign,cRLSign" 2>/dev/null
    openssl req -newkey rsa:2048 -nodes -subj "/CN=127.0.0.1" -keyout "$tls/server.key" -out "$tls/server.csr" 2>/dev/null
    printf 'subjectAltName=IP:127.0.0.1,DNS:localhost\nbasicConstraints=CA:FALSE\nkeyUsage=digitalSignature,keyEncipherment\nextendedKeyUsage=serverAuth\n' >"$tls/server.ext"
    openssl x509 -req -in "$tls/server.csr" -CA "$tls/ca.crt" -CAkey "$tls/ca.key" -CAcreateserial \
      -days 3650 -out "$tls/server.crt" -extfile "$tls/server.ext" 2>/dev/null
    chown postgres "$tls/server.key" "$tls/server.crt"
    chmod 600 "$tls/server.key"
    chmod 644 "$tls/ca.crt"
  fi
  local port; port="$(free_port)"
  {
    echo "listen_addresses = '127.0.0.1'"
    echo "port = $port"
    echo "unix_socket_directories = '$PGSOCK_DIR'"
    echo "max_connections = 300"
    echo "shared_preload_libraries = 'pg_stat_statements'"
    echo "pg_stat_statements.track_utility = on"
    if [ "${AITASK_PG_TLS:-1}" = "1" ]; then
      echo "ssl = on"
      echo "ssl_cert_file = '$PG_ROOT/tls/server.crt'"
      echo "ssl_key_file = '$PG_ROOT/tls/server.key'"
    fi
    # Throwaway cluster: durability is not needed, speed is. Benchmarks set AITASK_PG_DURABLE=1.
    if [ "${AITASK_PG_DURABLE:-0}" != "1" ]; then
      echo "fsync = off"
      echo "synchronous_commit = off"
      echo "full_page_writes = off"
    fi
    # Extra settings, one per line, for a cluster with a job of its own (scripts/growth.sh).
    [ -z "${AITASK_PG_CONF:-}" ] || printf '%s\n' "$AITASK_PG_CONF"
  } >>"$PGDATA_DIR/postgresql.conf"
  # The functions' login (as in AWS): a password checked with SCRAM, and only the data
  # privileges of the `aitasks_app` group role (migrations/V4). Everyone else is trusted.
  local app_password; app_password="$(openssl rand -hex 16)"
  { echo "host all aitasks_fn 127.0.0.1/32 scram-sha-256"; cat "$PGDATA_DIR/pg_hba.conf"; } >"$PGDATA_DIR/pg_hba.new"
  mv "$PGDATA_DIR/pg_hba.new" "$PGDATA_DIR/pg_hba.conf"
  chown postgres "$PGDATA_DIR/pg_hba.conf"
  as_postgres "$bin/pg_ctl" -D "$PGDATA_DIR" -l "$PG_ROOT/server.log" -w -t 30 start >/dev/null
  echo "$port" >"$STATE_DIR/port"
  as_postgres "$bin/psql" -h 127.0.0.1 -p "$port" -U postgres -q \
    -c "DO \$\$ BEGIN IF NOT EXISTS (SELECT 1 FROM pg_roles WHERE rolname = 'aitasks_app') THEN CREATE ROLE aitasks_app NOLOGIN; END IF; END \$\$" \
    -c "CREATE ROLE aitasks_fn LOGIN PASSWORD '$app_password' IN ROLE aitasks_app" >/dev/null
  env_set DATABASE_URL "postgres://aitasks_fn:$app_password@127.0.0.1:$port/aitasks"
  env_set AITASK_MIGRATE_DATABASE_URL "postgres://postgres@127.0.0.1:$port/aitasks"
  if [ "${AITASK_PG_TLS:-1}" = "1" ]; then
    env_set AITASK_DB_CA_FILE "$PG_ROOT/tls/ca.crt"
  fi
  as_postgres "$bin/psql" -h 127.0.0.1 -p "$port" -U postgres -qc "CREATE DATABASE aitasks" >/dev/null
  log "PostgreSQL $("$bin/postgres" --version | awk '{print $3}') on 127.0.0.1:$port"
}

down() {
  if [ -d "$PGDATA_DIR" ] && pg_bin >/dev/null; then
    as_postgres "$(pg_bin)/pg_ctl" -D "$PGDATA_DIR" -m fast -w stop >/dev/null 2>&1 || true
  fi
  rm -rf "$STATE_DIR" "$PG_ROOT"
  log "stopped"
}

case "${1:-}" in
  install) install ;;
  up) up ;;
  down) down ;;
  restart)
    as_postgres "$(pg_bin)/pg_ctl" -D "$PGDATA_DIR" -l "$PG_ROOT/server.log" -m fast -w restart >/dev/null ;;
  *) echo "usage: $0 install|up|down|restart" >&2; exit 2 ;;
esac
