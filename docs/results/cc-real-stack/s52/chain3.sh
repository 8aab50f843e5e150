#!/usr/bin/env bash
# Session 52 chain 3 (AMD EPYC host): Fig. 5.1 at 30 Mbit/s, vivace beside BBR and Cubic (CF2 dropped after Fig. 5.2); after chain 2.
set -u
WT=/work/s52/wt
cd $WT
export PYTHONPATH=$WT/server PCCSTREAM_CACHE=/work/main/.cache
P=/work/main/.venv/bin/pccstream
OUT=/work/s52/out
CF2=vivace:increase_boundary_max=0.05:decrease_to_capacity=2:decrease_to_capacity_window_s=2
stamp() { echo "$1 $(date -u +%T) $(cat /proc/loadavg)" >>$OUT/loads.txt; }
until grep -q '^done2' $OUT/loads.txt; do sleep 15; done
while [ "$(cut -d' ' -f1 /proc/loadavg | cut -d. -f1)" -ge 1 ]; do sleep 20; done
stamp "v30 start"
$P ab --cc vivace,bbr,cubic --scenario video-rttflap --bitrate 30000 --runs 5 --duration 60 --seed 100 \
  --max-load 1.5 --datagram-size 1452 --db $OUT/fig51-30000k-s52-1452.sqlite.partial >$OUT/v30.log 2>&1 \
  && mv $OUT/fig51-30000k-s52-1452.sqlite.partial $OUT/fig51-30000k-s52-1452.sqlite
stamp "v30 end"
echo done3 >>$OUT/loads.txt
