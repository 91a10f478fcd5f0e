#!/usr/bin/env bash
# lib.sh's `locked`: the background warm-up and a target that needs the same install take the
# same lock, so the second waits for the first and then finds the work done (it runs once).
set -euo pipefail
here="$(cd "$(dirname "$0")/../.." && pwd)"
work="$(mktemp -d)"
trap 'rm -rf "$work"' EXIT
export AITASK_CACHE="$work/cache"
# The install both callers need: slow, counted, done once when the second sees the first's work.
install_once() (
  # shellcheck source=scripts/lib.sh
  source "$here/scripts/lib.sh"
  [ -f "$work/done" ] && exit 0
  locked demo
  [ -f "$work/done" ] && exit 0
  echo run >>"$work/runs"
  sleep 1
  touch "$work/done"
)
install_once &
first=$!
sleep 0.2
started=$SECONDS
install_once
waited=$((SECONDS - started))
[ -f "$work/done" ] || { echo "FAIL: the second caller returned before the first finished"; exit 1; }
wait "$first"
runs="$(wc -l <"$work/runs")"
[ "$runs" = 1 ] || { echo "FAIL: the install ran $runs times, not once"; exit 1; }
echo "ok: locked: two callers, one install (the second waited ${waited}s)"
