#!/usr/bin/env bash
# make bench: a Postgres of its own with the default (durable) settings, the SQS-compatible
# server, release builds of every function and the dev server, then the benchmarks.
#   BENCH_QUICK=1        short runs (CI-sized)
#   BENCH_SMOKE=1        every section at its smallest: figures that mean nothing, only that it
#                        runs (`make test` does this on the debug build: the bench_smoke test)
#   BENCH_TRIALS=n       how many times each lifecycle point runs, this system then the floor (3; 1
#                        in a quick or smoke run; at most 9); the trial of the median ratio is judged
#   BENCH_NO_BUILD=1     the release binaries already built, as they are (no cargo build)
#   BENCH_BIN_DIR=dir    the function binaries the footprint section runs (default: the release
#                        directory), e.g. a directory of links to target/lambda/<function>/bootstrap
#   BENCH_ONLY=a,b       only these sections: lifecycle, batches, round_trips, admission, e2e, reads (a tenant's
#                        100 summary readers beside another's workload), heartbeats, footprint,
#                        batch_results (a 100 MiB batch result file settled by the sweeper), graphile,
#                        operations (100,000 tasks replayed and canceled by filter), outage (a
#                        10-minute provider outage with 1,000 queued tasks), streams (live output: chunk to
#                        reader latency, a streamed task's rows, WAL and worker CPU beside a whole answer's),
#                        peers (the public cross-queue method, github.com/hardbyte/postgresql-job-queue-benchmarking:
#                        this system beside graphile-worker, pg-boss, procrastinate, awa and absurd, installed by
#                        scripts/peer.sh; pickup latency, sustained rate, dead tuples, chaos cells
#                        that restart this Postgres; about 30 minutes, 6 with BENCH_QUICK=1)
#   BENCH_PEERS=a,b      the peers section runs only these systems (aitasks, with the SQS hop;
#                        graphile-worker, pg-boss, procrastinate, awa, absurd)
#                        (make simulate: simulate; its fairness half alone: fairness)
source "$(dirname "$0")/lib.sh"
export AITASK_PG_DURABLE=1 AITASK_PG_TLS=0 AITASK_PG_DIR="/tmp/aitasks-pg-bench-$(printf '%s' "$ROOT" | md5sum | cut -c1-10)"
# The benchmarks' variables go to a file of their own: the dev stack's .local/env is never edited.
export AITASK_ENV_FILE="$LOCAL/env.bench"
cp "$LOCAL/env" "$AITASK_ENV_FILE" 2>/dev/null || : >"$AITASK_ENV_FILE"
sqs_started=0
[ -f "$LOCAL/sqs/pid" ] && kill -0 "$(cat "$LOCAL/sqs/pid")" 2>/dev/null || { "$ROOT/scripts/sqs.sh" up; sqs_started=1; }
AITASK_PG_STATE=bench "$ROOT/scripts/postgres.sh" up
cleanup() {
  AITASK_PG_STATE=bench "$ROOT/scripts/postgres.sh" down
  [ "$sqs_started" = 1 ] && "$ROOT/scripts/sqs.sh" down
  rm -f "$AITASK_ENV_FILE"
}
trap cleanup EXIT
# The benchmark cluster serves plain TCP: no CA file applies to it.
sed -i '/^export AITASK_DB_CA_FILE=/d' "$AITASK_ENV_FILE"
bench_url="$(unset AITASK_MIGRATE_DATABASE_URL; load_local_env; echo "$AITASK_MIGRATE_DATABASE_URL")"
cd "$ROOT"
if [ "${BENCH_NO_BUILD:-0}" = 1 ]; then
  log "BENCH_NO_BUILD=1: the release binaries as they are"
else
  log "building release binaries (the functions, the dev server, the benchmark tool)"
  cargo build --release --quiet -p aitasks-dev-server \
    -p create-task -p process-task -p sweeper -p release-delete -p migrate -p intake-task -p web-console
  # The benchmark tool is the harness's (harness/Cargo.toml): same target folder, same profile.
  (cd harness && cargo build --release --quiet -p aitasks-bench)
fi
release="$(target_dir)/release"
DATABASE_URL="$bench_url" BENCH_OUT="$(target_dir)/bench" BENCH_BIN_DIR="${BENCH_BIN_DIR:-$release}" \
  AITASK_DEV_SERVER_BIN="$release/aitasks-dev-server" "$release/aitasks-bench"
