#!/usr/bin/env bash
# `remat plan G --budget lowest` (issue 30): the lowest peak auto reaches
# in one run with the default options (10 s), against the cut peak bound
# (no schedule peaks lower).  Prints a Markdown table: wall time of the
# whole process, the peak, the bound, how far above it, the overhead at
# that peak, and the note (probes).
#
#   bench/lowest.sh [GRAPH...]      (default: gpt2_small, resnet101, vit_b_16)
#
# Needs build/remat (REMAT to override).  Recorded in
# bench/results/auto-latency.md.
set -euo pipefail
cd "$(dirname "$0")/.."
remat=${REMAT:-build/remat}
graphs=("$@")
[ ${#graphs[@]} -gt 0 ] || graphs=(graphs/gpt2_small.json graphs/resnet101.json graphs/vit_b_16.json)
echo "| graph | wall s | peak | peak lower bound | above it | overhead | note |"
echo "| --- | ---: | ---: | ---: | ---: | ---: | --- |"
for g in "${graphs[@]}"; do
	t0=$(date +%s.%N)
	out=$("$remat" plan "$g" --budget lowest --json -q)
	t1=$(date +%s.%N)
	/usr/bin/python3 - "$g" "$t0" "$t1" "$out" <<'PY'
import json, sys
g, t0, t1, out = sys.argv[1], float(sys.argv[2]), float(sys.argv[3]), json.loads(sys.argv[4])
mib = lambda b: "%.2f MiB" % (b / 2 ** 20)
p, lb = out["peak_mem"], out["peak_lower_bound"]
print("| %s | %.2f | %s | %s | %+.2f%% | %+.2f%% | %s |" % (
    g.split("/")[-1].replace(".json", ""), t1 - t0, mib(p), mib(lb), 100.0 * (p / lb - 1),
    100.0 * out["overhead"], out.get("note", "")))
PY
done
