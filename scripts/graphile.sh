#!/usr/bin/env bash
# The benchmark's graphile section's peer, graphile-worker: scripts/peer.sh's graphile.
#   scripts/graphile.sh install|dir
exec "$(dirname "$0")/peer.sh" "${1:-}" graphile
