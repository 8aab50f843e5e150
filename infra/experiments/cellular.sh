#!/usr/bin/env bash
# Issue #13's cellular profile on the real stack: every shipped cellular trace (tag
# `cellular`: 20 ms one way, infinite queue), one full pass of the trace per run, arms
# vivace-lte (the cellular profile), bbr, ewma-bdp and cubic. One JSON per trace in OUT;
# a trace whose JSON exists is skipped, so an interrupted campaign resumes. The load average
# before and after each trace goes to OUT/loads.txt. Summarise with
#   .venv/bin/python -m pccstream.bench.cellular OUT
# Usage: infra/experiments/cellular.sh [RUNS] [OUT_DIR] [SCENARIO...]
set -euo pipefail
ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)"
cd "$ROOT"
RUNS="${1:-3}"
OUT="${2:-docs/results/cellular}"
shift $(( $# > 2 ? 2 : $# ))
P=.venv/bin/pccstream
ARMS="${ARMS:-vivace-lte,bbr,ewma-bdp,cubic}"
mkdir -p "$OUT"
if [ $# -gt 0 ]; then scenarios=("$@"); else mapfile -t scenarios < <($P emulate scenarios --tag cellular --names); fi

for s in "${scenarios[@]}"; do
  out="$OUT/$s.json"
  if [ -s "$out" ]; then echo "== $s: done ($out)"; continue; fi
  # One pass of the downlink trace (the longer of its loop and 10 s).
  duration=$(.venv/bin/python -c "
from pccstream.emulator.scenario import load_scenario
t = load_scenario('$s').direction('down').build_trace()
print(max(10, round(t.period_ms / 1000)) if t else 60)")
  echo "== $s: $ARMS, $RUNS runs x ${duration} s"
  echo "$s start $(date -u +%T) $(cat /proc/loadavg)" >>"$OUT/loads.txt"
  $P bench transfer --cc "$ARMS" --scenario "$s" --duration "$duration" --runs "$RUNS" --json \
    >"$out.partial"
  mv "$out.partial" "$out"
  echo "$s end $(date -u +%T) $(cat /proc/loadavg)" >>"$OUT/loads.txt"
done
