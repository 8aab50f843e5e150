#!/usr/bin/env bash
# Session 58 chain 1 (Intel Xeon host, 2 vCPUs): what the host sustains at 50 Mbit/s with the 480p media; Fig. 5.1 at 50 Mbit/s with the default, the default with its pair decreases capped at 5 % of the rate (decrease_boundary_max=0.05), BBR and Cubic (seed 123); issue 4's links with the cap; Fig. 5.2 at 3 x 10 Mbit/s (seed 124); Fig. 5.1 at 30 (seed 125) and 15 Mbit/s (seed 126).
set -u
WT=/work/s58/wt
cd $WT
export PYTHONPATH=$WT/server PCCSTREAM_CACHE=/work/main/.cache
P=/work/main/.venv/bin/pccstream
OUT=/work/s58/out
M50=/work/main/.cache/media/fig51-50000k-480p
M10=/work/main/.cache/media/fig52-10000k-480p
DB=vivace:decrease_boundary_max=0.05
stamp() { echo "$1 $(date -u +%T) $(cat /proc/loadavg)" >>$OUT/loads.txt; }
calm() { while [ "$(cut -d' ' -f1 /proc/loadavg | cut -d. -f1)" -ge 1 ]; do sleep 20; done; }
calm
stamp "sustain start"
$P bench sustain --bitrates 50000 --duration 30 --media $M50 --json >$OUT/s58-sustain-50000k-480p.json 2>$OUT/sustain.log
stamp "sustain end"
calm
stamp "fig51-50 start"
$P ab --cc vivace,$DB,bbr,cubic --scenario video-rttflap --bitrate 50000 --runs 5 --duration 60 --seed 123 \
  --max-load 1.5 --datagram-size 1452 --media $M50 \
  --db $OUT/fig51-50000k-s58-480p.sqlite.partial >$OUT/fig51-50.log 2>&1 \
  && mv $OUT/fig51-50000k-s58-480p.sqlite.partial $OUT/fig51-50000k-s58-480p.sqlite
stamp "fig51-50 end"
calm
stamp "two start"
$P bench transfer --cc $DB --flows 2 --scenario const-12mbps-30ms-1bdp --duration 40 --runs 5 --seed 127 --max-load 1.0 --json >$OUT/two.json 2>$OUT/two.log
stamp "1bdp start"
$P bench transfer --cc $DB --scenario const-12mbps-30ms-1bdp --duration 60 --runs 3 --seed 128 --max-load 1.0 --json >$OUT/1bdp.json 2>$OUT/1bdp.log
stamp "loss start"
$P bench transfer --cc $DB --scenario loss-2pct-12mbps-30ms --duration 60 --runs 3 --seed 129 --max-load 1.0 --json >$OUT/loss.json 2>$OUT/loss.log
stamp "issue4 end"
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
calm
stamp "fig51-15 start"
$P ab --cc $DB,vivace,bbr,cubic --scenario video-rttflap --bitrate 15000 --runs 5 --duration 60 --seed 126 \
  --max-load 1.5 --datagram-size 1452 \
  --db $OUT/fig51-15000k-s58-1452.sqlite.partial >$OUT/fig51-15.log 2>&1 \
  && mv $OUT/fig51-15000k-s58-1452.sqlite.partial $OUT/fig51-15000k-s58-1452.sqlite
stamp "fig51-15 end"
echo done1 >>$OUT/loads.txt
