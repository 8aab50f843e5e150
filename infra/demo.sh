#!/usr/bin/env bash
# The demo: bootstrap, then serve the default media with PCC Vivace and print the URL to open.
set -euo pipefail
ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
bash "$ROOT/infra/bootstrap.sh"
cd "$ROOT"
exec .venv/bin/pccstream serve --media media/default --cc vivace "$@"
