#!/usr/bin/env bash
# Session 58 chain 4 (Intel Xeon host), replacing chains 2-3 after Fig. 5.2 (seed 124): the cap on latency-only decreases (decrease_boundary_max_latency_only, new, off) against the default on Fig. 5.2 at 3 x 10 Mbit/s (seed 133) and Fig. 5.1 at 50 Mbit/s (seed 134); then the 1-BDP link, interleaved.
set -u
WT=/work/s58/wt2
cd $WT
export PYTHONPATH=$WT/server PCCSTREAM_CACHE=/work/main/.cache
P=/work/main/.venv/bin/pccstream
OUT=/work/s58/out
M10=/work/main/.cache/media/fig52-10000k-480p
M50=/work/main/.cache/media/fig51-50000k-480p
DBL=vivace:decrease_boundary_max=0.05:decrease_boundary_max_latency_only=1
stamp() { echo "$1 $(date -u +%T) $(cat /proc/loadavg)" >>$OUT/loads.txt; }
calm() { while [ "$(cut -d' ' -f1 /proc/loadavg | cut -d. -f1)" -ge 1 ]; do sleep 20; done; }
until grep -q "fig52 end" $OUT/loads.txt; do sleep 2; done
pkill -f chain2.sh
calm
stamp "fig52-dbl start"
$P ab --cc $DBL,vivace --scenario video-3viewers --viewers 3 --bitrate 10000 --runs 5 --duration 60 --seed 133 \
  --max-load 1.5 --datagram-size 1452 --media $M10 \
  --db $OUT/fig52-10000k-s58b-1452.sqlite.partial >$OUT/fig52-dbl.log 2>&1 \
  && mv $OUT/fig52-10000k-s58b-1452.sqlite.partial $OUT/fig52-10000k-s58b-1452.sqlite
stamp "fig52-dbl end"
calm
stamp "fig51-50-dbl start"
$P ab --cc $DBL,vivace --scenario video-rttflap --bitrate 50000 --runs 4 --duration 60 --seed 134 \
  --max-load 1.5 --datagram-size 1452 --media $M50 \
  --db $OUT/fig51-50000k-s58b-480p.sqlite.partial >$OUT/fig51-50-dbl.log 2>&1 \
  && mv $OUT/fig51-50000k-s58b-480p.sqlite.partial $OUT/fig51-50000k-s58b-480p.sqlite
stamp "fig51-50-dbl end"
calm
stamp "1bdp-dbl start"
$P bench transfer --cc vivace,$DBL --scenario const-12mbps-30ms-1bdp --duration 60 --runs 3 --seed 135 --max-load 1.0 --json >$OUT/1bdp-dbl.json 2>$OUT/1bdp-dbl.log
stamp "1bdp-dbl end"
echo done4 >>$OUT/loads.txt
