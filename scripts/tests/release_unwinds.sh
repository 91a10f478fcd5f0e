#!/usr/bin/env bash
# The shipped bootstraps unwind: `cargo lambda build --release` (make rehearse, sam build) adds
# `profile.release.panic="abort"` unless the workspace's release profile names `panic` itself,
# and an aborting process-task would lose a whole SQS batch to one record's panic (the worker
# and the handler catch panics; migrate's hook answers CloudFormation from an unwinding panic).
set -euo pipefail
here="$(cd "$(dirname "$0")/../.." && pwd)"
panic="$(python3 -c 'import sys, tomllib; print(tomllib.load(open(sys.argv[1], "rb")).get("profile", {}).get("release", {}).get("panic", ""))' "$here/Cargo.toml")"
[ "$panic" = unwind ] || {
  echo "FAIL: [profile.release] must say panic = \"unwind\" (found: '${panic:-nothing}'); cargo-lambda makes an unnamed one abort"
  exit 1
}
echo "ok: release_unwinds: the release profile names panic = \"unwind\", so cargo-lambda keeps it"
