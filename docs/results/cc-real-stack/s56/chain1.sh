#!/usr/bin/env bash
# Session 56 chain 1 (AMD EPYC host): Fig. 5.2 at 3 x 10 Mbit/s on a new network (seed 112): the default, session 55's packet floor under the increase boundary, the floor with HyStart's standing-queue test on slow start's latency exits, and BBR; then issue 4's links on the real stack for the default and the combination (seeds 113, 114).
set -u
WT=/work/s56/wt
cd $WT
export PYTHONPATH=$WT/server PCCSTREAM_CACHE=/work/main/.cache
P=/work/main/.venv/bin/pccstream
OUT=/work/s56/out
stamp() { echo "$1 $(date -u +%T) $(cat /proc/loadavg)" >>$OUT/loads.txt; }
while [ "$(cut -d' ' -f1 /proc/loadavg | cut -d. -f1)" -ge 1 ]; do sleep 20; done
BF=vivace:increase_boundary_floor_packets=5
BQ=$BF:ss_exit_min_queue=true
stamp "fig52 start"
$P ab --cc vivace,$BF,$BQ,bbr --runs 5 --duration 60 --seed 112 --max-load 1.5 --datagram-size 1452 \
  --scenario video-3viewers --viewers 3 --bitrate 10000 --media /work/main/.cache/media/fig52-10000k-480p \
  --db $OUT/fig52-10000k-s56-1452.sqlite.partial >$OUT/fig52.log 2>&1 \
  && mv $OUT/fig52-10000k-s56-1452.sqlite.partial $OUT/fig52-10000k-s56-1452.sqlite
stamp "fig52 end"
echo done1 >>$OUT/loads.txt
while [ "$(cut -d' ' -f1 /proc/loadavg | cut -d. -f1)" -ge 1 ]; do sleep 20; done
stamp "two start"
$P bench transfer --cc vivace,$BQ --flows 2 --scenario const-12mbps-30ms-1bdp --duration 40 --runs 5 --seed 113 --max-load 1.0 --json >$OUT/two.json 2>$OUT/two.log
stamp "two end; 1bdp start"
$P bench transfer --cc vivace,$BQ --scenario const-12mbps-30ms-1bdp --duration 60 --runs 3 --seed 114 --max-load 1.0 --json >$OUT/1bdp.json 2>$OUT/1bdp.log
stamp "1bdp end"
echo done2 >>$OUT/loads.txt
