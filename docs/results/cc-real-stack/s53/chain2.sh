#!/usr/bin/env bash
# Session 53 chain 2 (AMD EPYC host): path_step_ms=5 (PS5) beside vivace, BBR and Cubic at Fig. 5.1 30 Mbit/s; waits for chain 1. Stopped 12 s after its start, before any run was stored, for chain 3 (loads.txt).
set -u
WT=/work/s53/wt
cd $WT
export PYTHONPATH=$WT/server PCCSTREAM_CACHE=/work/main/.cache
P=/work/main/.venv/bin/pccstream
OUT=/work/s53/out
PS5=vivace:path_step_ms=5
stamp() { echo "$1 $(date -u +%T) $(cat /proc/loadavg)" >>$OUT/loads.txt; }
until grep -q done1 $OUT/loads.txt; do sleep 20; done
while [ "$(cut -d' ' -f1 /proc/loadavg | cut -d. -f1)" -ge 1 ]; do sleep 20; done
stamp "fig51-30000k-s53-1452 start"
$P ab --cc vivace,$PS5,bbr,cubic --scenario video-rttflap --bitrate 30000 --runs 5 --duration 60 --seed 105 \
  --max-load 1.5 --datagram-size 1452 --db $OUT/fig51-30000k-s53-1452.sqlite.partial >$OUT/v30.log 2>&1 \
  && mv $OUT/fig51-30000k-s53-1452.sqlite.partial $OUT/fig51-30000k-s53-1452.sqlite
stamp "fig51-30000k-s53-1452 end"
echo done2 >>$OUT/loads.txt
