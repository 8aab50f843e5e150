#!/usr/bin/env bash
# The host's 1-BDP latency floor today: a constant rate at vivace's utilization, beside vivace (session 44's method).
set -u
cd /work/s59/wt
export PYTHONPATH=/work/s59/wt/server PCCSTREAM_CACHE=/work/main/.cache
OUT=/work/s59/out
stamp() { echo "$1 $(date -u +%T) $(cat /proc/loadavg)" >>$OUT/loads.txt; }
calm() { while [ "$(cut -d' ' -f1 /proc/loadavg | cut -d. -f1)" -ge 1 ]; do sleep 20; done; }
calm
stamp "floor start"
/work/main/.venv/bin/pccstream bench transfer --cc fixed-rate:rate_mbps=10.8,vivace --scenario const-12mbps-30ms-1bdp --duration 60 --runs 3 --seed 141 --max-load 1.0 --json >$OUT/1bdp-floor.json 2>$OUT/1bdp-floor.log
stamp "floor end"
