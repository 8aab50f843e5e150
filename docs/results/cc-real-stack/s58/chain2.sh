#!/usr/bin/env bash
# Session 58 chain 2 (Intel Xeon host, 2 vCPUs), after chain 1's issue-4 runs: the 1-BDP link with the default and the cap interleaved (the cap alone read 5.20 ms of p95 RTT inflation, over issue 4's 5 ms); Fig. 5.2 at 3 x 10 Mbit/s (seed 124); Fig. 5.1 at 30 (seed 125) and 15 Mbit/s (seed 126).
set -u
WT=/work/s58/wt
cd $WT
export PYTHONPATH=$WT/server PCCSTREAM_CACHE=/work/main/.cache
P=/work/main/.venv/bin/pccstream
OUT=/work/s58/out
M10=/work/main/.cache/media/fig52-10000k-480p
DB=vivace:decrease_boundary_max=0.05
stamp() { echo "$1 $(date -u +%T) $(cat /proc/loadavg)" >>$OUT/loads.txt; }
calm() { while [ "$(cut -d' ' -f1 /proc/loadavg | cut -d. -f1)" -ge 1 ]; do sleep 20; done; }
while pgrep -f "bench transfer" >/dev/null; do sleep 5; done
stamp "issue4 end"
calm
stamp "1bdp-pair start"
$P bench transfer --cc vivace,$DB --scenario const-12mbps-30ms-1bdp --duration 60 --runs 3 --seed 131 --max-load 1.0 --json >$OUT/1bdp-pair.json 2>$OUT/1bdp-pair.log
stamp "1bdp-pair end"
calm
stamp "fig52 start"
$P ab --cc $DB,vivace,bbr --scenario video-3viewers --viewers 3 --bitrate 10000 --runs 5 --duration 60 --seed 124 \
  --max-load 1.5 --datagram-size 1452 --media $M10 \
  --db $OUT/fig52-10000k-s58-1452.sqlite.partial >$OUT/fig52.log 2>&1 \
  && mv $OUT/fig52-10000k-s58-1452.sqlite.partial $OUT/fig52-10000k-s58-1452.sqlite
stamp "fig52 end"
calm
stamp "fig51-30 start"
$P ab --cc $DB,vivace,bbr --scenario video-rttflap --bitrate 30000 --runs 5 --duration 60 --seed 125 \
  --max-load 1.5 --datagram-size 1452 \
  --db $OUT/fig51-30000k-s58-1452.sqlite.partial >$OUT/fig51-30.log 2>&1 \
  && mv $OUT/fig51-30000k-s58-1452.sqlite.partial $OUT/fig51-30000k-s58-1452.sqlite
stamp "fig51-30 end"
echo done2 >>$OUT/loads.txt
