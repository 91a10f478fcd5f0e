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
# subshell or script ends). The background warm-up (scripts/warm.sh) and the target that needs
# the same download or build take the same lock: the second waits, then finds the work done.
locked() {
  exec 9>"$AITASK_CACHE/.lock-$1"
  flock 9
}

# Install Debian packages (the lists are refreshed at most once a day). One apt at a time: dpkg
# refuses a second.
apt_install() (
  locked apt
  log "installing $*"
  if [ ! -f "$AITASK_CACHE/.apt-updated" ] || [ -n "$(find "$AITASK_CACHE/.apt-updated" -mmin +1440 2>/dev/null)" ]; then
    DEBIAN_FRONTEND=noninteractive apt-get update -qq >/dev/null
    touch "$AITASK_CACHE/.apt-updated"
  fi
  DEBIAN_FRONTEND=noninteractive apt-get install -y -qq "$@" >/dev/null
)

# Install Debian packages only when a command is missing.
need_apt() {
  local cmd="$1"; shift
  command -v "$cmd" >/dev/null 2>&1 || apt_install "$@"
}

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
# `make build` builds them: its binaries, then its test executables, one a line. Built with the
# workspace's selection, never `-p`: a package alone gets its dependencies' features resolved for
# it alone, and cargo compiles dozens of crates a second time (minutes on two cores).
workspace_executables() {
  (cd "$ROOT" && cargo test --workspace --no-run --message-format=json-render-diagnostics) \
    | python3 -c '
import json, sys
manifest = sys.argv[1]
bins, tests = [], []
for line in sys.stdin:
    try:
        message = json.loads(line)
    except ValueError:
        continue
    if message.get("reason") != "compiler-artifact" or not message.get("executable"):
        continue
    if message.get("manifest_path") != manifest:
        continue
    (tests if message["profile"]["test"] else bins).append(message["executable"])
print("\n".join(sorted(set(bins)) + sorted(set(tests))))
' "$ROOT/$1/Cargo.toml"
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
