#!/usr/bin/env bash
# Session 62 chain 2 (Intel Xeon host): after chain 1, rtt_gradient_autocorr=1 against the default on issue 4's 2 % loss link (seed 164), a second 50 Mbit/s campaign with BBR (seed 165) to pool with chain 1's, and three more 1-BDP runs (seed 166).
set -u
WT=/work/s62/wt
cd $WT
export PYTHONPATH=$WT/server PCCSTREAM_CACHE=/work/main/.cache
P=/work/main/.venv/bin/pccstream
OUT=/work/s62/out
M50=/work/main/.cache/media/fig51-50000k-480p
AC=vivace:rtt_gradient_autocorr=1
stamp() { echo "$1 $(date -u +%T) $(cat /proc/loadavg)" >>$OUT/loads.txt; }
calm() { while [ "$(cut -d' ' -f1 /proc/loadavg | cut -d. -f1)" -ge 1 ]; do sleep 20; done; }
until grep -q done1 $OUT/loads.txt; do sleep 15; done
calm
stamp "loss-ac start"
$P bench transfer --cc $AC,vivace --scenario loss-2pct-12mbps-30ms --duration 60 --runs 3 --seed 164 --max-load 1.0 --json \
  >$OUT/loss-ac.json.partial 2>$OUT/loss-ac.log && mv $OUT/loss-ac.json.partial $OUT/loss-ac.json
stamp "loss-ac end"
calm
stamp "fig51-50ac2 start"
$P ab --cc $AC,vivace,bbr --scenario video-rttflap --bitrate 50000 --runs 5 --duration 60 --seed 165 \
  --max-load 1.5 --datagram-size 1452 --media $M50 \
  --db $OUT/fig51-50000k-s62b-480p.sqlite.partial >$OUT/fig51-50ac2.log 2>&1 \
  && mv $OUT/fig51-50000k-s62b-480p.sqlite.partial $OUT/fig51-50000k-s62b-480p.sqlite
stamp "fig51-50ac2 end"
calm
stamp "1bdp-ac2 start"
$P bench transfer --cc $AC,vivace --scenario const-12mbps-30ms-1bdp --duration 60 --runs 3 --seed 166 --max-load 1.0 --json \
  >$OUT/1bdp-ac2.json.partial 2>$OUT/1bdp-ac2.log && mv $OUT/1bdp-ac2.json.partial $OUT/1bdp-ac2.json
stamp "1bdp-ac2 end"
echo done2 >>$OUT/loads.txt
