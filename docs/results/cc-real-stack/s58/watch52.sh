#!/usr/bin/env bash
OUT=/work/s58/out
while kill -0 9484 2>/dev/null; do sleep 3; done
mv $OUT/fig52-10000k-s58-1452.sqlite.partial $OUT/fig52-10000k-s58-1452.sqlite
echo "fig52 end $(date -u +%T) $(cat /proc/loadavg)" >>$OUT/loads.txt
