#!/usr/bin/env bash
# make audit: the RustSec advisories over Cargo.lock and harness/Cargo.lock. cargo-deny is the
# gate (deny.toml's [advisories]: vulnerabilities, unmaintained, unsound and yanked crates fail,
# nothing ignored without a written reason); cargo-audit gives the report security teams know. Both fetch the
# database from GitHub. Where that is out of reach, AUDIT_DB=path names a local clone of it
# (a git repository of github.com/rustsec/advisory-db with its `main` branch):
#   git clone https://github.com/rustsec/advisory-db /tmp/advisory-db   # wherever it is reachable
#   AUDIT_DB=/tmp/advisory-db make audit
source "$(dirname "$0")/lib.sh"
cd "$ROOT"

TOOLS="$("$ROOT/scripts/tools.sh")"
DB_URL="https://github.com/rustsec/advisory-db"
audit_args=()
if [ -n "${AUDIT_DB:-}" ]; then
  db="$(cd "$AUDIT_DB" && pwd)"
  if ! git -C "$db" rev-parse -q --verify main >/dev/null; then
    log "AUDIT_DB=$AUDIT_DB is not a git clone of the advisory database with a main branch"
    exit 1
  fi
  log "advisory database: $db (main at $(git -C "$db" log -1 --format='%h of %cs' main))"
  # cargo-deny fetches with the git command line: the same fetch, from the local clone.
  export GIT_CONFIG_COUNT=1 GIT_CONFIG_KEY_0="url.file://$db.insteadOf" GIT_CONFIG_VALUE_0="$DB_URL"
  # A local copy is as fresh as whoever made it; cargo-audit would refuse one older than 90 days.
  audit_args=(--db "$db" --no-fetch --stale)
else
  log "advisory database: $DB_URL (AUDIT_DB=path to use a local clone)"
fi

# Both lockfiles: the product's and the harness's (harness/Cargo.lock).
log "cargo-deny check advisories"
"$TOOLS/cargo-deny" check advisories
"$TOOLS/cargo-deny" --manifest-path harness/Cargo.toml check advisories
log "cargo-audit"
"$TOOLS/cargo-audit" audit "${audit_args[@]}"
"$TOOLS/cargo-audit" audit "${audit_args[@]}" --file harness/Cargo.lock
