#!/usr/bin/env bash
# Session 61 chain 3 (Intel Xeon host; replaces chain 2 before it ran): the noise test counting at most 8 RTT samples per MI as independent (rtt_gradient_max_samples=8) against today's default and BBR at 50 Mbit/s (seed 153) and in Fig. 5.2 (seed 154), with issue 4's 1-BDP and two-flow links between; runs after chain 1.
set -u
WT=/work/s61/wt
cd $WT
export PYTHONPATH=$WT/server PCCSTREAM_CACHE=/work/main/.cache
P=/work/main/.venv/bin/pccstream
OUT=/work/s61/out
M50=/work/main/.cache/media/fig51-50000k-480p
M52=/work/main/.cache/media/fig52-10000k-480p
N8=vivace:rtt_gradient_max_samples=8
stamp() { echo "$1 $(date -u +%T) $(cat /proc/loadavg)" >>$OUT/loads.txt; }
calm() { while [ "$(cut -d' ' -f1 /proc/loadavg | cut -d. -f1)" -ge 1 ]; do sleep 20; done; }
until grep -q done1 $OUT/loads.txt; do sleep 15; done
calm
stamp "fig51-50n start"
$P ab --cc $N8,vivace,bbr --scenario video-rttflap --bitrate 50000 --runs 5 --duration 60 --seed 153 \
  --max-load 1.5 --datagram-size 1452 --media $M50 \
  --db $OUT/fig51-50000k-s61n-480p.sqlite.partial >$OUT/fig51-50n.log 2>&1 \
  && mv $OUT/fig51-50000k-s61n-480p.sqlite.partial $OUT/fig51-50000k-s61n-480p.sqlite
stamp "fig51-50n end"
calm
stamp "1bdp-n8 start"
$P bench transfer --cc $N8,vivace --scenario const-12mbps-30ms-1bdp --duration 60 --runs 3 --seed 155 --max-load 1.0 --json \
  >$OUT/1bdp-n8.json.partial 2>$OUT/1bdp-n8.log && mv $OUT/1bdp-n8.json.partial $OUT/1bdp-n8.json
stamp "1bdp-n8 end"
stamp "two-n8 start"
$P bench transfer --cc $N8 --flows 2 --scenario const-12mbps-30ms-1bdp --duration 40 --runs 5 --seed 156 --max-load 1.0 --json \
  >$OUT/two-n8.json.partial 2>$OUT/two-n8.log && mv $OUT/two-n8.json.partial $OUT/two-n8.json
stamp "two-n8 end"
calm
stamp "fig52-n8 start"
$P ab --cc $N8,vivace,bbr --scenario video-3viewers --viewers 3 --bitrate 10000 --runs 5 --duration 60 --seed 154 \
  --max-load 1.5 --datagram-size 1452 --media $M52 \
  --db $OUT/fig52-10000k-s61n-1452.sqlite.partial >$OUT/fig52-n8.log 2>&1 \
  && mv $OUT/fig52-10000k-s61n-1452.sqlite.partial $OUT/fig52-10000k-s61n-1452.sqlite
stamp "fig52-n8 end"
echo done3 >>$OUT/loads.txt
