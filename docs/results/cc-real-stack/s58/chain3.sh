#!/usr/bin/env bash
# Session 58 chain 3 (Intel Xeon host), replacing chain 2 after Fig. 5.2: five more interleaved pairs on the 1-BDP link (the default and the cap sit either side of issue 4's 5 ms here), then Fig. 5.1 at 30 Mbit/s (seed 125).
set -u
WT=/work/s58/wt
cd $WT
export PYTHONPATH=$WT/server PCCSTREAM_CACHE=/work/main/.cache
P=/work/main/.venv/bin/pccstream
OUT=/work/s58/out
DB=vivace:decrease_boundary_max=0.05
stamp() { echo "$1 $(date -u +%T) $(cat /proc/loadavg)" >>$OUT/loads.txt; }
calm() { while [ "$(cut -d' ' -f1 /proc/loadavg | cut -d. -f1)" -ge 1 ]; do sleep 20; done; }
until grep -q "fig52 end" $OUT/loads.txt; do sleep 2; done
pkill -f chain2.sh
calm
stamp "1bdp-pair2 start"
$P bench transfer --cc vivace,$DB --scenario const-12mbps-30ms-1bdp --duration 60 --runs 5 --seed 132 --max-load 1.0 --json >$OUT/1bdp-pair2.json 2>$OUT/1bdp-pair2.log
stamp "1bdp-pair2 end"
calm
stamp "fig51-30 start"
$P ab --cc $DB,vivace,bbr --scenario video-rttflap --bitrate 30000 --runs 5 --duration 60 --seed 125 \
  --max-load 1.5 --datagram-size 1452 \
  --db $OUT/fig51-30000k-s58-1452.sqlite.partial >$OUT/fig51-30.log 2>&1 \
  && mv $OUT/fig51-30000k-s58-1452.sqlite.partial $OUT/fig51-30000k-s58-1452.sqlite
stamp "fig51-30 end"
echo done3 >>$OUT/loads.txt
