#!/usr/bin/env bash
# Makes a Docker engine answer on this machine (Debian, root: install docker.io and start dockerd by hand) and joins it to a single-node swarm; idempotent.
# Exit codes: 0 engine up and in a swarm; 3 a part is missing and cannot be provided here (the message says how).
set -euo pipefail

WAIT_SECONDS="${DOCKER_UP_WAIT:-60}"
LOG=/var/log/dockerd.log

say () { echo "docker-up: $*"; }
missing () { echo "docker-up: $*" >&2; exit 3; }

engine_answers () { command -v docker >/dev/null 2>&1 && timeout 10 docker info >/dev/null 2>&1; }

# Live processes only: a killed dockerd can linger as a zombie when nothing reaps it.
live_pids () { ps -eo pid=,stat=,comm= | awk -v n="$1" '$3 == n && $2 !~ /^Z/ { printf "%s ", $1 }'; }

can_manage () { [ "$(id -u)" = 0 ] && [ -r /etc/debian_version ] && command -v apt-get >/dev/null 2>&1; }

if ! engine_answers; then
  if ! can_manage; then
    missing "no Docker engine answers, and this script only starts one on Debian as root.
  Install Docker Engine (https://docs.docker.com/engine/install/), start it (e.g. 'sudo systemctl start docker'),
  make sure your user may use it ('docker info' must answer), then run: docker swarm init --advertise-addr 127.0.0.1"
  fi
  if ! command -v dockerd >/dev/null 2>&1; then
    say "dockerd is missing: apt-get install -y docker.io"
    apt-get -o DPkg::Lock::Timeout=600 update -qq
    DEBIAN_FRONTEND=noninteractive apt-get -o DPkg::Lock::Timeout=600 install -y -qq docker.io >/dev/null \
      || missing "apt-get install docker.io failed; install Docker Engine by hand (https://docs.docker.com/engine/install/debian/)"
  fi
  if [ -n "$(live_pids dockerd)" ]; then
    say "dockerd runs (pid $(live_pids dockerd)) but does not answer yet; waiting"
  else
    # A killed daemon leaves its pid file behind, and the next dockerd refuses to start ("pid file found").
    if [ -e /var/run/docker.pid ]; then
      say "removing stale /var/run/docker.pid (no dockerd runs)"
      rm -f /var/run/docker.pid
    fi
    # The same holds for containerd, which dockerd starts as a child and which may have outlived it.
    if [ -e /var/run/docker/containerd/containerd.pid ] && [ -z "$(live_pids containerd)" ]; then
      rm -f /var/run/docker/containerd/containerd.pid
    fi
    say "starting dockerd (log: $LOG)"
    # its own session: not killed with the process group of whoever started it (a test, a timeout wrapper)
    setsid nohup dockerd >"$LOG" 2>&1 </dev/null &
    disown || true
  fi
  for ((i = 0; i < WAIT_SECONDS * 2; i++)); do
    engine_answers && break
    sleep 0.5
  done
  if ! engine_answers; then
    tail -n 20 "$LOG" >&2 2>/dev/null || true
    missing "dockerd did not answer within ${WAIT_SECONDS} s; see $LOG"
  fi
  say "engine answers: $(docker version --format '{{.Server.Version}}' 2>/dev/null || echo '?')"
fi

state=$(docker info --format '{{.Swarm.LocalNodeState}}' 2>/dev/null || echo unknown)
case "$state" in
  active)
    say "swarm active (node $(docker info --format '{{.Swarm.NodeID}}'))" ;;
  inactive)
    say "not in a swarm: docker swarm init --advertise-addr 127.0.0.1"
    docker swarm init --advertise-addr 127.0.0.1 >/dev/null
    say "swarm initialised (node $(docker info --format '{{.Swarm.NodeID}}'))" ;;
  *)
    missing "the engine's swarm state is '$state'; fix it by hand (docker swarm leave --force, then docker swarm init --advertise-addr 127.0.0.1)" ;;
esac
