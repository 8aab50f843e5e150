#!/usr/bin/env bash
# Session 62 chain 1 (Intel Xeon host): the noise test widened by the RTT residuals' smoothed lag-1 autocorrelation (rtt_gradient_autocorr=1) against today's default on issue 4's 1-BDP link (seed 160, a gate: stop above 5 ms), then with BBR at 50 Mbit/s (seed 161), on two flows (seed 163) and in Fig. 5.2 (seed 162).
set -u
WT=/work/s62/wt
cd $WT
export PYTHONPATH=$WT/server PCCSTREAM_CACHE=/work/main/.cache
P=/work/main/.venv/bin/pccstream
PY=/work/main/.venv/bin/python
OUT=/work/s62/out
M50=/work/main/.cache/media/fig51-50000k-480p
M52=/work/main/.cache/media/fig52-10000k-480p
AC=vivace:rtt_gradient_autocorr=1
stamp() { echo "$1 $(date -u +%T) $(cat /proc/loadavg)" >>$OUT/loads.txt; }
calm() { while [ "$(cut -d' ' -f1 /proc/loadavg | cut -d. -f1)" -ge 1 ]; do sleep 20; done; }
calm
stamp "1bdp-ac start"
$P bench transfer --cc $AC,vivace --scenario const-12mbps-30ms-1bdp --duration 60 --runs 3 --seed 160 --max-load 1.0 --json \
  >$OUT/1bdp-ac.json.partial 2>$OUT/1bdp-ac.log && mv $OUT/1bdp-ac.json.partial $OUT/1bdp-ac.json
stamp "1bdp-ac end"
if ! $PY -c "import json,sys; d=json.load(open('$OUT/1bdp-ac.json')); sys.exit(0 if d['arms']['$AC']['median']['rtt_p95_inflation_ms'] <= 5.0 else 1)"; then
  echo "gate-failed" >>$OUT/loads.txt; echo done1 >>$OUT/loads.txt; exit 0
fi
calm
stamp "fig51-50ac start"
$P ab --cc $AC,vivace,bbr --scenario video-rttflap --bitrate 50000 --runs 5 --duration 60 --seed 161 \
  --max-load 1.5 --datagram-size 1452 --media $M50 \
  --db $OUT/fig51-50000k-s62-480p.sqlite.partial >$OUT/fig51-50ac.log 2>&1 \
  && mv $OUT/fig51-50000k-s62-480p.sqlite.partial $OUT/fig51-50000k-s62-480p.sqlite
stamp "fig51-50ac end"
calm
stamp "two-ac start"
$P bench transfer --cc $AC --flows 2 --scenario const-12mbps-30ms-1bdp --duration 40 --runs 5 --seed 163 --max-load 1.0 --json \
  >$OUT/two-ac.json.partial 2>$OUT/two-ac.log && mv $OUT/two-ac.json.partial $OUT/two-ac.json
stamp "two-ac end"
calm
stamp "fig52-ac start"
$P ab --cc $AC,vivace,bbr --scenario video-3viewers --viewers 3 --bitrate 10000 --runs 5 --duration 60 --seed 162 \
  --max-load 1.5 --datagram-size 1452 --media $M52 \
  --db $OUT/fig52-10000k-s62-1452.sqlite.partial >$OUT/fig52-ac.log 2>&1 \
  && mv $OUT/fig52-10000k-s62-1452.sqlite.partial $OUT/fig52-10000k-s62-1452.sqlite
stamp "fig52-ac end"
echo done1 >>$OUT/loads.txt
