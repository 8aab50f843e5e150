#!/usr/bin/env bash
# Session 49 chain 5: BBR on the short LTE recordings on a calm hour of this host (session 47's passes were flagged), after chain 4.
set -u
until grep -q done4 /work/s49/real1/loads.txt; do sleep 10; done
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
run tms-bbr tmobile-lte-short 140 bbr 84 3
run vz-bbr verizon-lte-short 140 bbr 84 3
echo done5 >>$OUT/loads.txt
