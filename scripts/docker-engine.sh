#!/usr/bin/env bash
# Machine set-up for the container tests (called by scripts/test.sh, never by a test):
#   docker-engine.sh start   when no Docker engine answers, installs Debian's docker.io and starts dockerd;
#                            an engine that already answers is used as it is (and never stopped by us).
#   docker-engine.sh stop    stops dockerd if `start` started it, after removing the containers the tests left.
# The engine we start stays inside this machine: it listens only on its unix socket, publishes ports on
# 127.0.0.1, and neither forwards nor masquerades container traffic to the outside (containers talk to each
# other and to the host over their bridge networks). No registry is reachable here: images come from
# scripts/build-images.sh.
set -euo pipefail
cd "$(dirname "$0")/.."

STATE=/run/squeeze-dockerd
# DOCKER_HOST=unix:///path gives the engine another socket (the default one may be someone else's).
SOCK=/var/run/docker.sock
case "${DOCKER_HOST:-}" in unix://*) SOCK="${DOCKER_HOST#unix://}" ;; esac

answers() { timeout 10 docker version --format '{{.Server.Version}}' >/dev/null 2>&1; }

start() {
  if answers; then
    echo "docker-engine: an engine already answers ($(docker version --format '{{.Server.Version}}'))" >&2
    return 0
  fi
  bash scripts/ensure-apt.sh docker.io
  mkdir -p "$STATE"
  echo "docker-engine: starting dockerd (log $STATE/dockerd.log)" >&2
  # setsid: the test run's Ctrl-C goes to the tests; `stop` decides when the engine ends.
  setsid dockerd --host "unix://$SOCK" --ip 127.0.0.1 --ip-forward=false --ip-masq=false --iptables=false \
    --storage-driver overlay2 --pidfile "$STATE/dockerd.pid" >"$STATE/dockerd.log" 2>&1 </dev/null &
  echo $! >"$STATE/started-by-squeeze"
  for _ in $(seq 1 120); do
    if answers; then
      echo "docker-engine: dockerd $(docker version --format '{{.Server.Version}}') answers" >&2
      return 0
    fi
    if ! kill -0 "$(cat "$STATE/started-by-squeeze")" 2>/dev/null; then
      echo "docker-engine: dockerd exited; last lines of $STATE/dockerd.log:" >&2
      tail -n 20 "$STATE/dockerd.log" >&2
      rm -f "$STATE/started-by-squeeze"
      return 1
    fi
    sleep 0.5
  done
  echo "docker-engine: dockerd did not answer within 60 s; see $STATE/dockerd.log" >&2
  return 1
}

stop() {
  [ -f "$STATE/started-by-squeeze" ] || return 0
  local pid
  pid="$(cat "$STATE/started-by-squeeze")"
  # Ryuk (testcontainers' reaper) is off here because its image cannot be pulled; remove what tests left.
  local left
  left="$(docker ps -aq --filter label=org.testcontainers=true 2>/dev/null || true)"
  [ -z "$left" ] || docker rm -f $left >/dev/null 2>&1 || true
  kill "$pid" 2>/dev/null || true
  for _ in $(seq 1 60); do
    kill -0 "$pid" 2>/dev/null || break
    sleep 0.5
  done
  rm -f "$STATE/started-by-squeeze"
  echo "docker-engine: dockerd stopped" >&2
}

case "${1:-}" in
  start) start ;;
  stop) stop ;;
  *) echo "usage: $0 start|stop" >&2; exit 2 ;;
esac
