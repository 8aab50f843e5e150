#!/usr/bin/env bash
# Session 59 chain 1 (Intel Xeon host): the latency-only decrease cap (DBL, off) against today's default, BBR and Cubic in one campaign each: Fig. 5.2 at 3 x 10 Mbit/s (seed 136); issue 4's two flows and 2 % loss; Fig. 5.1 at 30 (seed 137) and 15 Mbit/s (seed 138).
set -u
WT=/work/s59/wt
cd $WT
export PYTHONPATH=$WT/server PCCSTREAM_CACHE=/work/main/.cache
P=/work/main/.venv/bin/pccstream
OUT=/work/s59/out
M10=/work/main/.cache/media/fig52-10000k-480p
DBL=vivace:decrease_boundary_max=0.05:decrease_boundary_max_latency_only=1
stamp() { echo "$1 $(date -u +%T) $(cat /proc/loadavg)" >>$OUT/loads.txt; }
calm() { while [ "$(cut -d' ' -f1 /proc/loadavg | cut -d. -f1)" -ge 1 ]; do sleep 20; done; }
calm
stamp "fig52 start"
$P ab --cc $DBL,vivace,bbr,cubic --scenario video-3viewers --viewers 3 --bitrate 10000 --runs 5 --duration 60 --seed 136 \
  --max-load 1.5 --datagram-size 1452 --media $M10 \
  --db $OUT/fig52-10000k-s59-1452.sqlite.partial >$OUT/fig52.log 2>&1 \
  && mv $OUT/fig52-10000k-s59-1452.sqlite.partial $OUT/fig52-10000k-s59-1452.sqlite
stamp "fig52 end"
if [ -x /work/s59/pytest.sh ]; then stamp "pytest start"; /work/s59/pytest.sh >$OUT/pytest.log 2>&1; stamp "pytest end"; fi
calm
stamp "two start"
$P bench transfer --cc $DBL --flows 2 --scenario const-12mbps-30ms-1bdp --duration 40 --runs 5 --seed 139 --max-load 1.0 --json >$OUT/two-dbl.json 2>$OUT/two-dbl.log
stamp "two end"
calm
stamp "loss start"
$P bench transfer --cc $DBL --scenario loss-2pct-12mbps-30ms --duration 60 --runs 3 --seed 140 --max-load 1.0 --json >$OUT/loss-dbl.json 2>$OUT/loss-dbl.log
stamp "loss end"
calm
stamp "fig51-30 start"
$P ab --cc $DBL,vivace,bbr,cubic --scenario video-rttflap --bitrate 30000 --runs 5 --duration 60 --seed 137 \
  --max-load 1.5 --datagram-size 1452 \
  --db $OUT/fig51-30000k-s59-1452.sqlite.partial >$OUT/fig51-30.log 2>&1 \
  && mv $OUT/fig51-30000k-s59-1452.sqlite.partial $OUT/fig51-30000k-s59-1452.sqlite
stamp "fig51-30 end"
calm
stamp "fig51-15 start"
$P ab --cc $DBL,vivace,bbr,cubic --scenario video-rttflap --bitrate 15000 --runs 5 --duration 60 --seed 138 \
  --max-load 1.5 --datagram-size 1452 \
  --db $OUT/fig51-15000k-s59-1452.sqlite.partial >$OUT/fig51-15.log 2>&1 \
  && mv $OUT/fig51-15000k-s59-1452.sqlite.partial $OUT/fig51-15000k-s59-1452.sqlite
stamp "fig51-15 end"
echo done1 >>$OUT/loads.txt
