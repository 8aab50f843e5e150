#!/usr/bin/env bash
# Session 56 chain 2 (AMD EPYC host): Fig. 5.2 at 3 x 10 Mbit/s again on another network (seed 115): the packet floor with the standing-queue test on slow start's latency exits, against BBR and Cubic.
set -u
WT=/work/s56/wt
cd $WT
export PYTHONPATH=$WT/server PCCSTREAM_CACHE=/work/main/.cache
P=/work/main/.venv/bin/pccstream
OUT=/work/s56/out
stamp() { echo "$1 $(date -u +%T) $(cat /proc/loadavg)" >>$OUT/loads.txt; }
until grep -q done2 $OUT/loads.txt; do sleep 15; done
while [ "$(cut -d' ' -f1 /proc/loadavg | cut -d. -f1)" -ge 1 ]; do sleep 20; done
BQ=vivace:increase_boundary_floor_packets=5:ss_exit_min_queue=true
stamp "fig52b start"
$P ab --cc $BQ,bbr,cubic --runs 5 --duration 60 --seed 115 --max-load 1.5 --datagram-size 1452 \
  --scenario video-3viewers --viewers 3 --bitrate 10000 --media /work/main/.cache/media/fig52-10000k-480p \
  --db $OUT/fig52-10000k-s56b-1452.sqlite.partial >$OUT/fig52b.log 2>&1 \
  && mv $OUT/fig52-10000k-s56b-1452.sqlite.partial $OUT/fig52-10000k-s56b-1452.sqlite
stamp "fig52b end"
echo done3 >>$OUT/loads.txt
