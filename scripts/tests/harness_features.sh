#!/usr/bin/env bash
# The harness (harness/Cargo.toml) shares the root's target folder: a crate both workspaces'
# test builds compile with the same features is compiled once. This holds the two feature sets
# equal (harness/bench/Cargo.toml's dev-dependencies ask for the root's), crate by crate, as
# `cargo tree` resolves them with every target. The checker must first find a made-up drift.
set -euo pipefail
here="$(cd "$(dirname "$0")/../.." && pwd)"
work="$(mktemp -d)"
trap 'rm -rf "$work"' EXIT

cat >"$work/compare.py" <<'PY'
import sys

def features(path):
    found = {}
    for line in open(path):
        line = line.strip().removesuffix(" (*)")
        if "|" not in line:
            continue
        package, listed = line.split("|", 1)
        name = " ".join(package.split()[:2])
        found.setdefault(name, set()).update(f for f in listed.split(",") if f)
    return found

root, harness = features(sys.argv[1]), features(sys.argv[2])
drift = [(name, sorted(root[name] ^ wanted)) for name, wanted in sorted(harness.items())
         if name in root and root[name] != wanted]
for name, differing in drift:
    print(f"{name}: features in one workspace only: {', '.join(differing)}")
sys.exit(1 if drift else 0)
PY

tree() { (cd "$1" && cargo tree --workspace -e normal,build,dev -f '{p}|{f}' --prefix none) | sort -u; }

printf 'tokio v1.0.0|net,process\n' >"$work/root"
printf 'tokio v1.0.0|net\n' >"$work/harness"
if python3 "$work/compare.py" "$work/root" "$work/harness" >/dev/null; then
  echo "harness_features: the checker missed a made-up drift"; exit 1
fi

tree "$here" >"$work/root"
tree "$here/harness" >"$work/harness"
if ! python3 "$work/compare.py" "$work/root" "$work/harness"; then
  echo "harness_features: the harness resolves shared crates with other features than the root:"
  echo "  its test build compiles them a second time. Align harness/bench/Cargo.toml's dev-dependencies."
  exit 1
fi
echo "harness_features: the harness's shared crates have the root's features"
