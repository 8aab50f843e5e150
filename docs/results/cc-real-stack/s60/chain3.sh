#!/usr/bin/env bash
# Session 60 chain 3 (Intel Xeon host): Allegro-Latency, today's default and BBR in Fig. 5.1 at 50 Mbit/s (seed 148); Allegro-Latency has not run at 50 Mbit/s on this host.
set -u
WT=/work/s60/wt2
cd $WT
export PYTHONPATH=$WT/server PCCSTREAM_CACHE=/work/main/.cache
P=/work/main/.venv/bin/pccstream
OUT=/work/s60/out
M50=/work/main/.cache/media/fig51-50000k-480p
stamp() { echo "$1 $(date -u +%T) $(cat /proc/loadavg)" >>$OUT/loads.txt; }
calm() { while [ "$(cut -d' ' -f1 /proc/loadavg | cut -d. -f1)" -ge 1 ]; do sleep 20; done; }
calm
stamp "fig51-50a start"
$P ab --cc allegro-latency,vivace,bbr --scenario video-rttflap --bitrate 50000 --runs 5 --duration 60 --seed 148 \
  --max-load 1.5 --datagram-size 1452 --media $M50 \
  --db $OUT/fig51-50000k-s60a-480p.sqlite.partial >$OUT/fig51-50a.log 2>&1 \
  && mv $OUT/fig51-50000k-s60a-480p.sqlite.partial $OUT/fig51-50000k-s60a-480p.sqlite
stamp "fig51-50a end"
echo done3 >>$OUT/loads.txt
