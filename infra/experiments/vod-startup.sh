#!/usr/bin/env bash
# VOD startup (issue 16): median startup and buffering ratio of the default controller
#   * on bare loopback (no emulator, `--scenario none`), and
#   * on `video-rttflap` at 3 and 15 Mbit/s (capacity 1.1 x, RTT redrawn in 10-100 ms every 5 s),
# each with both first-segment choices (`startRendition=lowest` and `=abr`, the player's
# parameter; docs/media.md "Chunked video on demand"). mode=fixed at the bitrate, on media
# with a 4-rung ladder (10/25/50/100 % of it), so `lowest` has a lower rendition to start on.
# Every run is stored in ab's SQLite as it finishes (1-minute load average at its start and
# end included), so the same command resumes after an interruption. Then
# `python -m pccstream.ab.startup` writes summary.json and summary.md (median startup, the
# 2 x RTT + 400 ms budget per run, buffering ratio with a bootstrap CI, load per run).
#
# Usage: infra/experiments/vod-startup.sh [RUNS] [DURATION_S] [OUT_DIR]
#   ARMS=cubic         controllers (the server's default --cc is cubic; e.g. ARMS=cubic,vivace)
#   OLD=/path/checkout also run the same rttflap designs on an older checkout (its own
#                      .venv and web build: run its infra/bootstrap.sh first) into OUT_DIR/old/,
#                      for "buffering ratio not higher". Its player has no startRendition and
#                      ab has no --scenario none, so it runs the rttflap designs without them.
#   MAX_LOAD=1.5       wait before each run until the 1-minute load average is at most this
#   SKIP_NEW=1         run only the OLD= designs (then the summary as usual)
#   OLD_KBPS="3000"    only these bitrates of the OLD= designs (default: 3000 15000)
#   EXPERIMENTS="loopback-3000k-lowest rttflap-3000k-lowest ..."
#                      only these of the new code's designs (default: all six)
set -euo pipefail
ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)"
cd "$ROOT"
RUNS="${1:-5}"
DURATION="${2:-60}"
OUT="${3:-docs/results/startup}"
ARMS="${ARMS:-cubic}"
MAX_LOAD="${MAX_LOAD:-1.5}"
OUT="$(mkdir -p "$OUT" && cd "$OUT" && pwd)"

ladder() { # the 4-rung ladder ab uses in abr mode: 10/25/50/100 % of the bitrate
  local k=$1
  echo "$((k / 10)),$((k / 4)),$((k / 2)),$k"
}

# run_ab PCCSTREAM DB ARGS...: start the experiment, or resume it if its database exists.
run_ab() {
  local p=$1 db=$2
  shift 2
  local args=("${ARMS_FLAG:---cc}" "$ARMS" --mode fixed --runs "$RUNS" --duration "$DURATION" --seed 1
    --max-load "$MAX_LOAD" --db "$db" "$@")
  if [[ -f "$db" ]]; then "$p" ab "${args[@]}" --resume; else "$p" ab "${args[@]}"; fi
}

wanted() { [[ -z "${EXPERIMENTS:-}" || " $EXPERIMENTS " == *" $1 "* ]]; }

P="$ROOT/.venv/bin/pccstream"
if [[ -z "${SKIP_NEW:-}" ]]; then
  for start in lowest abr; do
    if wanted "loopback-3000k-$start"; then
      echo "== loopback (no emulator), startRendition=$start"
      run_ab "$P" "$OUT/loopback-3000k-$start.sqlite" --scenario none --bitrate 3000 \
        --ladder "$(ladder 3000)" --player "startRendition=$start"
    fi
    for kbps in 3000 15000; do
      wanted "rttflap-${kbps}k-$start" || continue
      echo "== video-rttflap at $((kbps / 1000)) Mbit/s, startRendition=$start"
      run_ab "$P" "$OUT/rttflap-${kbps}k-$start.sqlite" --scenario video-rttflap --bitrate "$kbps" \
        --ladder "$(ladder "$kbps")" --player "startRendition=$start"
    done
  done
fi

if [[ -n "${OLD:-}" ]]; then
  OLD="$(cd "$OLD" && pwd)"
  mkdir -p "$OUT/old"
  git -C "$OLD" rev-parse HEAD > "$OUT/old/COMMIT"
  for kbps in ${OLD_KBPS:-3000 15000}; do
    echo "== old code ($OLD): video-rttflap at $((kbps / 1000)) Mbit/s"
    # Its own media cache (.cache in the old checkout): the media it shipped with.
    # Older checkouts name the arms --arms.
    (cd "$OLD" && ARMS_FLAG=--arms run_ab "$OLD/.venv/bin/pccstream" "$OUT/old/rttflap-${kbps}k.sqlite" \
      --scenario video-rttflap --bitrate "$kbps" --ladder "$(ladder "$kbps")")
  done
fi

dirs=("$OUT")
[[ -d "$OUT/old" ]] && dirs+=("$OUT/old")
"$ROOT/.venv/bin/python" -m pccstream.ab.startup "${dirs[@]}" \
  --json "$OUT/summary.json" --md "$OUT/summary.md"
cat "$OUT/summary.md"
