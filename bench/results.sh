#!/usr/bin/env bash
# The full sweep behind the "Benchmark sweep" section of
# bench/results/sweep.md (headline figures: bench/RESULTS.md):
# every graph at hand x every planner x budgets 5%..100% in steps of 5%.
#
#   bench/results.sh                 run the sweep (bench/data/sweep.csv), draw
#                                    build/bench-plots/*.svg, refresh
#                                    docs/bench-overhead.svg, rewrite the section
#   bench/results.sh --from FILE     rewrite the section from results already
#                                    made (say, merged from --emit-jobs runs)
#
# Only the text between <!-- sweep:begin --> and <!-- sweep:end --> is
# replaced.  Environment: REMAT (default build/remat), PLANNERS (default
# all), BUDGETS (default 5%..100%:5%), TIME_LIMIT (seconds per run, default
# 60), JOBS (default 2).  With the ILP planners this takes a while: most
# runs at low budgets hit the time limit.
set -euo pipefail
cd "$(dirname "$0")/.."

export REMAT=${REMAT:-build/remat}
planners=${PLANNERS:-all}
budgets=${BUDGETS:-5%..100%:5%}
time_limit=${TIME_LIMIT:-60}
jobs=${JOBS:-2}
out=bench/data/sweep.csv

if [ "${1:-}" = "--from" ]; then
  [ $# -eq 2 ] || { echo "usage: bench/results.sh [--from FILE]" >&2; exit 2; }
  out=$2
else
  graphs=(examples)
  if [ -d graphs ] && [ -n "$(find graphs -name '*.json' -print -quit)" ]; then
    graphs+=(graphs)
  fi
  if [ -d ../shared/benchmarks/published ]; then
    graphs+=(../shared/benchmarks/published)
  fi
  "$REMAT" bench "${graphs[@]}" --planners "$planners" --budgets "$budgets" \
    --time-limit "$time_limit" --jobs "$jobs" -o "$out" --plot build/bench-plots
  # The plot docs/benchmarking.md shows.
  if [ -f build/bench-plots/resnet50-train.svg ]; then
    mkdir -p docs
    cp build/bench-plots/resnet50-train.svg docs/bench-overhead.svg
  fi
fi
/usr/bin/python3 bench/results.py "$out" bench/results/sweep.md --budgets "$budgets" \
  --time-limit "$time_limit" --jobs "$jobs"
echo "results.sh: wrote the sweep section of bench/results/sweep.md from $out" >&2
