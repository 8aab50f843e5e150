#!/usr/bin/env bash
set -u
cd /work/main
export PCCSTREAM_CACHE=/work/main/.cache
P=/work/main/.venv/bin/pccstream
date -u +%T
$P media synth --out .cache/media/fig51-50000k-480p --ladder 50000k@854x480 --duration 70 --force
date -u +%T
$P media synth --out .cache/media/fig52-10000k-480p --ladder 10000k@854x480 --duration 75 --force
date -u +%T
echo mediadone
