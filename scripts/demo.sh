#!/usr/bin/env bash
# make demo: start what is not running (Postgres, the SQS-compatible server, the local model),
# run the dev server, drive it with the demo client, then stop everything this run started
# (DEMO_KEEP=1: keep the dev server, and its web console, up until Ctrl-C).
source "$(dirname "$0")/lib.sh"

started=()
running() { [ -f "$LOCAL/$1/pid" ] && kill -0 "$(cat "$LOCAL/$1/pid")" 2>/dev/null; }
pg_running() { [ -f "$LOCAL/pg/port" ] && pg_isready -q -h 127.0.0.1 -p "$(cat "$LOCAL/pg/port")" 2>/dev/null; }

pg_running || { "$ROOT/scripts/postgres.sh" up; started+=(postgres); }
running sqs || { "$ROOT/scripts/sqs.sh" up; started+=(sqs); }
running model || { "$ROOT/scripts/model.sh" up; started+=(model); }

cleanup() {
  [ -n "${server_pid:-}" ] && kill "$server_pid" 2>/dev/null && wait "$server_pid" 2>/dev/null
  for service in "${started[@]}"; do
    "$ROOT/scripts/$service.sh" down
  done
}
trap cleanup EXIT

cd "$ROOT"
# The build `make build` and `make test` make (the same selection, so the same features): after
# either, nothing compiles again. `-p aitasks-dev-server -p aitasks-demo` would resolve the
# dependencies' features for those two alone and compile dozens of crates a second time.
log "building the workspace as make build does (nothing to do after make test or make build)"
cargo build --quiet --workspace --all-targets
load_local_env
export AITASK_LOCAL_ADDR="127.0.0.1:$(free_port)"
export AITASK_SWEEP_INTERVAL_MS=5000 AITASK_LOCAL_POLL_WAIT_S=1 AITASK_CANCEL_POLL_MS=200
mkdir -p "$LOCAL/demo"
"$(target_dir)/debug/aitasks-dev-server" >"$LOCAL/demo/dev-server.log" 2>&1 &
server_pid=$!
for _ in $(seq 1 200); do
  curl -sf "http://$AITASK_LOCAL_ADDR/healthz" >/dev/null && break
  kill -0 "$server_pid" 2>/dev/null || { tail -20 "$LOCAL/demo/dev-server.log" >&2; exit 1; }
  sleep 0.1
done
# The web console shows the same tasks live, as the demo's tenant (docs/console-and-cli.md, "Console
# and CLI").
"$(target_dir)/debug/aitasks-dev-server" token demo-app >"$LOCAL/demo/token"
chmod 600 "$LOCAL/demo/token"
log "the web console: http://$AITASK_LOCAL_ADDR/console (sign in with the token in .local/demo/token)"
"$(target_dir)/debug/aitasks-demo"
log "dev server log: .local/demo/dev-server.log"
if [ "${DEMO_KEEP:-}" = 1 ]; then
  log "DEMO_KEEP=1: the dev server stays up for the console at http://$AITASK_LOCAL_ADDR/console until Ctrl-C"
  wait "$server_pid"
fi
