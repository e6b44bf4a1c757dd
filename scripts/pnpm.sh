#!/usr/bin/env bash
# Runs the pnpm version pinned in package.json without a global install: a fresh machine has
# only Node and npm, and nothing installed by hand counts.
set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
version="$(node -p "require('$root/package.json').packageManager.split('@')[1]")"
if command -v pnpm >/dev/null 2>&1 && [ "$(pnpm --version 2>/dev/null)" = "$version" ]; then
  exec pnpm "$@"
fi
exec npm exec --yes --loglevel=error "pnpm@$version" -- "$@"
