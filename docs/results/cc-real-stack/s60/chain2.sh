#!/usr/bin/env bash
# Session 60 chain 2 (Intel Xeon host): the gate measured above the last 2 s's smallest RTT (rtt_gradient_min_queue_window_s=2) at 3 ms, against today's default and BBR in Fig. 5.1 at 50 Mbit/s (seed 144); its 1-BDP latency and two flows.
set -u
WT=/work/s60/wt2
cd $WT
export PYTHONPATH=$WT/server PCCSTREAM_CACHE=/work/main/.cache
P=/work/main/.venv/bin/pccstream
OUT=/work/s60/out
M50=/work/main/.cache/media/fig51-50000k-480p
MQW=vivace:rtt_gradient_min_queue_ms=3:rtt_gradient_min_queue_window_s=2
stamp() { echo "$1 $(date -u +%T) $(cat /proc/loadavg)" >>$OUT/loads.txt; }
calm() { while [ "$(cut -d' ' -f1 /proc/loadavg | cut -d. -f1)" -ge 1 ]; do sleep 20; done; }
calm
stamp "fig51-50w start"
$P ab --cc $MQW,vivace,bbr --scenario video-rttflap --bitrate 50000 --runs 5 --duration 60 --seed 144 \
  --max-load 1.5 --datagram-size 1452 --media $M50 \
  --db $OUT/fig51-50000k-s60w-480p.sqlite.partial >$OUT/fig51-50w.log 2>&1 \
  && mv $OUT/fig51-50000k-s60w-480p.sqlite.partial $OUT/fig51-50000k-s60w-480p.sqlite
stamp "fig51-50w end"
calm
stamp "1bdp-w start"
$P bench transfer --cc $MQW,vivace --scenario const-12mbps-30ms-1bdp --duration 60 --runs 3 --seed 145 --max-load 1.0 --json >$OUT/1bdp-mqw.json 2>$OUT/1bdp-mqw.log
stamp "1bdp-w end"
calm
stamp "two-w start"
$P bench transfer --cc $MQW --flows 2 --scenario const-12mbps-30ms-1bdp --duration 40 --runs 5 --seed 146 --max-load 1.0 --json >$OUT/two-mqw.json 2>$OUT/two-mqw.log
stamp "two-w end"
echo done2 >>$OUT/loads.txt
