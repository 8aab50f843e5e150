#!/usr/bin/env bash
# Session 55 chain 3 (AMD EPYC host): issue 4's 1-BDP link and two flows on the real stack, the packet floor under the increase boundary beside the default, interleaved.
set -u
WT=/work/s55/wt
cd $WT
export PYTHONPATH=$WT/server PCCSTREAM_CACHE=/work/main/.cache
P=/work/main/.venv/bin/pccstream
OUT=/work/s55/out
stamp() { echo "$1 $(date -u +%T) $(cat /proc/loadavg)" >>$OUT/loads.txt; }
while [ "$(cut -d' ' -f1 /proc/loadavg | cut -d. -f1)" -ge 1 ]; do sleep 20; done
BF=vivace:increase_boundary_floor_packets=5
stamp "1bdp start"
$P bench transfer --cc vivace,$BF --scenario const-12mbps-30ms-1bdp --duration 60 --runs 3 --seed 110 --max-load 1.0 --json >$OUT/1bdp.json 2>$OUT/1bdp.log
stamp "1bdp end; two start"
$P bench transfer --cc vivace,$BF --flows 2 --scenario const-12mbps-30ms-1bdp --duration 40 --runs 3 --seed 111 --max-load 1.0 --json >$OUT/two.json 2>$OUT/two.log
stamp "two end"
echo done4 >>$OUT/loads.txt
