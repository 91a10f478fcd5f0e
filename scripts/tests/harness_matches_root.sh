#!/usr/bin/env bash
# The harness (harness/Cargo.toml) builds the product's crates with its own profiles: they must
# be the root's, or the bench measures other code than it did (and the debug build compiles the
# dependencies again). And it shares the root's target folder: a crate both workspaces' test
# builds compile with the same features is compiled once. This holds the two feature sets equal
# (harness/bench/Cargo.toml's dev-dependencies ask for the root's), crate by crate, as
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

profiles() { python3 -c 'import sys, tomllib; print(tomllib.load(open(sys.argv[1], "rb")).get("profile"))' "$1"; }
if [ "$(profiles "$here/Cargo.toml")" != "$(profiles "$here/harness/Cargo.toml")" ]; then
  echo "harness_matches_root: harness/Cargo.toml's [profile.*] differ from the root's: make them the same"
  exit 1
fi

printf 'tokio v1.0.0|net,process\n' >"$work/root"
printf 'tokio v1.0.0|net\n' >"$work/harness"
if python3 "$work/compare.py" "$work/root" "$work/harness" >/dev/null; then
  echo "harness_matches_root: the checker missed a made-up drift"; exit 1
fi

tree "$here" >"$work/root"
tree "$here/harness" >"$work/harness"
if ! python3 "$work/compare.py" "$work/root" "$work/harness"; then
  echo "harness_matches_root: the harness resolves shared crates with other features than the root:"
  echo "  its test build compiles them a second time. Align harness/bench/Cargo.toml's dev-dependencies."
  exit 1
fi
echo "ok: harness_matches_root: the root's profiles, and the root's features on every shared crate"
