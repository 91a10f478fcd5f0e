#!/usr/bin/env bash
# cargo-lambda smoke test: build every function as a Lambda bootstrap (the test profile, into
# target/lambda-test; with AITASK_LAMBDA_BUILD=release, `cargo lambda build --release` into
# target/lambda), then serve them with `cargo lambda watch` and invoke each once with its event
# fixture from tests/fixtures/, checking the answer. Needs `make services` (Postgres, the SQS-compatible server).
source "$(dirname "$0")/lib.sh"
cd "$ROOT"

TOOLS="$("$ROOT/scripts/tools.sh")"
export PATH="$TOOLS:$PATH"

FUNCTIONS=(create-task process-task sweeper release-delete migrate intake-task web-console)
target_dir="$(target_dir)"
if [ "${AITASK_LAMBDA_BUILD:-test}" = release ]; then
  # What `make rehearse` ships: the release profile (fat LTO, one codegen unit), x86_64 Linux.
  log "cargo lambda build --release (every function)"
  cargo lambda build --release "${FUNCTIONS[@]/#/--package=}" 2>&1 | grep -vE '^\s+(Compiling|Checking|Downloaded|Downloading)' >&2
  lambda_dir="$target_dir/lambda"
else
  # `make test`: the same code in the test build's profile, linked from the dependencies the
  # tests compiled (the release build's fat LTO of six binaries is most of a bare CI run's time
  # on two cores; `make rehearse` builds and rehearses the release binaries).
  # The workspace's selection (`make build`'s, up to date after it): `-p` per function would
  # resolve the dependencies' features anew and link other binaries.
  log "cargo build (every function, the test profile) as Lambda bootstraps"
  cargo build -q --workspace --all-targets
  lambda_dir="$target_dir/lambda-test"
  for fn in "${FUNCTIONS[@]}"; do
    mkdir -p "$lambda_dir/$fn"
    cp -f "$target_dir/debug/$fn" "$lambda_dir/$fn/bootstrap"
  done
fi
for fn in "${FUNCTIONS[@]}"; do
  binary="$lambda_dir/$fn/bootstrap"
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
# The web console's page (template parameter Console), with its Content-Security-Policy.
invoke web-console apigw-console.json "default-src 'none'"
# The first record names a task that does not exist (acknowledged); the second is poison.
invoke process-task sqs-batch.json '"itemIdentifier":"fixture-poison"'
invoke sweeper eventbridge-schedule.json '"messagesSent"'
# A queue AITASK_INTAKE_TENANTS does not name takes nothing: the record is reported failed.
invoke intake-task sqs-intake.json '"itemIdentifier":"fixture-intake-unknown-queue"'
log "every function built with cargo lambda and answered its fixture"
