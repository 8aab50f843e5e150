#!/usr/bin/env bash
# Session 51 chain 2 (after chain 1): Fig. 5.2 at 3 x 15 Mbit/s (480p), cap + floor beside vivace and BBR.
set -u
WT=/work/s51/wt
cd $WT
export PYTHONPATH=$WT/server PCCSTREAM_CACHE=/work/main/.cache
P=/work/main/.venv/bin/pccstream
OUT=/work/s51/out
CF=vivace:increase_boundary_max=0.05:decrease_to_capacity=1:decrease_to_capacity_window_s=2
stamp() { echo "$1 $(date -u +%T) $(cat /proc/loadavg)" >>$OUT/loads.txt; }
until grep -q '^done1$' $OUT/loads.txt; do sleep 20; done
M=/work/main/.cache/media/fig52-15000k-480p
[ -f $M/manifest.json ] || $P media synth --out $M --ladder 15000k@854x480 --duration 75 --force >$OUT/synth52.log 2>&1
while [ "$(cut -d' ' -f1 /proc/loadavg | cut -d. -f1)" -ge 1 ]; do sleep 20; done
stamp "f52 start"
$P ab --cc vivace,$CF,bbr --scenario video-3viewers --viewers 3 --bitrate 15000 --runs 5 --duration 60 --seed 92 \
  --media $M --max-load 1.5 --datagram-size 1452 --db $OUT/fig52-15000k-s51-1452.sqlite.partial >$OUT/f52.log 2>&1 \
  && mv $OUT/fig52-15000k-s51-1452.sqlite.partial $OUT/fig52-15000k-s51-1452.sqlite
stamp "f52 end"
echo done2 >>$OUT/loads.txt
