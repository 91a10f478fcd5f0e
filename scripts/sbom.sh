#!/usr/bin/env bash
# make sbom: a CycloneDX SBOM (JSON, spec 1.5) for each function, written beside its build:
#   <target>/lambda/<function>/bootstrap.cdx.json
# cargo-cyclonedx reads Cargo.lock and the resolved graph of the function's package for the
# deployed target (template.yaml: arm64, aarch64-unknown-linux-gnu), without build-only
# dependencies. It needs no build, so the SBOM of any commit can be made again from its lock
# file. cargo-cyclonedx is built once into $AITASK_CACHE, keyed by its version.
source "$(dirname "$0")/lib.sh"
cd "$ROOT"

FUNCTIONS=(create-task process-task sweeper release-delete migrate)
TARGET_TRIPLE="aarch64-unknown-linux-gnu"
CYCLONEDX_VERSION="0.5.9"
tool="$AITASK_CACHE/cargo-cyclonedx-$CYCLONEDX_VERSION"
if [ ! -x "$tool/bin/cargo-cyclonedx" ]; then
  log "building cargo-cyclonedx $CYCLONEDX_VERSION into $tool (once, about 2 minutes on 2 cores)"
  CARGO_TARGET_DIR="$AITASK_CACHE/cargo-cyclonedx-build" \
    cargo install --locked --quiet "cargo-cyclonedx@$CYCLONEDX_VERSION" --root "$tool"
  rm -rf "$AITASK_CACHE/cargo-cyclonedx-build"
fi

# It writes <package>_bin.cdx.json beside every workspace binary's Cargo.toml: the functions'
# are moved beside their builds, the tools' removed (none is deployed).
"$tool/bin/cargo-cyclonedx" cyclonedx --quiet --format json --spec-version 1.5 --describe binaries \
  --target "$TARGET_TRIPLE" --no-build-deps
out="$(target_dir)/lambda"
for fn in "${FUNCTIONS[@]}"; do
  mkdir -p "$out/$fn"
  mv "functions/$fn/${fn}_bin.cdx.json" "$out/$fn/bootstrap.cdx.json"
  count="$(python3 -c 'import json,sys; print(len(json.load(open(sys.argv[1]))["components"]))' "$out/$fn/bootstrap.cdx.json")"
  log "$fn: $count components -> $out/$fn/bootstrap.cdx.json"
done
find functions tools shared tests -name '*_bin.cdx.json' -delete
