#!/usr/bin/env bash
# Planning time of the dynamic planners on 100k-node generated graphs: the
# "Planning time on 100k-node graphs" tables of
# bench/results/planners-dynamic.md.
#
#   bench/dynamic_scale.sh [--extra]
#
# Generates a training chain (`remat gen chain LAYERS --loss-mem 1MiB`) and
# a layered training network with skip connections and workspaces
# (bench/gen_graphs.py layered LAYERS), each with 2 LAYERS + 2 nodes, runs
# `remat bench` RUNS times with greedy, twremat (--time-limit 60) and dtr
# under every heuristic at 50%, 25% and 10% of the no-remat peak, and prints a table per graph with
# bench/table.py: the best planning time (time_s: inside remat, loading
# excluded), the overhead and the recomputes of each run, "-" where no
# schedule fits.  With --extra, two more tables on the layered network at
# 10%: dtr's time for LAYERS/4, /2, x1 and x2 (near-linear growth), and
# the effect of --sample (0 = score every candidate), one run each.
# Runs one at a time (--jobs 1), since they are timed.  The graphs and
# results stay in OUT.
# Environment: REMAT (default build/remat), LAYERS (default 50000), RUNS
# (default 3), OUT (default build/dynamic-scale).
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
remat=${REMAT:-$root/build/remat}
layers=${LAYERS:-50000}
runs=${RUNS:-3}
out=${OUT:-$root/build/dynamic-scale}
extra=0
case "${1:-}" in
  --extra) extra=1 ;;
  "") ;;
  *) echo "usage: bench/dynamic_scale.sh [--extra]" >&2; exit 2 ;;
esac
mkdir -p "$out"
table() { /usr/bin/python3 "$root/bench/table.py" --title '' "$@"; }
time_cell='{time_s:.3f} / {overhead_pct:.1f}% / {recomputes}'

gen() { # KIND N: OUT/KINDN.json, once
  local f=$out/$1$2.json
  if [ ! -f "$f" ]; then
    if [ "$1" = chain ]; then
      "$remat" gen chain "$2" --loss-mem 1MiB --name "chain$2" -o "$f"
    else
      /usr/bin/python3 "$root/bench/gen_graphs.py" "$1" "$2" > "$f.tmp" && mv "$f.tmp" "$f"
    fi
  fi
  echo "$f"
}
runs_of() { # N GRAPH LABEL BUDGETS OPTIONS...: N remat bench runs into OUT/GRAPH.LABEL.R.csv
  local n=$1 g=$2 label=$3 budgets=$4 r
  shift 4
  for r in $(seq "$n"); do
    "$remat" bench "$g" --budgets "$budgets" --jobs 1 -q "$@" \
      -o "${g%.json}.${label// /-}.$r.csv"
    files+=("$label=${g%.json}.${label// /-}.$r.csv")
  done
}

for kind in chain layered; do
  g=$(gen "$kind" "$layers")
  "$remat" info "$g" --json | sed -n \
    's/.*"name": "\([^"]*\)".*"nodes": \([0-9]*\), "edges": \([0-9]*\).*/### \1: \2 nodes, \3 edges\n/p'
  files=()
  runs_of "$runs" "$g" greedy 50%,25%,10% --planners greedy
  runs_of "$runs" "$g" twremat 50%,25%,10% --planners twremat --time-limit 60
  for h in dtr dtr-local lru largest msps; do
    runs_of "$runs" "$g" "dtr $h" 50%,25%,10% --planners dtr --heuristic "$h"
  done
  table "${files[@]}" --rows label --cols budget --corner planner \
    --col '{}: time s / overhead / recomputes' --cell "$time_cell"
  echo
done

[ "$extra" = 1 ] || exit 0
echo "### dtr on layered networks at 10%: growth with size"
echo
files=()
for n in $((layers / 4)) $((layers / 2)) "$layers" $((2 * layers)); do
  runs_of "$runs" "$(gen layered "$n")" dtr 10% --planners dtr
done
table "${files[@]}" --rows graph --cols budget --row '{graph} | {nodes}' \
  --corner 'graph | nodes' --col 'time s / overhead / recomputes' \
  --cell '{time_s:.3f} / {overhead_pct:.2f}% / {recomputes}'
echo
echo "### dtr --sample on layered$layers at 10% (one run each)"
echo
files=()
g=$(gen layered "$layers")
for s in 0 64 256 1024; do
  runs_of 1 "$g" "$s" 10% --planners dtr --sample "$s"
done
table "${files[@]}" --rows label --cols budget --corner=--sample \
  --col 'time s / overhead / recomputes' \
  --cell '{time_s:.3f} / {overhead_pct:.2f}% / {recomputes}'
echo
