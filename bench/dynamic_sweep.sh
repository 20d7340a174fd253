#!/usr/bin/env bash
# Overhead versus budget for the dynamic planners: the "Overhead versus
# budget" tables of bench/results/planners-dynamic.md ("Dynamic planners").
#
#   bench/dynamic_sweep.sh GRAPH...
#
# For each graph, `remat bench` at 100%, 90%, ..., 10% of the no-remat peak
# and at the graph's memory lower bound (`remat info`), once per planner in
# PLANNERS (default none,greedy) and once per dtr heuristic in HEURISTICS
# (default all five); then bench/table.py prints a table per graph: the
# overhead in % of the baseline cost, "-" where no schedule fits.  Budgets
# below the lower bound are left out.  The results stay in OUT (default
# build/dynamic-sweep/), one CSV per graph and configuration.
# Environment: REMAT (default build/remat), PLANNERS, HEURISTICS, JOBS
# (default 2), OUT.
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
remat=${REMAT:-$root/build/remat}
planners=${PLANNERS:-none,greedy}
heuristics=${HEURISTICS:-dtr,dtr-local,lru,largest,msps}
out=${OUT:-$root/build/dynamic-sweep}
[ $# -gt 0 ] || { echo "usage: bench/dynamic_sweep.sh GRAPH..." >&2; exit 2; }

files=()
i=0
for g in "$@"; do
  i=$((i + 1))
  dir=$out/$(printf %02d "$i")-$(basename "$g" .json)
  mkdir -p "$dir"
  lb=$("$remat" info "$g" --json | sed -n 's/.*"min_peak_lower_bound": \([0-9]*\).*/\1/p')
  run() { # LABEL OPTIONS...: one remat bench of this graph into DIR/LABEL.csv
    local label=$1
    shift
    "$remat" bench "$g" --budgets "100%..10%:10%,$lb" --jobs "${JOBS:-2}" -q \
      -o "$dir/${label// /-}.csv" "$@"
    files+=("$label=$dir/${label// /-}.csv")
  }
  for p in ${planners//,/ }; do
    run "$p" --planners "$p"
  done
  for h in ${heuristics//,/ }; do
    run "dtr $h" --planners dtr --heuristic "$h"
  done
done
/usr/bin/python3 "$root/bench/table.py" "${files[@]}" --rows budget --cols label \
  --title $'#### {graph} ({base})\n\n{nodes} nodes; no-remat peak {no_remat_peak} bytes; lower bound {lower_bound} bytes ({lb_pct:.1f}%). Overhead in % of the baseline cost; - = exit 3.'
