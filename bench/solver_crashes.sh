#!/usr/bin/env bash
# Solver children killed by a signal (issue 36): each command RUNS times
# (default 20) under strace, counting the children of remat that die by a
# signal it did not send (SIGSEGV, SIGABRT, ...; remat's own SIGKILL at a
# deadline is not counted), and the solves remat itself reports lost
# (--json solver_crashes).  Exit 1 when any child crashed.
#
#   bench/solver_crashes.sh [RUNS]        (needs strace and build/remat)
set -euo pipefail
cd "$(dirname "$0")/.."
remat=${REMAT:-build/remat}
runs=${1:-20}
command -v strace >/dev/null || { echo "solver_crashes.sh: needs strace" >&2; exit 2; }
log=$(mktemp)
trap 'rm -f "$log"' EXIT
total=0
for spec in "graphs/resnet18.json 70%" "graphs/densenet169.json 50%" "graphs/gpt2_small.json 50%"; do
  set -- $spec
  crashed=0 reported=0
  for _ in $(seq "$runs"); do
    json=$(strace -f -e trace=none -o "$log" \
             "$remat" plan "$1" -b "$2" -t 3 -q --json)
    c=$(grep -E "\+\+\+ killed by SIG" "$log" | grep -vc "SIGKILL" || true)
    r=$(printf '%s' "$json" | /usr/bin/python3 -c 'import json,sys; print(json.load(sys.stdin)["solver_crashes"])')
    crashed=$((crashed + c))
    reported=$((reported + r))
  done
  echo "remat plan $1 -b $2 -t 3: $runs runs, $crashed children killed by a signal, $reported solves reported lost"
  total=$((total + crashed))
done
[ "$total" -eq 0 ]
