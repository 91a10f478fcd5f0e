# The one way `.local/env` is read: by the Makefile (`source scripts/env.sh && load_local_env`),
# by the scripts (through lib.sh), and, with the same rule in Rust, by the tests
# (aitasks_testkit::local_env). Each `export KEY='value'` line is exported unless the environment
# already sets KEY: variables you set yourself always win. AITASK_ENV_FILE names another file (the
# benchmarks keep theirs apart, so they never touch the dev stack's).
# Sourced, never run; it sets no shell options.

aitasks_env_file() {
  if [ -n "${AITASK_ENV_FILE:-}" ]; then
    echo "$AITASK_ENV_FILE"
  else
    echo "$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)/.local/env"
  fi
}

load_local_env() {
  local file line key value
  file="$(aitasks_env_file)"
  [ -f "$file" ] || return 0
  while IFS= read -r line || [ -n "$line" ]; do
    [[ "$line" =~ ^export\ ([A-Za-z_][A-Za-z0-9_]*)=(.*)$ ]] || continue
    key="${BASH_REMATCH[1]}"
    [ -n "${!key+set}" ] && continue
    # Values are shell-quoted (env_set writes them): let the shell unquote them.
    eval "value=${BASH_REMATCH[2]}"
    export "$key=$value"
  done <"$file"
}
