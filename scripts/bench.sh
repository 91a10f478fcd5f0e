#!/usr/bin/env bash
# make bench: a Postgres of its own with the default (durable) settings, then the benchmarks.
source "$(dirname "$0")/lib.sh"
export AITASK_PG_DURABLE=1 AITASK_PG_TLS=0 AITASK_PG_DIR="/tmp/aitasks-pg-bench-$(printf '%s' "$ROOT" | md5sum | cut -c1-10)"
LOCAL_SAVED_ENV="$(cat "$LOCAL/env" 2>/dev/null || true)"
AITASK_PG_STATE=bench "$ROOT/scripts/postgres.sh" up
trap 'AITASK_PG_STATE=bench "$ROOT/scripts/postgres.sh" down; printf "%s\n" "$LOCAL_SAVED_ENV" > "$LOCAL/env"' EXIT
bench_url="$(grep '^export AITASK_MIGRATE_DATABASE_URL=' "$LOCAL/env" | cut -d= -f2-)"
cd "$ROOT"
cargo build --release --quiet -p aitasks-bench
DATABASE_URL="$bench_url" BENCH_OUT="$(target_dir)/bench" "$(target_dir)/release/aitasks-bench"
