#!/usr/bin/env bash
# Session 48 chain 2: after chain 1, BBR's references on this host for the two long
# recordings that had only the AMD host's.
set -u
until grep -q '^done' /work/s48/real1/loads.txt 2>/dev/null; do sleep 20; done
cd /work/wt48run
export PYTHONPATH=/work/wt48run/server PCCSTREAM_CACHE=/work/main/.cache
P=.venv/bin/pccstream
OUT=/work/s48/real2
run() {  # tag scenario duration arms seed
  echo "$1 start $(date -u +%T) $(cat /proc/loadavg)" >>$OUT/loads.txt
  $P bench transfer --cc "$4" --scenario "$2" --duration "$3" --runs 1 --seed "$5" --max-load 1.0 --json >$OUT/$1.json.partial 2>$OUT/$1.err && mv $OUT/$1.json.partial $OUT/$1.json
  echo "$1 end $(date -u +%T) $(cat /proc/loadavg)" >>$OUT/loads.txt
}
run umts-bbr tmobile-umts-driving 928 bbr 81
run tmd-bbr tmobile-lte-driving 475 bbr 81
echo done >>$OUT/loads.txt
