#!/usr/bin/env bash
# The benchmark's peer, graphile-worker, from npm through its lockfile
# (tools/bench/graphile/package-lock.json), installed once outside the clone: one folder of the
# cache per lockfile, so a changed lockfile installs anew and an unchanged one never does.
#   scripts/graphile.sh install   install when missing (scripts/warm.sh); prints the folder
#   scripts/graphile.sh dir       the folder (installed or not)
# The folder holds node_modules and run.mjs (copied from tools/bench/graphile at each install
# call, so an edited script runs without a reinstall).
source "$(dirname "$0")/lib.sh"

SOURCE="$ROOT/tools/bench/graphile"
dir() { echo "$AITASK_CACHE/graphile-worker-$(cat "$SOURCE/package.json" "$SOURCE/package-lock.json" | md5sum | cut -c1-12)"; }

# Installed once `npm ci` finished (the stamp), not once graphile-worker's own files are there.
install() (
  need_apt npm nodejs npm
  local target; target="$(dir)"
  if [ ! -f "$target/.installed" ]; then
    locked graphile
    if [ ! -f "$target/.installed" ]; then
      log "installing graphile-worker (tools/bench/graphile/package-lock.json) into $target"
      rm -rf "$target"
      mkdir -p "$target"
      cp "$SOURCE/package.json" "$SOURCE/package-lock.json" "$target/"
      (cd "$target" && npm ci --no-audit --no-fund --loglevel=error >/dev/null)
      touch "$target/.installed"
    fi
  fi
  cp "$SOURCE/run.mjs" "$target/run.mjs"
  echo "$target"
)

case "${1:-}" in
  install) install ;;
  dir) dir ;;
  *) echo "usage: $0 install|dir" >&2; exit 2 ;;
esac
