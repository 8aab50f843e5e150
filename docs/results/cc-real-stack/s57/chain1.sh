#!/usr/bin/env bash
# Session 57 chain 1 (AMD EPYC host): Fig. 5.1 at 30 Mbit/s with today's default `vivace` (session 56's floor + standing-queue test) beside BBR and Cubic, on five new networks (seed 118).
set -u
WT=/work/s57/wt
cd $WT
export PYTHONPATH=$WT/server PCCSTREAM_CACHE=/work/main/.cache
P=/work/main/.venv/bin/pccstream
OUT=/work/s57/out
stamp() { echo "$1 $(date -u +%T) $(cat /proc/loadavg)" >>$OUT/loads.txt; }
while [ "$(cut -d' ' -f1 /proc/loadavg | cut -d. -f1)" -ge 1 ]; do sleep 20; done
stamp "fig51-30 start"
$P ab --cc vivace,bbr,cubic --scenario video-rttflap --bitrate 30000 --runs 5 --duration 60 --seed 118 \
  --max-load 1.5 --datagram-size 1452 \
  --db $OUT/fig51-30000k-s57-1452.sqlite.partial >$OUT/fig51-30.log 2>&1 \
  && mv $OUT/fig51-30000k-s57-1452.sqlite.partial $OUT/fig51-30000k-s57-1452.sqlite
stamp "fig51-30 end"
echo done1 >>$OUT/loads.txt
