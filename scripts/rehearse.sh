#!/usr/bin/env bash
# The deploy rehearsal. Needs `make services` (Postgres, the SQS-compatible server).
#   scripts/rehearse.sh        build the release binaries with cargo-lambda (x86_64, as
#                              lambda-smoke does), `sam build` for arm64 when this machine can,
#                              then the rehearsal and its tests
#   scripts/rehearse.sh fast   the rehearsal and its tests on the bootstraps lambda-smoke laid
#                              out (what `make test` runs: the test profile's build)
source "$(dirname "$0")/lib.sh"
cd "$ROOT"

TOOLS="$("$ROOT/scripts/tools.sh")"
export PATH="$TOOLS:$PATH" AITASK_TOOLS_BIN="$TOOLS"
export SAM_CLI_TELEMETRY=0 AWS_DEFAULT_REGION=us-east-1

sam_build_arm64() {
  if ! rustup target list --installed 2>/dev/null | grep -qx aarch64-unknown-linux-gnu; then
    log "sam build (arm64): skipped: the aarch64-unknown-linux-gnu standard library is not installed,"
    log "  and rustup cannot fetch it on a machine that reaches only the package registries."
    log "  Where it can: rustup target add aarch64-unknown-linux-gnu && make rehearse"
    return 0
  fi
  log "sam build (arm64, cargo-lambda with zig) into target/sam"
  local started=$SECONDS
  SAM_CLI_BETA_RUST_CARGO_LAMBDA=1 sam build --template template.yaml --build-dir target/sam --beta-features >&2
  for fn in CreateTaskFunction ProcessTaskFunction SweeperFunction ReleaseDeleteFunction MigrateFunction IntakeTaskFunction ConsoleFunction; do
    file "target/sam/$fn/bootstrap" | grep -q aarch64 || { log "$fn is not an arm64 binary"; exit 1; }
  done
  log "sam build (arm64) took $((SECONDS - started)) s"
}

if [ "${1:-}" != "fast" ]; then
  log "cargo lambda build --release (every function)"
  cargo lambda build --release -p create-task -p process-task -p sweeper -p release-delete -p migrate -p intake-task -p web-console 2>&1 \
    | grep -vE '^\s+(Compiling|Checking|Downloaded|Downloading)' >&2
  sam_build_arm64
fi

load_local_env
# Fast: the bootstraps lambda-smoke laid out (the test profile, unless it built the release).
if [ "${1:-}" = "fast" ] && [ -z "${AITASK_LAMBDA_DIR:-}" ] && [ "${AITASK_LAMBDA_BUILD:-test}" != release ]; then
  export AITASK_LAMBDA_DIR="$(target_dir)/lambda-test"
fi
# The rehearsal and its tests as the harness's whole build makes them (lib.sh, workspace_executables).
executables="$(workspace_executables harness/rehearse)"
rehearsal="$(sed -n 's|^bin \(.*/aitasks-rehearse\)$|\1|p' <<<"$executables")"
[ -n "$rehearsal" ] || { log "the build made no aitasks-rehearse binary"; exit 1; }
"$rehearsal"
while read -r kind executable; do
  [ "$kind" = test ] || continue
  (cd "$ROOT/harness/rehearse" && "$executable" -q)
done <<<"$executables"
