#!/usr/bin/env bash
# Session 57 chain 5: Fig. 5.1 at 50 Mbit/s (480p, 50 Mbit/s on the wire): today's default, the default with its pair decreases capped at 5 % of the rate (decrease_boundary_max, new, off), with sessions 45-46's cap + floor (increase_boundary_max 0.05, decrease_to_capacity 1 within a 2 s window), and BBR (seed 122).
set -u
WT=/work/s57/wt2
cd $WT
export PYTHONPATH=$WT/server PCCSTREAM_CACHE=/work/main/.cache
P=/work/main/.venv/bin/pccstream
OUT=/work/s57/out
M=/work/main/.cache/media/fig51-50000k-480p
CF=vivace:increase_boundary_max=0.05:decrease_to_capacity=1:decrease_to_capacity_window_s=2
DB=vivace:decrease_boundary_max=0.05
stamp() { echo "$1 $(date -u +%T) $(cat /proc/loadavg)" >>$OUT/loads.txt; }
until grep -q done5 $OUT/loads.txt; do sleep 20; done
while [ "$(cut -d' ' -f1 /proc/loadavg | cut -d. -f1)" -ge 1 ]; do sleep 20; done
stamp "fig51-50b start"
$P ab --cc vivace,$DB,$CF,bbr --scenario video-rttflap --bitrate 50000 --runs 5 --duration 60 --seed 122 \
  --max-load 1.5 --datagram-size 1452 --media $M \
  --db $OUT/fig51-50000k-s57b-480p.sqlite.partial >$OUT/fig51-50b.log 2>&1 \
  && mv $OUT/fig51-50000k-s57b-480p.sqlite.partial $OUT/fig51-50000k-s57b-480p.sqlite
stamp "fig51-50b end"
echo done6 >>$OUT/loads.txt
