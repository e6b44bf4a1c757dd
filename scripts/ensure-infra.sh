#!/usr/bin/env bash
# Makes sure PostgreSQL, RabbitMQ and Redis answer before anything talks to them.
# A URL that points at this machine and finds its port closed gets the server started with the
# machine's own commands (when the server is installed here); a remote URL is only waited for.
# INFRA_WAIT_SECONDS bounds each wait (default 60).
set -euo pipefail

wait_seconds="${INFRA_WAIT_SECONDS:-60}"

database_url="${DATABASE_URL:-postgresql://postgres@127.0.0.1:5432/matching}"
rabbitmq_url="${RABBITMQ_URL:-amqp://guest:guest@127.0.0.1:5672}"
redis_url="${REDIS_URL:-redis://127.0.0.1:6379}"

log() { echo "infra: $*"; }
die() { echo "infra: ERROR: $*" >&2; exit 1; }

# Sets url_host and url_port from a URL such as scheme://user:pass@host:port/path?query.
parse_url() {
  local url="$1" default_port="$2" rest authority hostport
  rest="${url#*://}"
  authority="${rest%%[/?#]*}"
  hostport="${authority##*@}"
  if [[ "$hostport" == \[* ]]; then
    url_host="${hostport#\[}"
    url_host="${url_host%%\]*}"
    rest="${hostport#*\]}"
    url_port="${rest#:}"
  elif [[ "$hostport" == *:* ]]; then
    url_host="${hostport%%:*}"
    url_port="${hostport##*:}"
  else
    url_host="$hostport"
    url_port=""
  fi
  # An empty host (e.g. a Unix-socket DATABASE_URL) means this machine.
  url_host="${url_host:-127.0.0.1}"
  url_port="${url_port:-$default_port}"
}

is_local() {
  case "$1" in
    localhost | 127.* | ::1 | 0.0.0.0) return 0 ;;
    *) return 1 ;;
  esac
}

port_open() {
  timeout 2 bash -c "exec 3<>/dev/tcp/$1/$2" 2>/dev/null
}

postgres_ready() {
  port_open "$1" "$2" || return 1
  if command -v pg_isready >/dev/null 2>&1; then pg_isready -q -h "$1" -p "$2" -t 2; fi
}

redis_ready() {
  port_open "$1" "$2" || return 1
  if command -v redis-cli >/dev/null 2>&1; then
    # A password-protected server answers NOAUTH, which still proves it is up.
    [[ "$(timeout 3 redis-cli -h "$1" -p "$2" ping 2>&1)" =~ PONG|NOAUTH ]]
  fi
}

rabbitmq_ready() { port_open "$1" "$2"; }

# check_running is slow (it boots an Erlang VM), so it is asked only right after we started the
# broker ourselves: an open AMQP port alone can come a moment before the broker accepts logins.
rabbitmq_fully_booted() {
  if command -v rabbitmq-diagnostics >/dev/null 2>&1; then
    timeout 20 rabbitmq-diagnostics -q check_running >/dev/null 2>&1
  fi
}

start_postgres() {
  command -v pg_ctlcluster >/dev/null 2>&1 || return 1
  local port="$1" version cluster
  # Prefer the cluster configured for the wanted port; fall back to the machine's "main" cluster.
  if command -v pg_lsclusters >/dev/null 2>&1; then
    read -r version cluster < <(pg_lsclusters -h 2>/dev/null | awk -v p="$port" '$3 == p { print $1, $2; exit }') || true
  fi
  if [[ -z "${version:-}" ]]; then
    version="$(ls /etc/postgresql 2>/dev/null | sort -V | tail -n 1)"
    cluster=main
  fi
  [[ -n "$version" ]] || return 1
  pg_ctlcluster --skip-systemctl-redirect "$version" "$cluster" start
}

start_redis() {
  command -v redis-server >/dev/null 2>&1 || return 1
  mkdir -p /var/lib/redis /var/log/redis
  redis-server --daemonize yes --bind 127.0.0.1 -::1 --port "$1" --save "" --appendonly no \
    --dir /var/lib/redis --logfile /var/log/redis/ci.log
}

# The Erlang node can be running with the RabbitMQ application stopped (`rabbitmqctl stop_app`,
# as the fault suite does): the AMQP port is closed, and `rabbitmq-server -detached` only fails
# with "node already running". Such a node needs `start_app`, not a second server.
rabbitmq_node_running() {
  command -v rabbitmqctl >/dev/null 2>&1 || return 1
  timeout 20 rabbitmqctl -q eval 'ok.' >/dev/null 2>&1
}

start_rabbitmq() {
  command -v rabbitmq-server >/dev/null 2>&1 || return 1
  if rabbitmq_node_running; then
    timeout 60 rabbitmqctl -q start_app
  else
    rabbitmq-server -detached
  fi
}

# ensure NAME ENV_NAME URL DEFAULT_PORT: starts the server if it is local and down, and records
# what to wait for as "name|host|port|how" (a "|" because IPv6 hosts contain colons).
pending=()
summary=()
ensure() {
  local name="$1" env_name="$2" url="$3" default_port="$4"
  parse_url "$url" "$default_port"
  local host="$url_host" port="$url_port" output
  summary+=("$name $host:$port")
  if "${name}_ready" "$host" "$port"; then
    return 0
  fi
  if ! is_local "$host"; then
    log "$name at $host:$port ($env_name) is not answering yet; waiting (remote, never started here)"
    pending+=("$name|$host|$port|remote")
    return 0
  fi
  if ! command -v "$(start_command "$name")" >/dev/null 2>&1; then
    die "$name is down on $host:$port and is not installed here. Start it yourself (e.g. 'docker compose up -d $name') or point $env_name at a running one."
  fi
  log "$name is not answering on $host:$port; starting it"
  # A failed start is reported but still waited on: "already running" (a server still booting)
  # is a failure to the start command and not to us.
  if ! output="$("start_${name}" "$port" 2>&1)"; then
    echo "infra: starting $name reported: $output" >&2
  fi
  pending+=("$name|$host|$port|started")
}

start_command() {
  case "$1" in
    postgres) echo pg_ctlcluster ;;
    redis) echo redis-server ;;
    rabbitmq) echo rabbitmq-server ;;
  esac
}

ensure postgres DATABASE_URL "$database_url" 5432
ensure rabbitmq RABBITMQ_URL "$rabbitmq_url" 5672
ensure redis REDIS_URL "$redis_url" 6379

for entry in "${pending[@]+"${pending[@]}"}"; do
  IFS='|' read -r name host port how <<<"$entry"
  deadline=$((SECONDS + wait_seconds))
  until "${name}_ready" "$host" "$port"; do
    if ((SECONDS >= deadline)); then
      hint=""
      [[ "$how" == started ]] && hint=" (started here; see its log)"
      die "$name on $host:$port is still not ready after ${wait_seconds}s${hint}."
    fi
    sleep 1
  done
  if [[ "$name" == rabbitmq && "$how" == started ]]; then
    until rabbitmq_fully_booted; do
      ((SECONDS < deadline)) || die "rabbitmq on $host:$port opened its port but did not finish booting within ${wait_seconds}s."
      sleep 1
    done
  fi
  log "$name is up on $host:$port"
done

log "up: $(IFS=,; echo "${summary[*]}" | sed 's/,/, /g')"
