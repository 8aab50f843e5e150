#!/usr/bin/env bash
# Session 62 chain 3 (Intel Xeon host): after chain 2, Fig. 5.2 at 3 x 10 Mbit/s with rtt_gradient_autocorr=1 (the new default's setting) against BBR and Cubic (seed 167).
set -u
WT=/work/s62/wt
cd $WT
export PYTHONPATH=$WT/server PCCSTREAM_CACHE=/work/main/.cache
P=/work/main/.venv/bin/pccstream
OUT=/work/s62/out
M52=/work/main/.cache/media/fig52-10000k-480p
AC=vivace:rtt_gradient_autocorr=1
stamp() { echo "$1 $(date -u +%T) $(cat /proc/loadavg)" >>$OUT/loads.txt; }
calm() { while [ "$(cut -d' ' -f1 /proc/loadavg | cut -d. -f1)" -ge 1 ]; do sleep 20; done; }
until grep -q done2 $OUT/loads.txt; do sleep 15; done
calm
stamp "fig52-ac2 start"
$P ab --cc $AC,bbr,cubic --scenario video-3viewers --viewers 3 --bitrate 10000 --runs 5 --duration 60 --seed 167 \
  --max-load 1.5 --datagram-size 1452 --media $M52 \
  --db $OUT/fig52-10000k-s62b-1452.sqlite.partial >$OUT/fig52-ac2.log 2>&1 \
  && mv $OUT/fig52-10000k-s62b-1452.sqlite.partial $OUT/fig52-10000k-s62b-1452.sqlite
stamp "fig52-ac2 end"
echo done3 >>$OUT/loads.txt
