#!/usr/bin/env bash
# Session 58 chain 5 (Intel Xeon host): the 1-BDP link, the default and the latency-only cap interleaved (chain 4's last step, run after the docs' first draft).
set -u
WT=/work/s58/wt2
cd $WT
export PYTHONPATH=$WT/server PCCSTREAM_CACHE=/work/main/.cache
P=/work/main/.venv/bin/pccstream
OUT=/work/s58/out
DBL=vivace:decrease_boundary_max=0.05:decrease_boundary_max_latency_only=1
stamp() { echo "$1 $(date -u +%T) $(cat /proc/loadavg)" >>$OUT/loads.txt; }
calm() { while [ "$(cut -d' ' -f1 /proc/loadavg | cut -d. -f1)" -ge 1 ]; do sleep 20; done; }
calm
stamp "1bdp-dbl start"
$P bench transfer --cc vivace,$DBL --scenario const-12mbps-30ms-1bdp --duration 60 --runs 3 --seed 135 --max-load 1.0 --json >$OUT/1bdp-dbl.json 2>$OUT/1bdp-dbl.log
stamp "1bdp-dbl end"
echo done5 >>$OUT/loads.txt
