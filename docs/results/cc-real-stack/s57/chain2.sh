#!/usr/bin/env bash
# Session 57 chain 2: 480p media at 50 Mbit/s on the wire (x264 CBR with filler, so decoding is light), and what one viewer of it costs on this host (`bench sustain`).
set -u
WT=/work/s57/wt
cd $WT
export PYTHONPATH=$WT/server PCCSTREAM_CACHE=/work/main/.cache
P=/work/main/.venv/bin/pccstream
OUT=/work/s57/out
M=/work/main/.cache/media/fig51-50000k-480p
stamp() { echo "$1 $(date -u +%T) $(cat /proc/loadavg)" >>$OUT/loads.txt; }
until grep -q done1 $OUT/loads.txt; do sleep 20; done
stamp "synth start"
[ -f $M/manifest.json ] || $P media synth --out $M --ladder 50000k@854x480 --duration 70 --force >$OUT/synth.log 2>&1
stamp "synth end"
while [ "$(cut -d' ' -f1 /proc/loadavg | cut -d. -f1)" -ge 1 ]; do sleep 20; done
stamp "sustain start"
$P bench sustain --bitrates 50000 --duration 30 --media $M --json >$OUT/sustain-480p.json 2>$OUT/sustain-480p.log
stamp "sustain end"
echo done2 >>$OUT/loads.txt
