#!/usr/bin/env bash
# The congestion-control bulk targets (issue #4) on the real stack: 1-BDP, 2 % loss, two flows,
# Verizon LTE, each against cubic where the target is relative. JSON per benchmark into OUT,
# with the load average before and after each one in OUT/loads-PREFIX.txt.
# Usage: infra/experiments/cc-targets.sh [RUNS] [DURATION_S] [OUT_DIR] [PREFIX]
set -euo pipefail
ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)"
cd "$ROOT"
RUNS="${1:-3}"
DURATION="${2:-60}"
OUT="${3:-docs/results/cc-real-stack}"
PREFIX="${4:-targets}"
P=.venv/bin/pccstream
mkdir -p "$OUT"
loads="$OUT/loads-$PREFIX.txt"
echo "Load averages (1/5/15 min) at start and end of each benchmark, from /proc/loadavg (UTC)." >"$loads"

bench() {
  local name="$1"; shift
  echo "== $name"
  { echo "$PREFIX-$name.json:"; echo "  start $(date -u +%T) $(cat /proc/loadavg)"; } >>"$loads"
  $P bench transfer "$@" --runs "$RUNS" --json >"$OUT/$PREFIX-$name.json"
  echo "  end $(date -u +%T) $(cat /proc/loadavg)" >>"$loads"
}

bench 1bdp --cc vivace,cubic --scenario const-12mbps-30ms-1bdp --duration "$DURATION"
bench loss --cc vivace-loss,cubic --scenario loss-2pct-12mbps-30ms --duration "$DURATION"
bench two --cc vivace --flows 2 --scenario const-12mbps-30ms-1bdp --duration "$((DURATION * 2 / 3))"
bench lte --cc vivace-lte,cubic --scenario verizon-lte-short --duration "$DURATION"
