#!/usr/bin/env bash
# schemathesis (the OpenAPI fuzzer, from PyPI), installed once into a virtualenv of its own in the
# cache outside the clone: its dependencies stay apart from the SAM tools'. Prints the venv's
# bin folder.
source "$(dirname "$0")/lib.sh"

python_venv fuzz-venv .aitasks-fuzz-v1 "schemathesis==4.32.5"
