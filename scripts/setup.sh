#!/usr/bin/env bash
# Installs everything nodescale needs on a Debian machine (idempotent): npm packages, HAProxy, wrk, JMeter, a Docker engine in a swarm.
set -euo pipefail
cd "$(dirname "$0")/.."

need_apt=()
command -v haproxy >/dev/null 2>&1 || need_apt+=(haproxy)
command -v wrk >/dev/null 2>&1 || need_apt+=(wrk)
command -v java >/dev/null 2>&1 || need_apt+=(openjdk-17-jre-headless)
command -v mvn >/dev/null 2>&1 || need_apt+=(maven)
command -v unzip >/dev/null 2>&1 || need_apt+=(unzip)
command -v chromium >/dev/null 2>&1 || need_apt+=(chromium)   # the report test opens the HTML report in headless Chromium
command -v docker-registry >/dev/null 2>&1 || need_apt+=(docker-registry)   # the control plane's image registry, offline (Swarm multi-node runs)
if [ ${#need_apt[@]} -gt 0 ]; then
  if [ "$(id -u)" = 0 ] && command -v apt-get >/dev/null 2>&1; then
    echo "setup: apt-get install ${need_apt[*]}"
    apt-get -o DPkg::Lock::Timeout=600 update -qq
    DEBIAN_FRONTEND=noninteractive apt-get -o DPkg::Lock::Timeout=600 install -y -qq "${need_apt[@]}" >/dev/null
    # only docker-registry's binary is used (in an image); a host service on :5000 would take the control plane's port
    if [[ " ${need_apt[*]} " == *" docker-registry "* ]] && [ -d /run/systemd/system ]; then systemctl disable --now docker-registry >/dev/null 2>&1 || true; fi
  else
    echo "setup: please install: ${need_apt[*]} (e.g. sudo apt-get install ${need_apt[*]})" >&2
  fi
fi

echo "setup: npm ci"
npm ci --no-audit --no-fund --loglevel=error

echo "setup: JMeter"
node executor/jmeter-install.js >/dev/null
echo "setup: Docker engine and swarm"
bash scripts/docker-up.sh
echo "setup: done"
