#!/usr/bin/env bash
# Session 56 chain 4 (AMD EPYC host): issue 4's 2 % random-loss link on the real stack for the packet floor with the standing-queue test, beside the default and Cubic (seed 117).
set -u
WT=/work/s56/wt
cd $WT
export PYTHONPATH=$WT/server PCCSTREAM_CACHE=/work/main/.cache
P=/work/main/.venv/bin/pccstream
OUT=/work/s56/out
stamp() { echo "$1 $(date -u +%T) $(cat /proc/loadavg)" >>$OUT/loads.txt; }
until grep -q done4 $OUT/loads.txt; do sleep 15; done
while [ "$(cut -d' ' -f1 /proc/loadavg | cut -d. -f1)" -ge 1 ]; do sleep 20; done
BQ=vivace:increase_boundary_floor_packets=5:ss_exit_min_queue=true
stamp "loss start"
$P bench transfer --cc vivace,$BQ,cubic --scenario loss-2pct-12mbps-30ms --duration 60 --runs 3 --seed 117 --max-load 1.0 --json >$OUT/loss.json 2>$OUT/loss.log
stamp "loss end"
echo done5 >>$OUT/loads.txt
