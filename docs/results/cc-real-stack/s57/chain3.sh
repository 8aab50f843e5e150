#!/usr/bin/env bash
# Session 57 chain 3: Fig. 5.1 at 50 Mbit/s on this host with 480p media at 50 Mbit/s on the wire (seed 119), then Fig. 5.1 at 15 Mbit/s with today's default beside BBR and Cubic (seed 120).
set -u
WT=/work/s57/wt
cd $WT
export PYTHONPATH=$WT/server PCCSTREAM_CACHE=/work/main/.cache
P=/work/main/.venv/bin/pccstream
OUT=/work/s57/out
M=/work/main/.cache/media/fig51-50000k-480p
stamp() { echo "$1 $(date -u +%T) $(cat /proc/loadavg)" >>$OUT/loads.txt; }
until grep -q done2 $OUT/loads.txt; do sleep 20; done
while [ "$(cut -d' ' -f1 /proc/loadavg | cut -d. -f1)" -ge 1 ]; do sleep 20; done
stamp "fig51-50 start"
$P ab --cc vivace,allegro-latency,bbr,cubic --scenario video-rttflap --bitrate 50000 --runs 5 --duration 60 --seed 119 \
  --max-load 1.5 --datagram-size 1452 --media $M \
  --db $OUT/fig51-50000k-s57-480p.sqlite.partial >$OUT/fig51-50.log 2>&1 \
  && mv $OUT/fig51-50000k-s57-480p.sqlite.partial $OUT/fig51-50000k-s57-480p.sqlite
stamp "fig51-50 end"
echo done3 >>$OUT/loads.txt
while [ "$(cut -d' ' -f1 /proc/loadavg | cut -d. -f1)" -ge 1 ]; do sleep 20; done
stamp "fig51-15 start"
$P ab --cc vivace,bbr,cubic --scenario video-rttflap --bitrate 15000 --runs 5 --duration 60 --seed 120 \
  --max-load 1.5 --datagram-size 1452 \
  --db $OUT/fig51-15000k-s57-1452.sqlite.partial >$OUT/fig51-15.log 2>&1 \
  && mv $OUT/fig51-15000k-s57-1452.sqlite.partial $OUT/fig51-15000k-s57-1452.sqlite
stamp "fig51-15 end"
echo done4 >>$OUT/loads.txt
