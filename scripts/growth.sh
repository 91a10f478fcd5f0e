#!/usr/bin/env bash
# make growth: the tasks table at GROWTH_ROWS rows (100 million by default), generated with
# generate_series on a Postgres of its own, then every hot statement run through the store and
# its plan (EXPLAIN ANALYZE, BUFFERS, by auto_explain) written to docs/growth/.
#   GROWTH_ROWS=1000000   a smaller table (the plans are then written under target/growth)
#   GROWTH_KEEP=1         leave the cluster running with its data; a later run with the same
#                         GROWTH_ROWS skips the load (about 1 h and 55 GB at 100 million)
source "$(dirname "$0")/lib.sh"
rows="${GROWTH_ROWS:-100000000}"
export AITASK_PG_STATE=growth AITASK_PG_DURABLE=1 AITASK_PG_TLS=0
export AITASK_PG_DIR="/tmp/aitasks-pg-growth-$(printf '%s' "$ROOT" | md5sum | cut -c1-10)"
# wal_level = minimal: the load (one transaction that truncates first) writes no WAL.
# shared_buffers as a database server of this size would have it (the default is 128 MB).
export AITASK_PG_CONF="wal_level = minimal
max_wal_senders = 0
shared_buffers = 2GB
max_wal_size = 8GB
checkpoint_timeout = 30min
track_io_timing = on
log_line_prefix = '%m [%a] '
shared_preload_libraries = 'pg_stat_statements,auto_explain'"
# The growth cluster's variables go to a file of their own: .local/env is never edited.
export AITASK_ENV_FILE="$LOCAL/env.growth"
AITASK_PG_STATE=growth "$ROOT/scripts/postgres.sh" up
cleanup() {
  if [ "${GROWTH_KEEP:-0}" != "1" ]; then
    "$ROOT/scripts/postgres.sh" down
  fi
  rm -f "$AITASK_ENV_FILE"
}
trap cleanup EXIT
# From the port (a kept cluster is not written to .local/env again).
owner_url="postgres://postgres@127.0.0.1:$(cat "$LOCAL/pg-growth/port")/aitasks"
cd "$ROOT"
log "building the benchmark tool"
(cd harness && cargo build --release --quiet -p aitasks-bench)
out="docs/growth"
[ "$rows" = 100000000 ] || out="$(target_dir)/growth"
mkdir -p "$out"
DATABASE_URL="$owner_url" BENCH_ONLY=growth GROWTH_ROWS="$rows" GROWTH_OUT="$out" \
  GROWTH_LOAD_SQL="$ROOT/harness/bench/sql/growth_load.sql" GROWTH_PG_LOG="$AITASK_PG_DIR/server.log" \
  "$(target_dir)/release/aitasks-bench"
