#!/usr/bin/env bash
# Session 49 chain 4: a second pass of today's vivace-lte and of BBR on T-Mobile-UMTS (the
# target missed by 0.007 against session 48's flagged BBR pass), after chain 3.
set -u
until grep -q done3 /work/s49/real1/loads.txt; do sleep 10; done
WT=/work/s49/wt
cd $WT
export PYTHONPATH=$WT/server PCCSTREAM_CACHE=/work/main/.cache
P=/work/main/.venv/bin/pccstream
OUT=/work/s49/real1
run() {  # tag scenario duration arms seed runs
  echo "$1 start $(date -u +%T) $(cat /proc/loadavg)" >>$OUT/loads.txt
  $P bench transfer --cc "$4" --scenario "$2" --duration "$3" --runs "$6" --seed "$5" --max-load 1.0 --json >$OUT/$1.json.partial 2>$OUT/$1.err && mv $OUT/$1.json.partial $OUT/$1.json
  echo "$1 end $(date -u +%T) $(cat /proc/loadavg)" >>$OUT/loads.txt
}
run umts-bbr tmobile-umts-driving 928 bbr 85 1
run umts-q tmobile-umts-driving 928 vivace-lte 85 1
echo done4 >>$OUT/loads.txt
