#!/usr/bin/env bash
# Session 60 chain 1 (Intel Xeon host): the standing-queue gate on the RTT gradient (rtt_gradient_min_queue_ms, off) at 1.5 and 3 ms against today's default and BBR in Fig. 5.1 at 50 Mbit/s (seed 141); issue 4's 1-BDP latency and two flows for the gate.
set -u
WT=/work/s60/wt
cd $WT
export PYTHONPATH=$WT/server PCCSTREAM_CACHE=/work/main/.cache
P=/work/main/.venv/bin/pccstream
OUT=/work/s60/out
M50=/work/main/.cache/media/fig51-50000k-480p
MQ15=vivace:rtt_gradient_min_queue_ms=1.5
MQ3=vivace:rtt_gradient_min_queue_ms=3
stamp() { echo "$1 $(date -u +%T) $(cat /proc/loadavg)" >>$OUT/loads.txt; }
calm() { while [ "$(cut -d' ' -f1 /proc/loadavg | cut -d. -f1)" -ge 1 ]; do sleep 20; done; }
calm
stamp "fig51-50 start"
$P ab --cc $MQ15,$MQ3,vivace,bbr --scenario video-rttflap --bitrate 50000 --runs 5 --duration 60 --seed 141 \
  --max-load 1.5 --datagram-size 1452 --media $M50 \
  --db $OUT/fig51-50000k-s60-480p.sqlite.partial >$OUT/fig51-50.log 2>&1 \
  && mv $OUT/fig51-50000k-s60-480p.sqlite.partial $OUT/fig51-50000k-s60-480p.sqlite
stamp "fig51-50 end"
calm
stamp "1bdp start"
$P bench transfer --cc $MQ15,$MQ3 --scenario const-12mbps-30ms-1bdp --duration 60 --runs 3 --seed 142 --max-load 1.0 --json >$OUT/1bdp-mq.json 2>$OUT/1bdp-mq.log
stamp "1bdp end"
calm
stamp "two start"
$P bench transfer --cc $MQ15 --flows 2 --scenario const-12mbps-30ms-1bdp --duration 40 --runs 5 --seed 143 --max-load 1.0 --json >$OUT/two-mq15.json 2>$OUT/two-mq15.log
stamp "two end"
echo done1 >>$OUT/loads.txt
