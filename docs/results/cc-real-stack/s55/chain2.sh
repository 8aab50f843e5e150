#!/usr/bin/env bash
# Session 55 chain 2 (AMD EPYC host): Fig. 5.2 at 3 x 10 Mbit/s, the packet floor under the increase boundary beside the default and BBR, on a new network (seed 109).
set -u
WT=/work/s55/wt
cd $WT
export PYTHONPATH=$WT/server PCCSTREAM_CACHE=/work/main/.cache
P=/work/main/.venv/bin/pccstream
OUT=/work/s55/out
stamp() { echo "$1 $(date -u +%T) $(cat /proc/loadavg)" >>$OUT/loads.txt; }
while [ "$(cut -d' ' -f1 /proc/loadavg | cut -d. -f1)" -ge 1 ]; do sleep 20; done
ab() {  # tag seed arms [extra...]
  local tag=$1 seed=$2 arms=$3; shift 3
  stamp "$tag start"
  $P ab --cc $arms --runs 5 --duration 60 --seed $seed --max-load 1.5 --datagram-size 1452 "$@" \
    --db $OUT/$tag.sqlite.partial >$OUT/$tag.log 2>&1 && mv $OUT/$tag.sqlite.partial $OUT/$tag.sqlite
  stamp "$tag end"
}
ab fig52-10000k-s55-floor-1452 109 vivace,vivace:increase_boundary_floor_packets=5,bbr \
  --scenario video-3viewers --viewers 3 --bitrate 10000 --media /work/main/.cache/media/fig52-10000k-480p
echo done3 >>$OUT/loads.txt
