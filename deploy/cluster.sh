#!/usr/bin/env bash
# The local cluster from a shell: deploy/cluster.sh up|down|status|kill-replica N|restart-replica N|kill-etcd N|restart-etcd N
# (see deploy/cluster-cli.ts). Runs the compiled CLI; `make build` first.
set -euo pipefail
root="$(cd "$(dirname "$0")/.." && pwd)"
cli="$root/dist/deploy/cluster-cli.js"
if [ ! -f "$cli" ]; then
  echo "cluster.sh: $cli is missing; run 'make build' first" >&2
  exit 1
fi
exec node "$cli" "$@"
