#!/usr/bin/env bash
# Session 48 chain 3: after chain 2, a third pass of AT&T-2016 (Q and L).
set -u
until grep -q '^done' /work/s48/real2/loads.txt 2>/dev/null; do sleep 20; done
cd /work/wt48run
export PYTHONPATH=/work/wt48run/server PCCSTREAM_CACHE=/work/main/.cache
P=.venv/bin/pccstream
OUT=/work/s48/real3
run() {  # tag scenario duration arms seed
  echo "$1 start $(date -u +%T) $(cat /proc/loadavg)" >>$OUT/loads.txt
  $P bench transfer --cc "$4" --scenario "$2" --duration "$3" --runs 1 --seed "$5" --max-load 1.0 --json >$OUT/$1.json.partial 2>$OUT/$1.err && mv $OUT/$1.json.partial $OUT/$1.json
  echo "$1 end $(date -u +%T) $(cat /proc/loadavg)" >>$OUT/loads.txt
}
run att2016-c att-lte-driving-2016 120 vivace-lte:bdp_cap_hold_queue_rtts=4,vivace-lte 83
echo done >>$OUT/loads.txt
