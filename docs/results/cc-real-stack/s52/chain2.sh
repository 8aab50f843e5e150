#!/usr/bin/env bash
# Session 52 chain 2 (AMD EPYC host): Fig. 5.2 at 3 x 15 Mbit/s, CF2 beside vivace only (BBR starved this host in session 51).
set -u
WT=/work/s52/wt
cd $WT
export PYTHONPATH=$WT/server PCCSTREAM_CACHE=/work/main/.cache
P=/work/main/.venv/bin/pccstream
OUT=/work/s52/out
CF2=vivace:increase_boundary_max=0.05:decrease_to_capacity=2:decrease_to_capacity_window_s=2
stamp() { echo "$1 $(date -u +%T) $(cat /proc/loadavg)" >>$OUT/loads.txt; }
while [ "$(cut -d' ' -f1 /proc/loadavg | cut -d. -f1)" -ge 1 ]; do sleep 20; done
stamp "fig52 start"
$P ab --cc vivace,$CF2 --scenario video-3viewers --viewers 3 --bitrate 15000 --runs 5 --duration 60 --seed 99 \
  --media /work/main/.cache/media/fig52-15000k-480p --max-load 1.5 --datagram-size 1452 \
  --db $OUT/fig52-15000k-s52-1452.sqlite.partial >$OUT/fig52.log 2>&1 \
  && mv $OUT/fig52-15000k-s52-1452.sqlite.partial $OUT/fig52-15000k-s52-1452.sqlite
stamp "fig52 end"
echo done2 >>$OUT/loads.txt
