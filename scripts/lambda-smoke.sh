#!/usr/bin/env bash
# cargo-lambda smoke test: build every function with `cargo lambda build --release`, then serve
# them with `cargo lambda watch` and invoke each once with its event fixture from
# tests/fixtures/, checking the answer. Needs `make up` (Postgres, the SQS-compatible server).
source "$(dirname "$0")/lib.sh"
cd "$ROOT"

TOOLS="$("$ROOT/scripts/tools.sh")"
export PATH="$TOOLS:$PATH"

log "cargo lambda build --release (every function)"
cargo lambda build --release -p create-task -p process-task -p sweeper -p release-delete -p migrate -p intake-task 2>&1 | grep -vE '^\s+(Compiling|Checking|Downloaded|Downloading)' >&2
target_dir="$(target_dir)"
for fn in create-task process-task sweeper release-delete migrate intake-task; do
  binary="$target_dir/lambda/$fn/bootstrap"
  [ -x "$binary" ] || { log "missing $binary"; exit 1; }
  log "$fn: $(du -h "$binary" | cut -f1) ($binary)"
done

load_local_env
# A database of its own, migrated, so the invocations see a real schema.
smoke_db="aitasks_lambda_smoke"
admin_url="${AITASK_MIGRATE_DATABASE_URL%/*}/postgres"
psql "$admin_url" -qc "DROP DATABASE IF EXISTS $smoke_db" -c "CREATE DATABASE $smoke_db" >/dev/null
export DATABASE_URL="${DATABASE_URL%/*}/$smoke_db"
export AITASK_MIGRATE_DATABASE_URL="${AITASK_MIGRATE_DATABASE_URL%/*}/$smoke_db"
"$target_dir/debug/aitasks-dev-server" migrate
export OPENAI_BASE_URL="${OPENAI_BASE_URL:-http://127.0.0.1:9/v1}"

port="$(free_port)"
watch_log="$LOCAL/lambda-watch.log"
cargo lambda watch -A 127.0.0.1 -P "$port" >"$watch_log" 2>&1 &
watch_pid=$!
trap 'kill $watch_pid 2>/dev/null; wait $watch_pid 2>/dev/null' EXIT
for _ in $(seq 1 300); do
  curl -s -o /dev/null "http://127.0.0.1:$port/" && break
  sleep 0.2
done

invoke() {
  local fn="$1" fixture="$2" expect="$3" out
  out="$(cargo lambda invoke "$fn" -A 127.0.0.1 -P "$port" --data-file "tests/fixtures/$fixture" 2>&1)" || {
    log "$fn: invoke failed: $out"; tail -30 "$watch_log" >&2; exit 1; }
  if ! grep -q -- "$expect" <<<"$out"; then
    log "$fn: expected $expect in: $out"; exit 1
  fi
  log "$fn: ok ($fixture -> ${out:0:160})"
}

invoke create-task apigw-create-run.json '"statusCode":201'
invoke release-delete apigw-unreleased-sources.json '"statusCode":200'
# The first record names a task that does not exist (acknowledged); the second is poison.
invoke process-task sqs-batch.json '"itemIdentifier":"fixture-poison"'
invoke sweeper eventbridge-schedule.json '"messagesSent"'
# A queue AITASK_INTAKE_TENANTS does not name takes nothing: the record is reported failed.
invoke intake-task sqs-intake.json '"itemIdentifier":"fixture-intake-unknown-queue"'
log "every function built with cargo lambda and answered its fixture"
