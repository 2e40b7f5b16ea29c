#!/usr/bin/env bash
# The many-core check (issue 26): what a machine of 16 cores or more shows of the load chain and the strategies, in one
# bounded pass of short local runs. Run from the project's root on such a machine (a bare one: after
# `bash .device-bundle/unpack.sh && export PATH=/tmp/nsb/bin:$PATH`, see the device README):
#   bash perf/many-core.sh OUT_DIR
# It writes OUT_DIR/log.txt (every run's text, each step's exit code and seconds) and OUT_DIR/runs.tgz (each run's
# run.json, the sweep's folder; RUNS sets where the runs are written). Each step is bounded (STEP_S seconds, default
# 150; the generator cost GEN_S, 240; the sweep THESIS_S, 270, with BUDGET 3m); D and W set the runs' measured and
# warm-up seconds (default 5 and 2).
# ONLY="name ..." runs those steps alone. What each step shows:
#   hs1, hs4       HAProxy in front of saturated replicas: slow, not dead (errors near 0, no replica marked down)
#   up4, cm12, pm2 the bottleneck's narration per strategy (one thread's core for up; idle cores for more workers)
#   cm8-base       --load-procs auto (the default) sizing generators on the 8 cores the server is not given
#   *-part         --server-cpus 0-1 for cm, pm2 and hs: every server process on cores 0-1, recorded in run.json
#   gen-cost       npm run perf:generator-cost: requests per generator CPU-second against wrk
#   thesis         experiments/multicore.yml's adaptive-thesis-machine profile: is raw Node's second core used
set -u
out=${1:?usage: bash perf/many-core.sh OUT_DIR}
runs=${RUNS:-$out/runs}
mkdir -p "$out" "$runs"
log=$out/log.txt
: > "$log"
echo "many-core check: $(nproc) cores, $(uname -r), node $(node --version), $(date -u +%FT%TZ)" | tee -a "$log"
# the cores' siblings (SMT): a generator on one thread of a core the server's thread shares is slowed by it
(lscpu -e=CPU,CORE,SOCKET,MAXMHZ 2>/dev/null || grep -H . /sys/devices/system/cpu/cpu*/topology/thread_siblings_list) >> "$log"

step () {
  local name=$1; shift
  if [ -n "${ONLY:-}" ] && [[ " $ONLY " != *" $name "* ]]; then return; fi
  local t0; t0=$(date +%s)
  echo "=== $name: $*" >> "$log"
  timeout "${STEP_S:-150}" "$@" >> "$log" 2>&1
  local rc=$?
  echo "=== $name: rc=$rc in $(( $(date +%s) - t0 )) s" | tee -a "$log"
}
run () {
  local name=$1; shift
  step "$name" node bin/executor.js run --backend local --samples none --duration "${D:-5}" --warmup "${W:-2}" \
    --out "$runs/$name" "$@"
}

run hs1 --strategy hs --instances 1 --benchmark cpu --concurrency 64
run hs4 --strategy hs --instances 4 --benchmark cpu --concurrency 64
run up4 --strategy up --instances 4 --benchmark cpu --concurrency 64
run cm12 --strategy cm --instances 12 --benchmark cpu --concurrency 64
run pm2-8 --strategy pm2 --instances 8 --benchmark cpu --concurrency 64
run cm8-base --strategy cm --instances 8 --server-cpus 0-7 --benchmark baseline --concurrency 512
run cm2-part --strategy cm --instances 2 --server-cpus 0-1 --benchmark cpu --concurrency 32
run pm2-2-part --strategy pm2 --instances 2 --server-cpus 0-1 --benchmark cpu --concurrency 32
run hs2-part --strategy hs --instances 2 --server-cpus 0-1 --benchmark cpu --concurrency 32
STEP_S=${GEN_S:-240} step gen-cost node perf/generator-cost.js --rounds 3
STEP_S=${THESIS_S:-270} step thesis node bin/executor.js sweep experiments/multicore.yml --profile adaptive-thesis-machine --until answered \
  --budget "${BUDGET:-3m}" --out "$runs/thesis"

find "$runs" \( -name run.json -o -name 'sweep*.json' -o -name '*.txt' -o -name 'calibration*.json' \) -print0 |
  tar -czf "$out/runs.tgz" --null -T - 2>/dev/null
cp results/calibration-multicore-page-thesis-machine.json "$out/" 2>/dev/null
echo "many-core check: done $(date -u +%FT%TZ)" | tee -a "$log"
