#!/usr/bin/env bash
# Issue 18's timing: one small A/B design run serially, then on a two-worker Dask cluster (a
# scheduler and two `dask worker --nthreads 1 --resources pccstream=1` on this machine), with
# the wall time of each and the report of each database. Needs the machine to itself.
#   infra/experiments/cluster-timing.sh [RUNS=2] [DURATION_S=10] [OUT_DIR=results/cluster-timing]
# 2 blocks x 2 arms x 10 s: about 1.5 min serial + 1 min on the cluster on 2 cores.
set -euo pipefail
ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)"
cd "$ROOT"
RUNS="${1:-2}"
DURATION="${2:-10}"
OUT="${3:-results/cluster-timing}"
mkdir -p "$OUT"
rm -f "$OUT"/serial.sqlite* "$OUT"/cluster.sqlite* "$OUT"/scheduler.json
PCC=.venv/bin/pccstream
DESIGN=(--cc vivace,cubic --scenario const-12mbps-30ms-1bdp --bitrate 750 --runs "$RUNS"
        --duration "$DURATION" --seed 18 --media media/default)

now() { date +%s.%N; }
elapsed() { python3 -c "print(f'{$2 - $1:.1f}')"; }

t0=$(now)
"$PCC" ab "${DESIGN[@]}" --db "$OUT/serial.sqlite"
serial=$(elapsed "$t0" "$(now)")

pids=()
cleanup() { for pid in "${pids[@]}"; do kill "$pid" 2>/dev/null || true; done; wait 2>/dev/null || true; }
trap cleanup EXIT
.venv/bin/dask scheduler --host 127.0.0.1 --port 0 --dashboard-address :0 \
  --scheduler-file "$OUT/scheduler.json" >"$OUT/scheduler.log" 2>&1 &
pids+=($!)
for _ in $(seq 100); do [[ -s "$OUT/scheduler.json" ]] && break; sleep 0.2; done
ADDRESS=$(python3 -c "import json,sys; print(json.load(open(sys.argv[1]))['address'])" "$OUT/scheduler.json")
for name in w1 w2; do
  infra/cluster/worker.sh "$ADDRESS" --name "$name" >"$OUT/worker-$name.log" 2>&1 &
  pids+=($!)
done
# Workers of a real cluster are up before a campaign: time from when both have joined.
.venv/bin/python -c "from distributed import Client
with Client('$ADDRESS') as client: client.wait_for_workers(2, timeout=300)"
t0=$(now)
"$PCC" ab "${DESIGN[@]}" --db "$OUT/cluster.sqlite" --cluster "$ADDRESS"
cluster=$(elapsed "$t0" "$(now)")

"$PCC" report "$OUT/serial.sqlite" --out "$OUT/serial.html" --tables "$OUT/serial.md"
"$PCC" report "$OUT/cluster.sqlite" --out "$OUT/cluster.html" --tables "$OUT/cluster.md"
printf '{"design": "%s blocks x 2 arms x %s s", "serial_wall_s": %s, "two_workers_wall_s": %s}\n' \
  "$RUNS" "$DURATION" "$serial" "$cluster" | tee "$OUT/timing.json"
