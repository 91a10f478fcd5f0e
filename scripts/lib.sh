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

# Install Debian packages (the lists are refreshed at most once a day).
apt_install() {
  log "installing $*"
  if [ ! -f "$AITASK_CACHE/.apt-updated" ] || [ -n "$(find "$AITASK_CACHE/.apt-updated" -mmin +1440 2>/dev/null)" ]; then
    DEBIAN_FRONTEND=noninteractive apt-get update -qq >/dev/null
    touch "$AITASK_CACHE/.apt-updated"
  fi
  DEBIAN_FRONTEND=noninteractive apt-get install -y -qq "$@" >/dev/null
}

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

# A virtualenv in the cache with these PyPI packages, installed once (again when STAMP changes);
# prints its bin folder.  python_venv NAME STAMP PACKAGE...
python_venv() {
  local venv="$AITASK_CACHE/$1" stamp="$AITASK_CACHE/$1/$2"
  shift 2
  if [ ! -f "$stamp" ]; then
    log "installing $* into $venv (once)"
    python3 -m venv "$venv"
    "$venv/bin/pip" install --quiet --upgrade pip >/dev/null
    "$venv/bin/pip" install --quiet "$@" >&2
    touch "$stamp"
  fi
  echo "$venv/bin"
}
