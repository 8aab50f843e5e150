#!/usr/bin/env bash
# Session 57 chain 4: Fig. 5.1 at 30 Mbit/s again, today's default beside BBR on five more networks (seed 121).
set -u
WT=/work/s57/wt
cd $WT
export PYTHONPATH=$WT/server PCCSTREAM_CACHE=/work/main/.cache
P=/work/main/.venv/bin/pccstream
OUT=/work/s57/out
stamp() { echo "$1 $(date -u +%T) $(cat /proc/loadavg)" >>$OUT/loads.txt; }
until grep -q done4 $OUT/loads.txt; do sleep 20; done
while [ "$(cut -d' ' -f1 /proc/loadavg | cut -d. -f1)" -ge 1 ]; do sleep 20; done
stamp "fig51-30b start"
$P ab --cc vivace,bbr --scenario video-rttflap --bitrate 30000 --runs 5 --duration 60 --seed 121 \
  --max-load 1.5 --datagram-size 1452 \
  --db $OUT/fig51-30000k-s57b-1452.sqlite.partial >$OUT/fig51-30b.log 2>&1 \
  && mv $OUT/fig51-30000k-s57b-1452.sqlite.partial $OUT/fig51-30000k-s57b-1452.sqlite
stamp "fig51-30b end"
echo done5 >>$OUT/loads.txt
