#!/usr/bin/env bash
# Session 53 chain 1 (AMD EPYC host): path_step_ms=5 (PS5) beside vivace and Cubic at Fig. 5.1 15 Mbit/s, on issue 4's 1-BDP and two-flow links, and in Fig. 5.2.
set -u
WT=/work/s53/wt
cd $WT
export PYTHONPATH=$WT/server PCCSTREAM_CACHE=/work/main/.cache
P=/work/main/.venv/bin/pccstream
OUT=/work/s53/out
PS5=vivace:path_step_ms=5
stamp() { echo "$1 $(date -u +%T) $(cat /proc/loadavg)" >>$OUT/loads.txt; }
while [ "$(cut -d' ' -f1 /proc/loadavg | cut -d. -f1)" -ge 1 ]; do sleep 20; done
ab() {  # tag seed arms [extra...]
  local tag=$1 seed=$2 arms=$3; shift 3
  stamp "$tag start"
  $P ab --cc $arms --runs 5 --duration 60 --seed $seed --max-load 1.5 --datagram-size 1452 "$@" \
    --db $OUT/$tag.sqlite.partial >$OUT/$tag.log 2>&1 && mv $OUT/$tag.sqlite.partial $OUT/$tag.sqlite
  stamp "$tag end"
}
run() {  # tag args...
  local tag=$1; shift
  stamp "$tag start"
  $P bench transfer "$@" --max-load 1.0 --json >$OUT/$tag.json.partial 2>$OUT/$tag.err && mv $OUT/$tag.json.partial $OUT/$tag.json
  stamp "$tag end"
}
ab fig51-15000k-s53-1452 101 cubic,vivace,$PS5 --scenario video-rttflap --bitrate 15000
run 1bdp --cc vivace,$PS5 --scenario const-12mbps-30ms-1bdp --duration 60 --runs 5 --seed 102
run two --cc vivace,$PS5 --flows 2 --scenario const-12mbps-30ms-1bdp --duration 40 --runs 5 --seed 103
ab fig52-15000k-s53-1452 104 vivace,$PS5 --scenario video-3viewers --viewers 3 --bitrate 15000 --media /work/main/.cache/media/fig52-15000k-480p
echo done1 >>$OUT/loads.txt
