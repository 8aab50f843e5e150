#!/usr/bin/env bash
OUT=/work/s58/out
until grep -q "fig51-50-dbl end" $OUT/loads.txt; do sleep 2; done
pkill -f chain4.sh
echo "chain4 stopped before 1bdp-dbl $(date -u +%T)" >>$OUT/loads.txt
