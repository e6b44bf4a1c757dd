#!/usr/bin/env bash
# Brings a clone to a runnable state: infrastructure up, dependencies installed, Prisma client
# generated, everything built, database migrated. Used by `npm start` and `npm test`; safe to run
# again and quick when nothing changed. Each step is quiet unless it fails, then its output shows.
# `setup.sh test` (npm test) lets the test kit run with testcontainers what would otherwise run in
# Docker (scripts/ensure-infra.sh); a database left to it is migrated by jest's global setup.
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."

purpose="${1:-start}"
cache_dir="node_modules/.cache/pmatch-setup"
log_file="$(mktemp)"
left_to_tests="$(mktemp)"
trap 'rm -f "$log_file" "$left_to_tests"' EXIT

step() { echo "setup: $*"; }

# run_quiet CMD...: runs CMD with its output kept aside, printed only if it fails.
run_quiet() {
  if ! "$@" >"$log_file" 2>&1; then
    cat "$log_file" >&2
    echo "setup: FAILED: $*" >&2
    exit 1
  fi
}

step "checking PostgreSQL, RabbitMQ, Redis"
INFRA_TESTCONTAINERS_FILE="$left_to_tests" bash scripts/ensure-infra.sh "$purpose"

# Installing is skipped when none of its inputs changed since the last successful install: even a
# no-op `pnpm install` costs seconds, most of them starting npm and pnpm.
install_key() {
  { node --version; cat package.json pnpm-workspace.yaml .npmrc pnpm-lock.yaml packages/*/package.json services/*/package.json examples/*/package.json 2>/dev/null; } | sha256sum | cut -d' ' -f1
}
installed() {
  [[ -f node_modules/.modules.yaml && "$(cat "$cache_dir/install" 2>/dev/null)" == "$(install_key)" ]] || return 1
  local manifest
  for manifest in packages/*/package.json services/*/package.json examples/*/package.json; do
    [[ -d "$(dirname "$manifest")/node_modules" ]] || return 1
  done
}
if installed; then
  step "dependencies up to date"
elif [[ -f pnpm-lock.yaml ]]; then
  step "installing dependencies (pnpm install --frozen-lockfile)"
  run_quiet bash scripts/pnpm.sh install --frozen-lockfile --reporter=append-only
else
  step "installing dependencies (pnpm install; no lockfile yet)"
  run_quiet bash scripts/pnpm.sh install --reporter=append-only
fi
mkdir -p "$cache_dir"
install_key >"$cache_dir/install"

# The generated client is gitignored, so a fresh clone must generate it before building; skip it
# when neither the schema nor the Prisma version changed since the last generation.
generate_key="$(cat packages/db/prisma/schema.prisma packages/db/scripts/generate.mjs packages/db/node_modules/prisma/package.json | sha256sum | cut -d' ' -f1)"
if [[ -d packages/db/src/generated && "$(cat "$cache_dir/prisma-generate" 2>/dev/null)" == "$generate_key" ]]; then
  step "Prisma client up to date"
else
  step "generating Prisma client"
  run_quiet node packages/db/scripts/generate.mjs
  mkdir -p "$cache_dir"
  echo "$generate_key" >"$cache_dir/prisma-generate"
fi

# `npm run` runs the same package.json script as pnpm would, without starting pnpm through npm exec.
step "building (tsc -b)"
run_quiet npm run -s build

if grep -qx postgres "$left_to_tests"; then
  step "not migrating: PostgreSQL runs in the tests' container, migrated by jest's global setup"
else
  # The topology is declared by the migrate step, as the broker's admin here (RABBITMQ_URL); the
  # services then run as their own users, which may not declare it.
  if grep -qx rabbitmq "$left_to_tests"; then
    step "migrating the database (the test kit declares the broker topology in its RabbitMQ container)"
    env -u RABBITMQ_URL node scripts/migrate.mjs
  else
    step "migrating the database, declaring the broker topology"
    RABBITMQ_URL="${RABBITMQ_URL:-amqp://guest:guest@127.0.0.1:5672}" node scripts/migrate.mjs
  fi
fi

if grep -qx rabbitmq "$left_to_tests"; then
  step "broker users: RabbitMQ runs in the tests' container, where the services use its admin login"
else
  step "broker users"
  node scripts/broker-users.mjs
fi
