#!/usr/bin/env bash
# Session 48 chain 1: the queue test on the ACK-silence verdicts (Q) against today's
# vivace-lte (L), alone on the machine.
set -u
cd /work/wt48run
export PYTHONPATH=/work/wt48run/server PCCSTREAM_CACHE=/work/main/.cache
P=.venv/bin/pccstream
OUT=/work/s48/real1
Q=vivace-lte:bdp_cap_hold_queue_rtts=4
L=vivace-lte
run() {  # tag scenario duration arms seed
  echo "$1 start $(date -u +%T) $(cat /proc/loadavg)" >>$OUT/loads.txt
  $P bench transfer --cc "$4" --scenario "$2" --duration "$3" --runs 1 --seed "$5" --max-load 1.0 --json >$OUT/$1.json.partial 2>$OUT/$1.err && mv $OUT/$1.json.partial $OUT/$1.json
  echo "$1 end $(date -u +%T) $(cat /proc/loadavg)" >>$OUT/loads.txt
}
run umts-q tmobile-umts-driving 928 $Q 81
run att2016-a att-lte-driving-2016 120 $Q,$L 81
run att-q att-lte-driving 786 $Q 81
run umts-l tmobile-umts-driving 928 $L 81
run att2016-b att-lte-driving-2016 120 $Q,$L 82
run evdo-q verizon-evdo-driving 1062 $Q 81
echo done >>$OUT/loads.txt
