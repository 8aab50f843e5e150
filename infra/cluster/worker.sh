#!/usr/bin/env bash
# A pccstream Dask worker: one thread and the resource `pccstream=1`, so it runs one block of an
# A/B experiment at a time (docs/cluster.md). Usage: worker.sh [tcp://SCHEDULER:8786] [dask
# worker options...]; the address defaults to $DASK_SCHEDULER_ADDRESS.
set -euo pipefail
ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)"
address="${1:-${DASK_SCHEDULER_ADDRESS:-}}"
if [[ -z "$address" ]]; then
  echo "worker.sh: give the scheduler address (tcp://HOST:8786) or set DASK_SCHEDULER_ADDRESS" >&2
  exit 2
fi
shift || true
exec "$ROOT/.venv/bin/dask" worker "$address" --nthreads 1 --resources pccstream=1 "$@"
