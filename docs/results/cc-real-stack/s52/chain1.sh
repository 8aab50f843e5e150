#!/usr/bin/env bash
# Session 52 chain 1 (AMD EPYC host): cap + floor 4 % under capacity (CF2) beside vivace and Cubic at Fig. 5.1 15 Mbit/s (two networks), and on issue 4's two-flow and 1-BDP links.
set -u
WT=/work/s52/wt
cd $WT
export PYTHONPATH=$WT/server PCCSTREAM_CACHE=/work/main/.cache
P=/work/main/.venv/bin/pccstream
OUT=/work/s52/out
CF2=vivace:increase_boundary_max=0.05:decrease_to_capacity=2:decrease_to_capacity_window_s=2
stamp() { echo "$1 $(date -u +%T) $(cat /proc/loadavg)" >>$OUT/loads.txt; }
while [ "$(cut -d' ' -f1 /proc/loadavg | cut -d. -f1)" -ge 1 ]; do sleep 20; done
ab() {  # tag seed
  stamp "$1 start"
  $P ab --cc cubic,vivace,$CF2 --scenario video-rttflap --bitrate 15000 --runs 5 --duration 60 --seed $2 \
    --max-load 1.5 --datagram-size 1452 --db $OUT/$1.sqlite.partial >$OUT/$1.log 2>&1 \
    && mv $OUT/$1.sqlite.partial $OUT/$1.sqlite
  stamp "$1 end"
}
run() {  # tag args...
  local tag=$1; shift
  stamp "$tag start"
  $P bench transfer "$@" --max-load 1.0 --json >$OUT/$tag.json.partial 2>$OUT/$tag.err && mv $OUT/$tag.json.partial $OUT/$tag.json
  stamp "$tag end"
}
ab fig51-15000k-s52-1452 95
run two --cc vivace,$CF2 --flows 2 --scenario const-12mbps-30ms-1bdp --duration 40 --runs 5 --seed 96
ab fig51-15000k-s52b-1452 97
run 1bdp --cc vivace,$CF2 --scenario const-12mbps-30ms-1bdp --duration 60 --runs 5 --seed 98
echo done1 >>$OUT/loads.txt
