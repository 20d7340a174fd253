#!/usr/bin/env bash
# The benchmark regression check of CI: every graph at hand x the
# deterministic planners x a few budgets, compared with the committed
# bench/data/baseline.json.
#
#   bench/baseline.sh            check: exit 5 naming each regression (a run
#                                that fit no longer does, costs more than 1%
#                                more, or claims a peak over its budget)
#   bench/baseline.sh --update   rewrite bench/data/baseline.json (same runs)
#
# Graphs: examples/, graphs/ (the model zoo, when present) and
# ../shared/benchmarks/published/ (when present); paths are relative to the
# repository root, which is how runs are matched.  Runs the baseline has
# but this machine cannot (a folder missing) are reported as "not run",
# runs the baseline lacks (a planner added since) as "new": neither fails.
# Environment: REMAT (the binary, default build/remat), PLANNERS (default:
# every deterministic heuristic planner; auto and checkmate are left out
# because they run the MILP until a time limit, so their results depend
# on the machine's speed), JOBS (default 2).
set -euo pipefail
cd "$(dirname "$0")/.."

remat=${REMAT:-build/remat}
graphs=(examples)
if [ -d graphs ] && [ -n "$(find graphs -name '*.json' -print -quit)" ]; then
  graphs+=(graphs)
fi
if [ -d ../shared/benchmarks/published ]; then
  graphs+=(../shared/benchmarks/published)
fi
args=(bench "${graphs[@]}" --planners "${PLANNERS:-none,chen,chen-greedy,rotor,rockmate,twremat,greedy,dtr,mincut}"
      --budgets 100%,90%,80%,70%,50%,30% --time-limit 30 --jobs "${JOBS:-2}" -q
      --baseline bench/data/baseline.json)
case "${1:-}" in
  --update) args+=(--update-baseline) ;;
  "") ;;
  *) echo "usage: bench/baseline.sh [--update]" >&2; exit 2 ;;
esac
exec "$remat" "${args[@]}"
