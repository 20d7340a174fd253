#!/usr/bin/env bash
# PyTorch's default partitioner against the other planners: the "mincut"
# section of bench/results/planners-mincut.md.
#
#   bench/mincut.sh [GRAPH...]
#
# Default graphs: the training graphs of the model zoo (graphs/), the
# hand-made examples/train-vgg-like.json and, when they are beside the
# repository, the field's published training graphs
# (../shared/benchmarks/published/*-train.json).  Budgets: 99.99% (just
# under the no-remat peak: mincut's natural partition whenever it fits
# there, since the needed nodes' plain order does not) and 90..50%.
# Planners: mincut, rotor, twremat, dtr, checkmate-free auto (each with
# --time-limit TIME_LIMIT, default 10 s).  Prints one table of overheads
# (% of the baseline cost) and one of peaks (% of the no-remat peak) per
# graph.  Results stay in OUT (default build/mincut-bench/).
# Environment: REMAT (default build/remat), TIME_LIMIT, JOBS (default 1),
# OUT.
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
remat=${REMAT:-$root/build/remat}
out=${OUT:-$root/build/mincut-bench}
mkdir -p "$out"
if [ $# -eq 0 ]; then
  set -- "$root"/graphs/*.json "$root/examples/train-vgg-like.json"
  for g in "$root"/../shared/benchmarks/published/*-train.json; do
    [ -f "$g" ] && set -- "$@" "$g"
  done
fi
"$remat" bench "$@" --planners mincut,rotor,twremat,dtr,auto \
  --budgets 99.99%,90%,80%,70%,60%,50% --time-limit "${TIME_LIMIT:-10}" \
  --jobs "${JOBS:-1}" -q -o "$out/results.csv"
/usr/bin/python3 "$root/bench/table.py" "$out/results.csv" --rows budget --cols label \
  --title $'#### {graph}\n\n{nodes} nodes, no-remat peak {no_remat_peak} bytes. Overhead in % of the baseline cost; - = exit 3.'
# mincut's natural partition: its peak and overhead just under the no-remat peak.
/usr/bin/python3 - "$out/results.csv" <<'PY'
import csv, sys
print("\n| graph | mincut natural peak (% of no-remat) | its overhead |\n| --- | ---: | ---: |")
for r in csv.DictReader(open(sys.argv[1])):
    if r["planner"] == "mincut" and r["budget_spec"] == "99.99%":
        ok = r["status"] == "ok"
        print("| %s | %s | %s |" % (r["graph"],
              "%.1f" % (100 * int(r["peak"]) / int(r["no_remat_peak"])) if ok else "over",
              "+%.2f%%" % (100 * float(r["overhead"])) if ok else "-"))
PY
