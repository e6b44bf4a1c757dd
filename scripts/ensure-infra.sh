#!/usr/bin/env bash
# Makes sure PostgreSQL, RabbitMQ and Redis answer before anything talks to them. For each one not
# answering, scripts/infra/plan.cjs decides from what this machine has: a remote URL is only waited
# for; a local one is started when installed, else installed from Debian's packages (root and
# apt-get), else run in a Docker container (pmatch-<service>) when a Docker engine answers, else
# the script stops naming what is missing. INFRA_WAIT_SECONDS bounds each wait (default 60).
# `ensure-infra.sh test` (npm test) leaves what would run in Docker to the test kit, whose jest
# global setup runs it with testcontainers; it names those services in INFRA_TESTCONTAINERS_FILE
# when that is set, one a line.
set -euo pipefail

purpose="${1:-start}"
wait_seconds="${INFRA_WAIT_SECONDS:-60}"

database_url="${DATABASE_URL:-postgresql://postgres@127.0.0.1:5432/matching}"
rabbitmq_url="${RABBITMQ_URL:-amqp://guest:guest@127.0.0.1:5672}"
redis_url="${REDIS_URL:-redis://127.0.0.1:6379}"

log() { echo "infra: $*"; }
die() { echo "infra: ERROR: $*" >&2; exit 1; }
[[ "$purpose" == start || "$purpose" == test ]] || die "usage: ensure-infra.sh [start|test]"

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

# Whether Debian's PACKAGE can be installed here: root, apt-get, and a candidate (after one
# `apt-get update` if the lists have none).
apt_updated=""
apt_candidate() { apt-cache policy "$1" 2>/dev/null | grep -q 'Candidate: [^(]'; }
apt_installable() {
  command -v apt-get >/dev/null 2>&1 && [[ "$(id -u)" == 0 ]] || return 1
  apt_candidate "$1" && return 0
  if [[ -z "$apt_updated" ]]; then
    apt_updated=1
    log "looking up Debian's packages (apt-get update)"
    apt-get update -qq >/dev/null 2>&1 || true
  fi
  apt_candidate "$1"
}

docker_reachable() {
  command -v docker >/dev/null 2>&1 && timeout 15 docker info >/dev/null 2>&1 && return 0
  # testcontainers talks to the engine's socket itself: for tests, the docker CLI is not needed.
  [[ "$purpose" == test ]] || return 1
  [[ -n "${DOCKER_HOST:-}" || -S /var/run/docker.sock || -S "${XDG_RUNTIME_DIR:-/nonexistent}/docker.sock" || -S "${HOME:-/nonexistent}/.docker/run/docker.sock" ]]
}

plan_script="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)/infra/plan.cjs"
plan_field() { node -e 'const s = require(process.argv[1]).SERVICES[process.argv[2]]; process.stdout.write(String(s[process.argv[3]]))' "$plan_script" "$1" "$2"; }

install_service() {
  local name="$1" package
  package="$(plan_field "$name" package)"
  DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends "$package" >/dev/null
  if [[ "$name" == postgres ]]; then
    # A cluster made just now, on a development machine: let local TCP logins in without a
    # password, as DATABASE_URL's default (postgresql://postgres@127.0.0.1) expects.
    sed -i -E 's/^(host[[:space:]]+all[[:space:]]+all[[:space:]]+(127\.0\.0\.1\/32|::1\/128)[[:space:]]+)[^[:space:]]+/\1trust/' /etc/postgresql/*/main/pg_hba.conf
  fi
}

# The container pmatch-NAME, published on 127.0.0.1:PORT: started again if it exists, else made.
start_container() {
  local name="$1" port="$2" container="pmatch-$1" image inner
  if docker container inspect "$container" >/dev/null 2>&1; then
    docker start "$container" >/dev/null
    return
  fi
  image="$(plan_field "$name" image)"
  inner="$(plan_field "$name" containerPort)"
  local options=()
  case "$name" in
    postgres) options=(-e POSTGRES_HOST_AUTH_METHOD=trust) ;;
    # Logins arrive through Docker's port mapping, not from loopback: let the guest user in.
    rabbitmq) options=(-e 'RABBITMQ_SERVER_ADDITIONAL_ERL_ARGS=-rabbit loopback_users []') ;;
    redis) options=() ;;
  esac
  docker run -d --name "$container" -p "127.0.0.1:$port:$inner" "${options[@]+"${options[@]}"}" "$image" >/dev/null
}

# ensure NAME ENV_NAME URL DEFAULT_PORT: does what the plan says, and records what to wait for as
# "name|host|port|how" (a "|" because IPv6 hosts contain colons).
pending=()
summary=()
left_to_tests=()
ensure() {
  local name="$1" env_name="$2" url="$3" default_port="$4"
  parse_url "$url" "$default_port"
  local host="$url_host" port="$url_port" output decision action message
  local reachable=0 local_host=0 installed=0 apt=0 docker=0
  summary+=("$name $host:$port")
  "${name}_ready" "$host" "$port" && reachable=1
  if [[ "$reachable" == 0 ]]; then
    is_local "$host" && local_host=1
    if [[ "$local_host" == 1 ]]; then
      command -v "$(start_command "$name")" >/dev/null 2>&1 && installed=1
      [[ "$installed" == 0 ]] && apt_installable "$(plan_field "$name" package)" && apt=1
      [[ "$installed" == 0 && "$apt" == 0 ]] && docker_reachable && docker=1
    fi
  fi
  decision="$(node "$plan_script" "$name" "$reachable" "$local_host" "$installed" "$apt" "$docker" "$purpose")"
  action="${decision%%$'\t'*}"
  message="${decision#*$'\t'}"
  case "$action" in
    use) return 0 ;;
    fail) die "$message" ;;
  esac
  log "$message"
  case "$action" in
    wait-remote) pending+=("$name|$host|$port|remote") ;;
    install)
      if ! output="$(install_service "$name" 2>&1)"; then die "installing $name failed: $output"; fi
      start_and_record "$name" "$host" "$port" started
      ;;
    start) start_and_record "$name" "$host" "$port" started ;;
    docker)
      if ! output="$(start_container "$name" "$port" 2>&1)"; then die "running $name in Docker failed: $output"; fi
      pending+=("$name|$host|$port|docker")
      ;;
    testcontainers)
      left_to_tests+=("$name")
      summary[${#summary[@]} - 1]="$name (left to testcontainers)"
      ;;
  esac
}

start_and_record() {
  local name="$1" host="$2" port="$3" how="$4" output
  # A failed start is reported but still waited on: "already running" (a server still booting)
  # is a failure to the start command and not to us.
  if ! output="$("start_${name}" "$port" 2>&1)"; then
    echo "infra: starting $name reported: $output" >&2
  fi
  pending+=("$name|$host|$port|$how")
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
      [[ "$how" == docker ]] && hint=" (in Docker; see 'docker logs pmatch-$name')"
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

if [[ -n "${INFRA_TESTCONTAINERS_FILE:-}" ]]; then
  printf '%s\n' "${left_to_tests[@]+"${left_to_tests[@]}"}" | sed '/^$/d' >"$INFRA_TESTCONTAINERS_FILE"
fi
log "up: $(IFS=,; echo "${summary[*]}" | sed 's/,/, /g')"
