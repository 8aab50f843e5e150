#!/usr/bin/env bash
# Every test: bootstrap, then lint, type checks, Python tests, web unit tests, browser e2e tests.
set -euo pipefail
ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
bash "$ROOT/infra/bootstrap.sh"
cd "$ROOT"

section() { printf '\n==> %s\n' "$*"; }

section "ruff (Python lint)"
.venv/bin/ruff check server
section "pyright (Python types)"
.venv/bin/pyright
section "tsc (e2e TypeScript types)"
node_modules/.bin/tsc --noEmit -p e2e
section "no build artefacts in git (*.egg-info, dist/, __pycache__)"
if git rev-parse --git-dir >/dev/null 2>&1 \
    && git ls-files | grep -E '\.egg-info/|(^|/)dist/|__pycache__/'; then
  echo "build artefacts above are tracked: git rm -r --cached them (.gitignore lists them)"
  exit 1
fi
section "pytest (Python unit and integration tests)"
.venv/bin/pytest -p no:cacheprovider
section "vitest (web unit tests)"
npm test -w web --silent
section "playwright (end-to-end, headless Chromium)"
npm test -w e2e --silent
section "all tests passed"
