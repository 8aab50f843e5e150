#!/usr/bin/env bash
# Session 51 chain 1 (AMD EPYC host): cap + floor beside vivace and Cubic at Fig. 5.1 15 Mbit/s, then issue 4's 1-BDP and two-flow links.
set -u
WT=/work/s51/wt
cd $WT
export PYTHONPATH=$WT/server PCCSTREAM_CACHE=/work/main/.cache
P=/work/main/.venv/bin/pccstream
OUT=/work/s51/out
CF=vivace:increase_boundary_max=0.05:decrease_to_capacity=1:decrease_to_capacity_window_s=2
stamp() { echo "$1 $(date -u +%T) $(cat /proc/loadavg)" >>$OUT/loads.txt; }
while [ "$(cut -d' ' -f1 /proc/loadavg | cut -d. -f1)" -ge 1 ]; do sleep 20; done
stamp "v15 start"
$P ab --cc cubic,vivace,$CF --scenario video-rttflap --bitrate 15000 --runs 5 --duration 60 --seed 89 \
  --max-load 1.5 --datagram-size 1452 --db $OUT/fig51-15000k-s51-1452.sqlite.partial >$OUT/v15.log 2>&1 \
  && mv $OUT/fig51-15000k-s51-1452.sqlite.partial $OUT/fig51-15000k-s51-1452.sqlite
stamp "v15 end"
run() {  # tag args...
  local tag=$1; shift
  stamp "$tag start"
  $P bench transfer "$@" --max-load 1.0 --json >$OUT/$tag.json.partial 2>$OUT/$tag.err && mv $OUT/$tag.json.partial $OUT/$tag.json
  stamp "$tag end"
}
run 1bdp --cc vivace,$CF --scenario const-12mbps-30ms-1bdp --duration 60 --runs 5 --seed 90
run two --cc vivace,$CF --flows 2 --scenario const-12mbps-30ms-1bdp --duration 40 --runs 5 --seed 91
echo done1 >>$OUT/loads.txt
