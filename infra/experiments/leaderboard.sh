#!/usr/bin/env bash
# Issue #15's leaderboard campaign on the real stack: the Sprout and RemyCC arms beside
# cubic, bbr and vivace-lte, 3 runs x 140 s (one pass of Verizon-LTE-short, the contest's
# trace) on each scenario; every shipped cellular scenario is +20 ms one way with an
# infinite queue. Default scenarios: verizon-lte-short (the contest setup), then the
# T-Mobile and AT&T traces.
#
# One `bench leaderboard --runs 1` per (scenario, run, arm), run i with seed SEED+i (the same
# network realization as run i of `--runs N --seed SEED`), written to
# OUT/SCENARIO/ARM.runN.json; a file that exists is skipped, so an interrupted campaign
# resumes where it stopped. Runs are ordered run-major (every arm's run 1 before any run 2),
# so a partial campaign stays balanced. The 1-minute load at each run's start and end goes
# to OUT/loads.txt (the campaign needs the machine alone: the report flags runs that
# started with load > 1). Summary, anchors and plots:
#   .venv/bin/python -m pccstream.bench.leaderboard_report OUT [--json] [--plot-dir OUT]
# Usage: infra/experiments/leaderboard.sh [RUNS] [OUT_DIR] [SCENARIO...]
# Environment: ARMS (comma-separated, NAME[:KEY=VALUE]), DURATION (s), SEED.
set -euo pipefail
ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)"
cd "$ROOT"
RUNS="${1:-3}"
OUT="${2:-docs/results/leaderboard-15}"
shift $(( $# > 2 ? 2 : $# ))
P=.venv/bin/pccstream
ARMS="${ARMS:-sprout,sprout-ewma,remy,cubic,bbr,vivace-lte}"
DURATION="${DURATION:-140}"
SEED="${SEED:-1}"
if [ $# -gt 0 ]; then scenarios=("$@"); else scenarios=(verizon-lte-short tmobile-lte-short att-lte-driving); fi
case "$RUNS" in ''|*[!0-9]*) echo "RUNS: expected a whole number, got '$RUNS'" >&2; exit 2;; esac
IFS=, read -ra arms <<<"$ARMS"
known="$($P emulate scenarios --names)"
for s in "${scenarios[@]}"; do
  grep -qx -- "$s" <<<"$known" || { echo "scenario '$s': not a shipped scenario (pccstream emulate scenarios --names)" >&2; exit 2; }
done
mkdir -p "$OUT"
load1() { cut -d' ' -f1 /proc/loadavg; }
failed=0
for s in "${scenarios[@]}"; do
  mkdir -p "$OUT/$s"
  for ((i = 0; i < RUNS; i++)); do
    run=$((i + 1))
    for arm in "${arms[@]}"; do
      name="${arm//[:=]/_}"
      out="$OUT/$s/$name.run$run.json"
      if [ -s "$out" ]; then echo "== $s $arm run $run: done"; continue; fi
      echo "== $s $arm run $run/$RUNS: ${DURATION} s, seed $((SEED + i)), load $(load1)"
      echo "$s $name $run start $(date -u +%FT%TZ) $(cut -d' ' -f1-3 /proc/loadavg)" >>"$OUT/loads.txt"
      if $P bench leaderboard --scenario "$s" --cc "$arm" --duration "$DURATION" --runs 1 \
          --seed $((SEED + i)) --json >"$out.partial"; then
        mv "$out.partial" "$out"
      else
        echo "!! $s $arm run $run failed (kept $out.partial; it is retried next time)" >&2
        failed=$((failed + 1))
      fi
      echo "$s $name $run end $(date -u +%FT%TZ) $(cut -d' ' -f1-3 /proc/loadavg)" >>"$OUT/loads.txt"
    done
  done
done
.venv/bin/python -m pccstream.bench.leaderboard_report "$OUT" --plot-dir "$OUT"
.venv/bin/python -m pccstream.bench.leaderboard_report "$OUT" --json >"$OUT/summary.json"
[ "$failed" -eq 0 ] || { echo "$failed run(s) failed" >&2; exit 1; }
