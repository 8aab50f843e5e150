#!/usr/bin/env bash
# Installs whatever is missing for pccstream, idempotently, printing each step.
# Safe to run again and again: every step checks first and skips what is already in place.
set -euo pipefail

ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$ROOT"
STAMPS="$ROOT/.cache/bootstrap"
mkdir -p "$STAMPS"

step() { printf '[bootstrap] %s\n' "$*"; }

# A step re-runs when the hash of its inputs changes.
fingerprint() { cat "$@" 2>/dev/null | sha256sum | cut -d' ' -f1; }
is_fresh() { [[ -f "$STAMPS/$1" && "$(cat "$STAMPS/$1")" == "$2" ]]; }
mark_fresh() { printf '%s' "$2" >"$STAMPS/$1"; }

# 1. System packages (Debian): the browser, ffmpeg, a font for burned-in text, coturn.
missing=()
command -v chromium >/dev/null 2>&1 || missing+=(chromium)
command -v ffmpeg >/dev/null 2>&1 || missing+=(ffmpeg)
[[ -f /usr/share/fonts/truetype/dejavu/DejaVuSansMono.ttf ]] || missing+=(fonts-dejavu-core)
# coturn: the local TURN relay of the WebRTC arm (docs/webrtc.md); pccstream runs its own.
command -v turnserver >/dev/null 2>&1 || [[ -x /usr/bin/turnserver ]] || missing+=(coturn)
if ((${#missing[@]})); then
  step "installing system packages: ${missing[*]}"
  if [[ $(id -u) -ne 0 ]]; then SUDO=sudo; else SUDO=; fi
  $SUDO apt-get update -qq
  DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq "${missing[@]}" >/dev/null
else
  step "system packages present (chromium, ffmpeg, fonts, coturn)"
fi

# 2. Python virtual environment with the package installed editable.
PY="${PYTHON:-python3}"
if [[ ! -x .venv/bin/python ]]; then
  step "creating Python virtual environment at .venv"
  "$PY" -m venv .venv
fi
fp=$(fingerprint pyproject.toml setup.py)
if is_fresh python "$fp" && .venv/bin/python -c 'import pccstream, aioquic' 2>/dev/null; then
  step "Python environment up to date"
else
  step "installing the pccstream Python package (editable) and dev tools"
  .venv/bin/python -m pip install -q --upgrade pip >/dev/null
  .venv/bin/python -m pip install -q -e ".[dev,cluster]"
  mark_fresh python "$fp"
fi

# 3. Node packages (npm workspaces web/ and e2e/).
fp=$(fingerprint package.json package-lock.json web/package.json e2e/package.json)
if is_fresh npm "$fp" && [[ -d node_modules ]]; then
  step "node packages up to date"
else
  step "installing node packages (npm ci)"
  npm ci --no-audit --no-fund --loglevel=error
  mark_fresh npm "$fp"
fi

# 4. The web app build (served by `pccstream serve`).
fp=$( (find web/src web/*.html web/package.json web/vite.config.ts web/tsconfig.json shared -type f 2>/dev/null | sort | xargs cat) | sha256sum | cut -d' ' -f1)
if is_fresh web "$fp" && [[ -f web/dist/index.html ]]; then
  step "web app build up to date"
else
  step "building the web app (web/dist)"
  npm run build -w web --silent
  mark_fresh web "$fp"
fi

# 5. Default media for the demo and the tests, and 6. the live channel's media: the recipes of
#    infra/media/recipes.toml (an installed pccstream makes the same on first use). Each media
#    directory carries the fingerprint of the recipe and encoder revision it was made from
#    (.recipe-fingerprint); a changed recipe or encoder makes it again.
step "default media (media/default: recipe 'default' of infra/media/recipes.toml)"
.venv/bin/pccstream media recipe default --out media/default --force --if-stale
step "live media (media/live: recipe 'live' of infra/media/recipes.toml)"
.venv/bin/pccstream media recipe live --out media/live --force --if-stale

step "done"
