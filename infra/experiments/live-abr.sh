#!/usr/bin/env bash
# Issue #16's live targets: live ABR on (`pccstream ab --mode live --abr`), target latency
# 300 ms, ladder cap 2.5 Mbit/s (the WebRTC arm gets the same maximum bitrate), arms vivace and
# webrtc (ARMS=... to change them, e.g. ARMS=vivace,vivace:player.fec=8,webrtc), on video-rttflap (1.1 x 2.5 Mbit/s) and live-6mbps-40ms-1bdp; RUNS blocks x DURATION
# seconds each. One database per scenario in OUT, with its HTML report and Markdown tables;
# finally the paired per-block table (p95 glass-to-glass and stall count against WebRTC's
# freeze count, picture heights beside). Resumable: run it again after an interruption and the
# stored runs are kept (ab --resume). Needs the machine alone (the lead's measurement runs).
# Usage: infra/experiments/live-abr.sh [RUNS] [DURATION_S] [OUT_DIR] [SCENARIO...]
set -euo pipefail
ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)"
cd "$ROOT"
RUNS="${1:-3}"
DURATION="${2:-60}"
OUT="${3:-docs/results/live}"
shift $(( $# > 3 ? 3 : $# ))
if [ $# -gt 0 ]; then scenarios=("$@"); else scenarios=(video-rttflap live-6mbps-40ms-1bdp); fi
P=.venv/bin/pccstream
ARMS="${ARMS:-vivace,webrtc}"
LATENCY_MS="${LATENCY_MS:-300}"
BITRATE_KBPS="${BITRATE_KBPS:-2500}"
# Wait before each run until the 1-minute load average is at most this (0: do not wait).
MAX_LOAD="${MAX_LOAD:-1.5}"
mkdir -p "$OUT"
load_args=()
if [ "$MAX_LOAD" != 0 ]; then load_args=(--max-load "$MAX_LOAD"); fi

dbs=()
for s in "${scenarios[@]}"; do
  db="$OUT/live-abr-$s-${LATENCY_MS}ms.sqlite"
  dbs+=("$db")
  echo "== $s: $ARMS, live ABR up to $BITRATE_KBPS kbit/s, target $LATENCY_MS ms, $RUNS blocks x $DURATION s -> $db"
  echo "$s start $(date -u +%T) $(cat /proc/loadavg)" >>"$OUT/live-abr-loads.txt"
  $P ab --mode live --abr --cc "$ARMS" --scenario "$s" --bitrate "$BITRATE_KBPS" \
    --latency "$LATENCY_MS" --runs "$RUNS" --duration "$DURATION" --db "$db" --resume \
    "${load_args[@]}"
  echo "$s end $(date -u +%T) $(cat /proc/loadavg)" >>"$OUT/live-abr-loads.txt"
  $P report "$db" --out "${db%.sqlite}.html" --tables "${db%.sqlite}.md" \
    --title "Live ABR vs WebRTC: $s, target $LATENCY_MS ms"
done
.venv/bin/python -m pccstream.bench.live_abr "${dbs[@]}" | tee "$OUT/live-abr-${LATENCY_MS}ms-blocks.md"
