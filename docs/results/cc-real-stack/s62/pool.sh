#!/usr/bin/env bash
# Writes pooled-s62.md: every pool command of session 62 and its output (run in docs/results/thesis-scale).
set -u
P=/work/main/.venv/bin/pccstream
AC='vivace:rtt_gradient_autocorr=1'
OLD='vivace:increase_boundary_floor_packets=5:ss_exit_min_queue=true|vivace'
F51OLD="fig51-50000k-s57-480p.sqlite fig51-50000k-s57b-480p.sqlite fig51-50000k-s58-480p.sqlite fig51-50000k-s60-480p.sqlite fig51-50000k-s60w-480p.sqlite fig51-50000k-s60a-480p.sqlite fig51-50000k-s61-480p.sqlite fig51-50000k-s61n-480p.sqlite"
F52OLD="fig52-10000k-s56-1452.sqlite fig52-10000k-s56b-1452.sqlite fig52-10000k-s58-1452.sqlite fig52-10000k-s59-1452.sqlite fig52-10000k-s61-1452.sqlite fig52-10000k-s61n-1452.sqlite"
run() {
  echo "## pccstream ab pool $*" | sed "s/$AC/\$AC/g"
  echo
  $P ab pool "$@" 2>&1 | grep -v '^$'
  echo
}
{
echo "# Session 62: pooled paired differences (buffering ratio, points)"
echo
echo "\`AC\` = \`$AC\`, the setting \`vivace\` has from session 62. \`vivace\` in these databases is the default before it."
echo
run fig51-50000k-s62-480p.sqlite fig51-50000k-s62b-480p.sqlite --arm $AC --against vivace --against bbr
run fig51-50000k-s62-480p.sqlite fig51-50000k-s62b-480p.sqlite --arm vivace --against bbr
run $F51OLD fig51-50000k-s62-480p.sqlite fig51-50000k-s62b-480p.sqlite --arm vivace --against bbr --mixed
run $F51OLD fig51-50000k-s62-480p.sqlite fig51-50000k-s62b-480p.sqlite --arm vivace --against bbr --mixed --drop-starved
run fig52-10000k-s62-1452.sqlite --arm $AC --against vivace
run fig52-10000k-s62-1452.sqlite fig52-10000k-s62b-1452.sqlite --arm $AC --against bbr
run fig52-10000k-s62b-1452.sqlite --arm $AC --against cubic
run $F52OLD fig52-10000k-s62-1452.sqlite --mixed --arm "$OLD" --against bbr
} 
