#!/usr/bin/env bash
# Session 49 chain 3: today's vivace-lte on the recordings session 48 did not run it on,
# alone on the machine, after chain 2.
set -u
until grep -q done2 /work/s49/real1/loads.txt; do sleep 10; done
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
run tms-q tmobile-lte-short 140 vivace-lte 84 3
run vz-q verizon-lte-short 140 vivace-lte 84 3
run tmd-q tmobile-lte-driving 475 vivace-lte 84 1
echo done3 >>$OUT/loads.txt
