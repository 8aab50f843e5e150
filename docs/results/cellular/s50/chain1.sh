#!/usr/bin/env bash
# Session 50 chain 1: AT&T recordings on a calm hour of this host (BBR's references were session 47's flagged passes), arms interleaved per run; then a second T-Mobile-LTE-driving pass.
set -u
WT=/work/s50/wt
cd $WT
export PYTHONPATH=$WT/server PCCSTREAM_CACHE=/work/main/.cache
P=/work/main/.venv/bin/pccstream
OUT=/work/s50/real
run() {  # tag scenario duration arms seed runs
  echo "$1 start $(date -u +%T) $(cat /proc/loadavg)" >>$OUT/loads.txt
  $P bench transfer --cc "$4" --scenario "$2" --duration "$3" --runs "$6" --seed "$5" --max-load 1.0 --json >$OUT/$1.json.partial 2>$OUT/$1.err && mv $OUT/$1.json.partial $OUT/$1.json
  echo "$1 end $(date -u +%T) $(cat /proc/loadavg)" >>$OUT/loads.txt
}
run att16 att-lte-driving-2016 120 vivace-lte,bbr 86 3
run attd att-lte-driving 786 vivace-lte,bbr 86 1
run tmd2 tmobile-lte-driving 475 vivace-lte,bbr 87 1
echo done1 >>$OUT/loads.txt
