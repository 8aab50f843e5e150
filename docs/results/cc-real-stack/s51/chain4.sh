#!/usr/bin/env bash
# Session 51 chain 4: the floor 4 % under capacity (decrease_to_capacity=2) with the cap, on issue 4's 1-BDP link beside the default.
set -u
cd /work/main
export PYTHONPATH=/work/main/server PCCSTREAM_CACHE=/work/main/.cache
P=/work/main/.venv/bin/pccstream
OUT=/work/s51/out
CF2=vivace:increase_boundary_max=0.05:decrease_to_capacity=2:decrease_to_capacity_window_s=2
stamp() { echo "$1 $(date -u +%T) $(cat /proc/loadavg)" >>$OUT/loads.txt; }
stamp "1bdp2 start"
$P bench transfer --cc vivace,$CF2 --scenario const-12mbps-30ms-1bdp --duration 60 --runs 5 --seed 94 --max-load 1.0 --json >$OUT/1bdp-k2.json.partial 2>$OUT/1bdp-k2.err && mv $OUT/1bdp-k2.json.partial $OUT/1bdp-k2.json
stamp "1bdp2 end"
echo done4 >>$OUT/loads.txt
