#!/usr/bin/env bash
# The benchmark's peers (make bench's graphile and peers sections), each installed from its
# lockfile in harness/bench/<peer>/ once, outside the clone: one folder of the cache per lockfile,
# so a changed lockfile installs anew and an unchanged one never does.
#   scripts/peer.sh install PEER   install when missing (scripts/warm.sh); prints the folder
#   scripts/peer.sh dir PEER       the folder (installed or not)
# PEER is graphile, pgboss (npm: package.json + package-lock.json, `npm ci`), procrastinate, awa
# or absurd (PyPI: requirements.txt, every version pinned, into a venv; absurd's schema comes
# with its absurdctl, applied through psql). The folder also holds the peer's
# scripts (*.mjs, *.py), copied from harness/bench/<peer> at each install call, so an edited
# script runs without a reinstall.
source "$(dirname "$0")/lib.sh"

PEER="${2:-}"
case "$PEER" in
  graphile) NAME=graphile-worker ;;
  pgboss) NAME=pg-boss ;;
  procrastinate) NAME=procrastinate ;;
  awa) NAME=awa-pg ;;
  absurd) NAME=absurd-sdk ;;
  *) echo "usage: $0 install|dir graphile|pgboss|procrastinate|awa|absurd" >&2; exit 2 ;;
esac
SOURCE="$ROOT/harness/bench/$PEER"
locks() { local f; for f in package.json package-lock.json requirements.txt; do [ -f "$SOURCE/$f" ] && echo "$SOURCE/$f"; done; return 0; }
dir() { echo "$AITASK_CACHE/$NAME-$(cat $(locks) | md5sum | cut -c1-12)"; }

# Installed once the install finished (the stamp), not once the peer's own files are there.
install() (
  local target; target="$(dir)"
  if [ ! -f "$target/.installed" ]; then
    if [ -f "$SOURCE/requirements.txt" ]; then need_apt python3 python3 python3-venv; else need_apt npm nodejs npm; fi
    # absurdctl applies absurd's schema through psql.
    if [ "$PEER" = absurd ]; then need_apt psql postgresql-client; fi
    locked "$NAME"
    if [ ! -f "$target/.installed" ]; then
      log "installing $NAME (harness/bench/$PEER) into $target"
      rm -rf "$target"
      mkdir -p "$target"
      cp $(locks) "$target/"
      if [ -f "$SOURCE/requirements.txt" ]; then
        python3 -m venv "$target/venv"
        "$target/venv/bin/pip" install -q --disable-pip-version-check -r "$target/requirements.txt" >/dev/null
      else
        (cd "$target" && npm ci --no-audit --no-fund --loglevel=error >/dev/null)
      fi
      touch "$target/.installed"
    fi
  fi
  cp "$SOURCE"/*.mjs "$SOURCE"/*.py "$target/" 2>/dev/null || true
  # The producer every peer of its kind shares (pace.mjs, pace.py).
  cp "$ROOT"/harness/bench/peers-common/pace.* "$target/"
  echo "$target"
)

case "${1:-}" in
  install) install ;;
  dir) dir ;;
  *) echo "usage: $0 install|dir graphile|pgboss|procrastinate|awa|absurd" >&2; exit 2 ;;
esac
