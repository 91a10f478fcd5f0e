# Shared helpers for the local-stack scripts. Sourced, never run.
# Everything slow to fetch or build is cached outside the clone, in $AITASK_CACHE.

set -euo pipefail

ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
# shellcheck source=scripts/env.sh
source "$ROOT/scripts/env.sh"
LOCAL="$ROOT/.local"
AITASK_CACHE="${AITASK_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/aitasks}"
mkdir -p "$LOCAL" "$AITASK_CACHE"

log() { printf '[%s] %s\n' "$(basename "$0" .sh)" "$*" >&2; }

# A free TCP port on 127.0.0.1.
free_port() {
  python3 - <<'PY'
import socket
s = socket.socket()
s.bind(("127.0.0.1", 0))
print(s.getsockname()[1])
s.close()
PY
}

# locked NAME: take the cache's lock NAME on file descriptor 9 (held until the calling
# subshell or script ends, and by any process it leaves running: a command that may start a
# daemon runs with `9>&-`). The background warm-up (scripts/warm.sh) and the target that needs
# the same download or build take the same lock: the second waits, then finds the work done.
locked() {
  exec 9>"$AITASK_CACHE/.lock-$1"
  flock -n 9 && return
  log "waiting for $1 (the background warm-up's output: .local/warm.log)"
  flock 9
}

# apt_get_install PACKAGE...: install Debian packages (the lists are refreshed at most once a
# day). The caller holds the apt lock (`locked apt`): dpkg refuses a second apt, and what is
# installed is decided under the same lock, never while another install is half done.
apt_get_install() {
  log "installing $*"
  if [ ! -f "$AITASK_CACHE/.apt-updated" ] || [ -n "$(find "$AITASK_CACHE/.apt-updated" -mmin +1440 2>/dev/null)" ]; then
    DEBIAN_FRONTEND=noninteractive apt-get update -qq >/dev/null 9>&-
    touch "$AITASK_CACHE/.apt-updated"
  fi
  # Not the lock's descriptor (9>&-): a package's install script may start a daemon (PostgreSQL's
  # cluster), which would hold the lock for as long as it runs.
  DEBIAN_FRONTEND=noninteractive apt-get install -y -qq "$@" >/dev/null 9>&-
}

# need_apt CMD PACKAGE...: install the packages unless CMD is there (checked under the apt lock).
need_apt() (
  local cmd="$1"; shift
  locked apt
  command -v "$cmd" >/dev/null 2>&1 || apt_get_install "$@"
)

# Set or replace KEY=VALUE in .local/env (or $AITASK_ENV_FILE), single-quoted.
env_set() {
  local key="$1" value="$2" file
  file="$(aitasks_env_file)"
  mkdir -p "$(dirname "$file")"
  touch "$file"
  grep -v "^export $key=" "$file" >"$file.tmp" || true
  printf "export %s='%s'\n" "$key" "${value//\'/\'\\\'\'}" >>"$file.tmp"
  mv "$file.tmp" "$file"
}

# Cargo's target folder (CARGO_TARGET_DIR when set).
target_dir() {
  (cd "$ROOT" && cargo metadata --format-version 1 --no-deps 2>/dev/null) \
    | python3 -c 'import json,sys; print(json.load(sys.stdin)["target_directory"])'
}

# workspace_executables DIR: the executables of the package in DIR (relative to the root) as
# its workspace's whole build makes them (the root's, or the harness's for harness/*), one a
# line: `bin PATH` for its binaries, `test PATH` for its test executables. Built with the
# workspace's selection, never `-p`: a package alone gets its dependencies' features resolved
# for it alone, and cargo compiles dozens of crates a second time (minutes on two cores). Fails
# when the build does, or when the package has no tests.
workspace_executables() {
  local out; out="$(mktemp)"
  (cd "$ROOT/$1" && cargo test --workspace --no-run --message-format=json-render-diagnostics) >"$out" \
    || { rm -f "$out"; return 1; }
  python3 - "$ROOT/$1/Cargo.toml" "$out" <<'PY' || { rm -f "$out"; return 1; }
import json, os, sys
manifest = os.path.realpath(sys.argv[1])
found = set()
with open(sys.argv[2]) as messages:
    for line in messages:
        try:
            message = json.loads(line)
        except ValueError:
            continue
        if message.get("reason") != "compiler-artifact" or not message.get("executable"):
            continue
        if os.path.realpath(message.get("manifest_path", "")) != manifest:
            continue
        found.add(("test" if message["profile"]["test"] else "bin", message["executable"]))
if not any(kind == "test" for kind, _ in found):
    sys.exit(f"no test executable of {manifest} in the build")
for kind, path in sorted(found):
    print(kind, path)
PY
  rm -f "$out"
}

# A virtualenv in the cache with these PyPI packages, installed once (again when STAMP changes);
# prints its bin folder.  python_venv NAME STAMP PACKAGE...
python_venv() {
  local venv="$AITASK_CACHE/$1" stamp="$AITASK_CACHE/$1/$2"
  shift 2
  [ -f "$stamp" ] || locked "$(basename "$venv")"
  if [ ! -f "$stamp" ]; then
    log "installing $* into $venv (once)"
    python3 -m venv "$venv"
    "$venv/bin/pip" install --quiet --upgrade pip >/dev/null
    "$venv/bin/pip" install --quiet "$@" >&2
    touch "$stamp"
  fi
  echo "$venv/bin"
}
