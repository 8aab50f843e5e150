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
section "pytest (Python unit and integration tests)"
.venv/bin/pytest -p no:cacheprovider
section "vitest (web unit tests)"
npm test -w web --silent
section "playwright (end-to-end, headless Chromium)"
npm test -w e2e --silent
section "all tests passed"
