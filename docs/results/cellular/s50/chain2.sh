#!/usr/bin/env bash
# Session 50 chain 2: second passes where one pass decided the ratio (UMTS BBR; AT&T-LTE-driving), a third T-Mobile-LTE-driving pair; after chain 1 and the unit tests (go2).
set -u
until grep -q go2 /work/s50/real/loads.txt; do sleep 10; done
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
run tmd3 tmobile-lte-driving 475 vivace-lte,bbr 88 1
run umts-bbr2 tmobile-umts-driving 928 bbr 88 1
run attd2 att-lte-driving 786 ewma-bdp,bbr 88 1
echo done2 >>$OUT/loads.txt
# attd2 was vivace-lte,bbr until about 11:47 UTC (edited in place while tmd3 ran): ewma-bdp on this host instead, as the near-idle sender's floor
