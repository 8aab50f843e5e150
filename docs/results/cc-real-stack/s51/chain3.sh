#!/usr/bin/env bash
# Session 51 chain 3 (after chain 2): Fig. 5.1 at 15 Mbit/s on a second network seed, cap + floor against Cubic.
set -u
WT=/work/s51/wt
cd $WT
export PYTHONPATH=$WT/server PCCSTREAM_CACHE=/work/main/.cache
P=/work/main/.venv/bin/pccstream
OUT=/work/s51/out
CF=vivace:increase_boundary_max=0.05:decrease_to_capacity=1:decrease_to_capacity_window_s=2
stamp() { echo "$1 $(date -u +%T) $(cat /proc/loadavg)" >>$OUT/loads.txt; }
until grep -q '^done2$' $OUT/loads.txt; do sleep 20; done
while [ "$(cut -d' ' -f1 /proc/loadavg | cut -d. -f1)" -ge 1 ]; do sleep 20; done
stamp "v15b start"
$P ab --cc cubic,vivace,$CF --scenario video-rttflap --bitrate 15000 --runs 5 --duration 60 --seed 93 \
  --max-load 1.5 --datagram-size 1452 --db $OUT/fig51-15000k-s51b-1452.sqlite.partial >$OUT/v15b.log 2>&1 \
  && mv $OUT/fig51-15000k-s51b-1452.sqlite.partial $OUT/fig51-15000k-s51b-1452.sqlite
stamp "v15b end"
echo done3 >>$OUT/loads.txt
# the ab line's arms gained vivace while the chain waited for chain 2 (the comment above was written before)
