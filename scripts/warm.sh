#!/usr/bin/env bash
# `make test` starts this first. The slow one-time work that needs no Rust (the Python tools,
# the Debian packages, fauxqs, the local model's download and build) runs in the background while
# cargo lints and compiles, at a lower priority, so the build ahead of it keeps the cores it can
# use and this fills the rest (the downloads, the crates cargo builds one at a time). Each step
# takes the lock its own script takes (lib.sh, `locked`): a target that needs it sooner waits for
# it, then finds it done. On a warm cache every step is a check of seconds.
# Its output: .local/warm.log.
source "$(dirname "$0")/lib.sh"
cd "$ROOT"

nohup nice -n 10 bash -c 'scripts/tools.sh >/dev/null && scripts/postgres.sh install && scripts/sqs.sh install && scripts/chromium.sh install && { scripts/graphile.sh install >/dev/null || true; } && { scripts/client-ts.sh install || true; } && scripts/model.sh build' \
  >"$LOCAL/warm.log" 2>&1 </dev/null &
log "the tools, Postgres, fauxqs, Chromium and chromedriver (the console's browser tests), graphile-worker (the benchmark's peer), the TypeScript client's npm packages and the local model's build: in the background (.local/warm.log)"
