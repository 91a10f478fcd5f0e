#!/usr/bin/env bash
# The TypeScript client's checks (`make client-ts`, part of `make test`): install its
# dependencies from the lockfiles (npm's cache lives in $AITASK_CACHE/npm, outside the clone),
# check its generated types against openapi.yaml, type-check the package, its type tests and the
# example in strict mode, run its unit tests, then its end-to-end tests against the dev server on
# a stub provider, over a database made for this run (dropped after) and queues of their own.
#   scripts/client-ts.sh          all of it (needs `make build` and `make services`)
#   scripts/client-ts.sh static   without the end-to-end tests (no service needed)
#   scripts/client-ts.sh install  only install the dependencies (scripts/warm.sh)
#   CLIENT_TS_ONLY=pattern        only the end-to-end tests whose names match (node --test-name-pattern)
source "$(dirname "$0")/lib.sh"

PKG="$ROOT/clients/typescript"
EXAMPLE="$ROOT/examples/typescript"
NPM_CACHE="$AITASK_CACHE/npm"

# npm ci from the lockfile, once per lockfile: a stamp in node_modules records the lockfile it
# was installed from (npm ci removes node_modules first, so a changed lockfile starts clean).
install() (
  local dir="$1" stamp sum
  stamp="$dir/node_modules/.installed-from"
  sum="$(sha256sum "$dir/package-lock.json" | cut -d' ' -f1)"
  [ -f "$stamp" ] && [ "$(cat "$stamp")" = "$sum" ] && exit 0
  # The background warm-up may be installing it now: wait for it, then find it done.
  locked "npm-$(printf '%s' "$dir" | md5sum | cut -c1-10)"
  [ -f "$stamp" ] && [ "$(cat "$stamp")" = "$sum" ] && exit 0
  log "npm ci in ${dir#"$ROOT"/} (cache: $NPM_CACHE)"
  (cd "$dir" && npm ci --cache "$NPM_CACHE" --prefer-offline --no-audit --no-fund --loglevel=error >&2)
  echo "$sum" >"$stamp"
)

need_apt node nodejs
need_apt npm npm
install "$PKG"
install "$EXAMPLE"
[ "${1:-}" = install ] && exit 0

cd "$PKG"
log "drift check: src/generated/openapi.ts against openapi.yaml"
node scripts/generate.mjs --check
log "tsc (strict): the package, then its type tests (wrong bodies must not compile)"
node_modules/.bin/tsc -p tsconfig.json
node_modules/.bin/tsc -p tsconfig.typetest.json
log "tsc (strict): examples/typescript"
(cd "$EXAMPLE" && node_modules/.bin/tsc -p tsconfig.json)
log "unit tests (a local HTTP stub)"
node --test test/unit/

[ "${1:-}" = static ] && exit 0

# The end-to-end run: its own database (migrated by the dev server at start).
load_local_env
: "${AITASK_MIGRATE_DATABASE_URL:?run make services (or make up) first}"
name="aitasks_client_ts_$(date +%s)_$$"
with_database() { python3 -c 'import sys; u, d = sys.argv[1], sys.argv[2]; b, _, q = u.partition("?"); print(b.rsplit("/", 1)[0] + "/" + d + ("?" + q if q else ""))' "$1" "$2"; }
admin_url="$(with_database "$AITASK_MIGRATE_DATABASE_URL" postgres)"
cleanup() {
  psql -q "$admin_url" -c "DROP DATABASE IF EXISTS $name WITH (FORCE)" >/dev/null 2>&1 || true
}
trap cleanup EXIT
psql -q "$admin_url" -c "CREATE DATABASE $name" >/dev/null
export AITASK_MIGRATE_DATABASE_URL DATABASE_URL
AITASK_MIGRATE_DATABASE_URL="$(with_database "$AITASK_MIGRATE_DATABASE_URL" "$name")"
DATABASE_URL="$(with_database "$DATABASE_URL" "$name")"
# Each test file makes its own queues on the SQS-compatible server (test/support/stack.mjs).
export AWS_ENDPOINT_URL_SQS
export AITASKS_DEV_SERVER_BIN="${AITASKS_DEV_SERVER_BIN:-$(target_dir)/debug/aitasks-dev-server}"
[ -x "$AITASKS_DEV_SERVER_BIN" ] || { log "no dev server at $AITASKS_DEV_SERVER_BIN: run make build"; exit 1; }
log "end-to-end tests (the dev server on a stub provider; database $name)"
# One file at a time (each starts its own dev server): Debian's Node 18 has no --test-concurrency.
for file in test/e2e/*.test.mjs; do
  node --test ${CLIENT_TS_ONLY:+--test-name-pattern="$CLIENT_TS_ONLY"} "$file"
done
