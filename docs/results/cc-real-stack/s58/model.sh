#!/usr/bin/env bash
set -u
cd /work/s58/wt
export PYTHONPATH=/work/s58/wt/server
PY=/work/main/.venv/bin/python
OUT=/work/s58/out
date -u +%T
$PY -m pccstream.bench.video_model fig51 --bitrate 50 --seeds 10 --arms vivace vivace:decrease_boundary_max=0.05 >$OUT/s58-model-fig51-50.json 2>$OUT/model51.log
date -u +%T
$PY -m pccstream.bench.video_model fig52 --bitrate 10 --seeds 12 --arms vivace vivace:decrease_boundary_max=0.05 >$OUT/s58-model-fig52-10.json 2>$OUT/model52.log
date -u +%T
echo modeldone
