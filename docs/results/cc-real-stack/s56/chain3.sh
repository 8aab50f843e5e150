#!/usr/bin/env bash
# Session 56 chain 3 (AMD EPYC host): Fig. 5.1 at 15 Mbit/s on a new network (seed 116): the packet floor with the standing-queue test against the default and Cubic (the arm level with it in session 54), before either could become the default.
set -u
WT=/work/s56/wt
cd $WT
export PYTHONPATH=$WT/server PCCSTREAM_CACHE=/work/main/.cache
P=/work/main/.venv/bin/pccstream
OUT=/work/s56/out
stamp() { echo "$1 $(date -u +%T) $(cat /proc/loadavg)" >>$OUT/loads.txt; }
until grep -q done3 $OUT/loads.txt; do sleep 15; done
while [ "$(cut -d' ' -f1 /proc/loadavg | cut -d. -f1)" -ge 1 ]; do sleep 20; done
BQ=vivace:increase_boundary_floor_packets=5:ss_exit_min_queue=true
stamp "fig51 start"
$P ab --cc vivace,$BQ,cubic --runs 5 --duration 60 --seed 116 --max-load 1.5 --datagram-size 1452 \
  --scenario video-rttflap --bitrate 15000 \
  --db $OUT/fig51-15000k-s56-1452.sqlite.partial >$OUT/fig51.log 2>&1 \
  && mv $OUT/fig51-15000k-s56-1452.sqlite.partial $OUT/fig51-15000k-s56-1452.sqlite
stamp "fig51 end"
echo done4 >>$OUT/loads.txt
