#!/usr/bin/env bash
# The demo: bootstrap, then `pccstream demo`: the server, an emulator per arm running the
# scenario, and ONE URL to open (the player with its live congestion-control dashboard).
#   infra/demo.sh                                   # vivace through video-rttflap
#   infra/demo.sh --cc cubic --scenario const-12mbps-30ms-1bdp
#   infra/demo.sh --cc vivace,cubic                 # two sessions side by side
set -euo pipefail
ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
bash "$ROOT/infra/bootstrap.sh"
cd "$ROOT"
exec .venv/bin/pccstream demo --media media/default "$@"
