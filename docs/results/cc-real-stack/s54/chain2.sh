#!/usr/bin/env bash
# Session 54 chain 2: Fig. 5.1 at 30 Mbit/s with media of encoder revision 2 (encoded by ab on first use), the issue's four arms, on session 52's 30 Mbit/s network.
set -u
WT=/work/s54/wt
cd $WT
export PYTHONPATH=$WT/server PCCSTREAM_CACHE=/work/main/.cache
P=/work/main/.venv/bin/pccstream
OUT=/work/s54/out
until grep -q done1 $OUT/loads.txt; do sleep 20; done
stamp() { echo "$1 $(date -u +%T) $(cat /proc/loadavg)" >>$OUT/loads.txt; }
while [ "$(cut -d' ' -f1 /proc/loadavg | cut -d. -f1)" -ge 1 ]; do sleep 20; done
ab() {  # tag seed arms [extra...]
  local tag=$1 seed=$2 arms=$3; shift 3
  stamp "$tag start"
  $P ab --cc $arms --runs 5 --duration 60 --seed $seed --max-load 1.5 --datagram-size 1452 "$@" \
    --db $OUT/$tag.sqlite.partial >$OUT/$tag.log 2>&1 && mv $OUT/$tag.sqlite.partial $OUT/$tag.sqlite
  stamp "$tag end"
}
ab fig51-30000k-s54-1452 100 allegro-latency,vivace,bbr,cubic --scenario video-rttflap --bitrate 30000
echo done2 >>$OUT/loads.txt
