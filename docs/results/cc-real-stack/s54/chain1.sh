#!/usr/bin/env bash
# Session 54 chain 1 (AMD EPYC host): Fig. 5.1 at 15 Mbit/s with media that keep their declared bitrate from the first chunk (encoder revision 2), the four arms, on session 53's network (seed 101), a new one (106) and session 52's (95).
set -u
WT=/work/s54/wt
cd $WT
export PYTHONPATH=$WT/server PCCSTREAM_CACHE=/work/main/.cache
P=/work/main/.venv/bin/pccstream
OUT=/work/s54/out
stamp() { echo "$1 $(date -u +%T) $(cat /proc/loadavg)" >>$OUT/loads.txt; }
while [ "$(cut -d' ' -f1 /proc/loadavg | cut -d. -f1)" -ge 1 ]; do sleep 20; done
ab() {  # tag seed arms [extra...]
  local tag=$1 seed=$2 arms=$3; shift 3
  stamp "$tag start"
  $P ab --cc $arms --runs 5 --duration 60 --seed $seed --max-load 1.5 --datagram-size 1452 "$@" \
    --db $OUT/$tag.sqlite.partial >$OUT/$tag.log 2>&1 && mv $OUT/$tag.sqlite.partial $OUT/$tag.sqlite
  stamp "$tag end"
}
ARMS=allegro-latency,vivace,bbr,cubic
ab fig51-15000k-s54-1452 101 $ARMS --scenario video-rttflap --bitrate 15000
ab fig51-15000k-s54b-1452 106 $ARMS --scenario video-rttflap --bitrate 15000
ab fig51-15000k-s54c-1452 95 $ARMS --scenario video-rttflap --bitrate 15000
echo done1 >>$OUT/loads.txt
