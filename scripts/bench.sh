#!/usr/bin/env bash
# `pnpm bench`: bench/run.mjs, and so the services it starts, under Node 24 by default, the runtime
# the production images use (scripts/node24.sh fetches it); BENCH_NODE=system runs them under the
# machine's node instead. The results' machine line says which ran.
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."
case "${BENCH_NODE:-node24}" in
  node24) node_bin="$(bash scripts/node24.sh)/node" ;;
  system) node_bin="node" ;;
  *)
    echo "BENCH_NODE must be node24 or system, got \"${BENCH_NODE}\"" >&2
    exit 2
    ;;
esac
exec "$node_bin" bench/run.mjs "$@"
