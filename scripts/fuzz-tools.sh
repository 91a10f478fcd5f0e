#!/usr/bin/env bash
# schemathesis (the OpenAPI fuzzer, from PyPI), installed once into a virtualenv of its own in the
# cache outside the clone: its dependencies stay apart from the SAM tools'. Prints the venv's
# bin folder.
source "$(dirname "$0")/lib.sh"

VENV="$AITASK_CACHE/fuzz-venv"
STAMP="$VENV/.aitasks-fuzz-v1"
if [ ! -f "$STAMP" ]; then
  log "installing schemathesis into $VENV (once)"
  python3 -m venv "$VENV"
  "$VENV/bin/pip" install --quiet --upgrade pip >/dev/null
  "$VENV/bin/pip" install --quiet "schemathesis==4.32.5" >&2
  touch "$STAMP"
fi
echo "$VENV/bin"
