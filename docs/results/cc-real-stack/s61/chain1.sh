#!/usr/bin/env bash
# Session 61 chain 1 (Intel Xeon host): the latency-only decrease cap (DBL) against today's default and BBR at 50 Mbit/s (seed 150) and in Fig. 5.2 at 3 x 10 Mbit/s (seed 151), then DBL on issue 4's 1-BDP link; evidence for making it the default now that the default trails BBR at 50 Mbit/s.
set -u
WT=/work/s61/wt
cd $WT
export PYTHONPATH=$WT/server PCCSTREAM_CACHE=/work/main/.cache
P=/work/main/.venv/bin/pccstream
OUT=/work/s61/out
M50=/work/main/.cache/media/fig51-50000k-480p
M52=/work/main/.cache/media/fig52-10000k-480p
DBL=vivace:decrease_boundary_max=0.05:decrease_boundary_max_latency_only=1
stamp() { echo "$1 $(date -u +%T) $(cat /proc/loadavg)" >>$OUT/loads.txt; }
calm() { while [ "$(cut -d' ' -f1 /proc/loadavg | cut -d. -f1)" -ge 1 ]; do sleep 20; done; }
calm
stamp "fig51-50 start"
$P ab --cc $DBL,vivace,bbr --scenario video-rttflap --bitrate 50000 --runs 5 --duration 60 --seed 150 \
  --max-load 1.5 --datagram-size 1452 --media $M50 \
  --db $OUT/fig51-50000k-s61-480p.sqlite.partial >$OUT/fig51-50.log 2>&1 \
  && mv $OUT/fig51-50000k-s61-480p.sqlite.partial $OUT/fig51-50000k-s61-480p.sqlite
stamp "fig51-50 end"
calm
stamp "fig52 start"
$P ab --cc $DBL,vivace,bbr --scenario video-3viewers --viewers 3 --bitrate 10000 --runs 5 --duration 60 --seed 151 \
  --max-load 1.5 --datagram-size 1452 --media $M52 \
  --db $OUT/fig52-10000k-s61-1452.sqlite.partial >$OUT/fig52.log 2>&1 \
  && mv $OUT/fig52-10000k-s61-1452.sqlite.partial $OUT/fig52-10000k-s61-1452.sqlite
stamp "fig52 end"
calm
stamp "1bdp start"
$P bench transfer --cc $DBL,vivace --scenario const-12mbps-30ms-1bdp --duration 60 --runs 3 --seed 152 --max-load 1.0 --json \
  >$OUT/1bdp-dbl.json.partial 2>$OUT/1bdp.log && mv $OUT/1bdp-dbl.json.partial $OUT/1bdp-dbl.json
stamp "1bdp end"
echo done1 >>$OUT/loads.txt
