#!/usr/bin/env bash
# Session 53 chain 3 (AMD EPYC host): path_step_ms=5 (PS5) beside vivace and Cubic at Fig. 5.1 15 Mbit/s on session 52's two networks (seeds 95 and 97), where vivace's stalls followed path changes.
set -u
WT=/work/s53/wt
cd $WT
export PYTHONPATH=$WT/server PCCSTREAM_CACHE=/work/main/.cache
P=/work/main/.venv/bin/pccstream
OUT=/work/s53/out
PS5=vivace:path_step_ms=5
stamp() { echo "$1 $(date -u +%T) $(cat /proc/loadavg)" >>$OUT/loads.txt; }
ab() {  # tag seed
  while [ "$(cut -d' ' -f1 /proc/loadavg | cut -d. -f1)" -ge 1 ]; do sleep 20; done
  stamp "$1 start"
  $P ab --cc cubic,vivace,$PS5 --scenario video-rttflap --bitrate 15000 --runs 5 --duration 60 --seed $2 \
    --max-load 1.5 --datagram-size 1452 --db $OUT/$1.sqlite.partial >$OUT/$1.log 2>&1 \
    && mv $OUT/$1.sqlite.partial $OUT/$1.sqlite
  stamp "$1 end"
}
ab fig51-15000k-s53b-1452 95
ab fig51-15000k-s53c-1452 97
echo done3 >>$OUT/loads.txt
