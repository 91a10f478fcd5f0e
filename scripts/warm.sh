#!/usr/bin/env bash
# `make test` starts this first. The slow one-time work that needs no Rust runs in the
# background while cargo lints and compiles, at a lower priority, so the build ahead of it keeps
# the cores it can use and this fills the rest. Two chains, side by side: the local model's
# build (llama-server, the longest of them: it starts at once, not behind the downloads, and
# only the last part of `make test`, `make local-model`, waits for it, so it also has the idle
# time of every other test to finish in), and the downloads and installs (the Python tools,
# schemathesis, the Debian packages, fauxqs, the benchmark's peers (graphile-worker, pg-boss,
# procrastinate, awa, absurd), the TypeScript client's npm
# packages). Each step takes the lock its own script takes (lib.sh, `locked`; the two chains
# share only apt's): a target that needs it sooner waits for it, then finds it done. On a warm
# cache every step is a check of seconds. Their output, interleaved: .local/warm.log.
source "$(dirname "$0")/lib.sh"
cd "$ROOT"

: >"$LOCAL/warm.log"
nohup nice -n 10 scripts/model.sh build >>"$LOCAL/warm.log" 2>&1 </dev/null &
nohup nice -n 10 bash -c 'scripts/tools.sh >/dev/null && { scripts/fuzz-tools.sh >/dev/null || true; } && scripts/postgres.sh install && scripts/sqs.sh install && scripts/chromium.sh install && { scripts/graphile.sh install >/dev/null || true; } && { scripts/peer.sh install pgboss >/dev/null || true; } && { scripts/peer.sh install procrastinate >/dev/null || true; } && { scripts/peer.sh install awa >/dev/null || true; } && { scripts/peer.sh install absurd >/dev/null || true; } && { scripts/client-ts.sh install || true; }' \
  >>"$LOCAL/warm.log" 2>&1 </dev/null &
log "the local model's build, and beside it the tools, schemathesis, Postgres, fauxqs, Chromium and its driver, the benchmark's peers (graphile-worker, pg-boss, procrastinate, awa, absurd) and the TypeScript client's npm packages: in the background (.local/warm.log)"
