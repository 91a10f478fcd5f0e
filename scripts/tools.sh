#!/usr/bin/env bash
# The Python-packaged tools (cargo-lambda with its zig, cfn-lint, aws-sam-cli with
# aws-sam-translator, and moto's server for a local Secrets Manager), installed once into a
# virtualenv in the cache outside the clone. Prints the venv's bin folder.
source "$(dirname "$0")/lib.sh"

VENV="$AITASK_CACHE/tools-venv"
STAMP="$VENV/.aitasks-tools-v2"
if [ ! -f "$STAMP" ]; then
  log "installing cargo-lambda, cfn-lint, aws-sam-cli and moto into $VENV (once)"
  python3 -m venv "$VENV"
  "$VENV/bin/pip" install --quiet --upgrade pip >/dev/null
  "$VENV/bin/pip" install --quiet "cargo-lambda>=1.8,<2" "cfn-lint>=1,<2" "aws-sam-cli>=1.130,<2" \
    "moto[server]>=5.1,<6" >&2
  touch "$STAMP"
fi
echo "$VENV/bin"
