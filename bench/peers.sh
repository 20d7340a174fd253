#!/bin/bash
# bench/peers.sh - remat's heuristic planners against the public reference
# implementations, on identical graphs and absolute budgets (issue 16).
#
#   bench/peers.sh [--simrd DIR] [--repeat N] [REMAT]
#
# 1. twremat on the peers' training chains (../shared/benchmarks/peers/
#    tw100/400/1000.json) at their budgets (40% of the plain order's
#    no-remat peak): overhead and CPU time (user + system of the whole
#    `remat plan` process by getrusage, loading included, least of N runs)
#    next to the
#    Haskell twremat's overhead, which is QUOTED from the peers' README
#    (GHC is not installed here, so it is not rerun).
# 2. dtr (default heuristic) on every zoo graph (graphs/*.json) at 50% and
#    30% of the no-remat peak.  With --simrd DIR (the `simrd` folder of a
#    uwsampl/dtr-prototype checkout), DTR's own simulator runs side by side
#    on the same graph and absolute budget (bench/simrd_run.py: DTREqClass
#    on RuntimeV2EagerOptimized), and the CPU ratio is simrd's simulation
#    alone (its loading excluded, which favours simrd) over remat's whole
#    process (least of N; simrd once when a run takes over 5 s).  Without
#    it, the six figures the peers' README lists are shown as quoted, the
#    others as "-".
#
# Prints Markdown tables; bench/results/peers.md, section "Peers",
# records them (the headline table: bench/RESULTS.md).
# Why not `remat bench`: the peers' figures, simrd and CPU time of whole
# processes are outside it.
set -eu
HERE=$(cd "$(dirname "$0")" && pwd)
ROOT=$(dirname "$HERE")
PEERS=${PEERS:-$ROOT/../shared/benchmarks/peers}
SIMRD=
REPEAT=3
while [ $# -gt 0 ]; do
	case "$1" in
	--simrd) SIMRD=$2; shift 2 ;;
	--repeat) REPEAT=$2; shift 2 ;;
	*) break ;;
	esac
done
REMAT=${1:-$ROOT/build/remat}
PY=/usr/bin/python3

# cpu_of CMD...: least user+system CPU seconds (getrusage of the child,
# microseconds) of $REPEAT runs; stdout of the last run in $OUT.
OUT=$(mktemp)
trap 'rm -f "$OUT"' EXIT
cpu_of() {
	$PY -c '
import resource, subprocess, sys
out, n, cmd = sys.argv[1], int(sys.argv[2]), sys.argv[3:]
best = None
for _ in range(n):
    r0 = resource.getrusage(resource.RUSAGE_CHILDREN)
    with open(out, "w") as f:
        subprocess.run(cmd, stdout=f, stderr=subprocess.DEVNULL)
    r1 = resource.getrusage(resource.RUSAGE_CHILDREN)
    t = (r1.ru_utime - r0.ru_utime) + (r1.ru_stime - r0.ru_stime)
    best = t if best is None or t < best else best
print("%.4f" % best)' "$OUT" "$REPEAT" "$@"
}
field() { $PY -c 'import json,sys; d=json.load(open(sys.argv[1])); print(eval(sys.argv[2]))' "$OUT" "$1"; }

echo "## twremat on the peers' training chains (budget: 40% of the plain order's peak)"
echo
echo "| file | nodes | budget | Haskell twremat (quoted) | remat twremat | peak | remat CPU s (least of $REPEAT) |"
echo "| --- | ---: | ---: | ---: | ---: | ---: | ---: |"
for row in "tw100 5348 +20.2%" "tw400 21711 +15.0%" "tw1000 55713 +13.1%"; do
	set -- $row
	f=$PEERS/$1.json
	[ -f "$f" ] || { echo "| $1 | missing: $f |"; continue; }
	cpu=$(cpu_of "$REMAT" plan "$f" --budget "$2" --planner twremat --json -q -t 0)
	n=$($PY -c 'import json,sys; print(len(json.load(open(sys.argv[1]))["nodes"]))' "$f")
	ov=$(field '"%+.1f%%" % (100 * d["overhead"]) if d["feasible"] else "no fit"')
	pk=$(field 'd["peak_mem"]')
	echo "| $1 | $n | $2 | $3 | $ov | $pk | $cpu |"
done
echo

echo "## dtr (default heuristic) on the zoo"
echo
if [ -n "$SIMRD" ]; then
	echo "simrd side by side: \`bench/simrd_run.py $SIMRD GRAPH BUDGET\` (DTREqClass, RuntimeV2EagerOptimized)."
	echo
	echo "| graph | budget | bytes | simrd DTREqClass | remat dtr | remat CPU s | simrd CPU s | simrd / remat |"
	echo "| --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: |"
else
	echo "simrd not given (--simrd DIR): its figures are the peers' README's, QUOTED."
	echo
	echo "| graph | budget | bytes | simrd DTREqClass (quoted) | remat dtr | remat CPU s |"
	echo "| --- | ---: | ---: | ---: | ---: | ---: |"
fi
quoted() {
	case "$1 $2" in
	"resnet101 50") echo "+2.9%" ;; "resnet101 30") echo "+15.7%" ;;
	"densenet169 50") echo "+11.2%" ;; "gpt2_small 50") echo "+8.9%" ;;
	"vit_b_16 30") echo "+30.8%" ;; "lstm64 50") echo "+72.3%" ;;
	*) echo "" ;;
	esac
}
for g in "$ROOT"/graphs/*.json; do
	name=$(basename "$g" .json)
	for p in 50 30; do
		cpu=$(cpu_of "$REMAT" plan "$g" --budget "$p%" --planner dtr --json -q -t 0)
		b=$(field 'd["budget"]')
		ov=$(field '"%+.1f%%" % (100 * d["overhead"]) if d["feasible"] else "no fit"')
		if [ -n "$SIMRD" ]; then
			# Least of $REPEAT runs; one run when it takes over 5 s.
			best=
			for i in $(seq "$REPEAT"); do
				s=$($PY "$HERE/simrd_run.py" "$SIMRD" "$g" "$b")
				t=$(echo "$s" | $PY -c 'import json,sys; print(json.load(sys.stdin)["cpu_s"])')
				if [ -z "$best" ] || awk "BEGIN{exit !($t < $best)}"; then best=$t; fi
				awk "BEGIN{exit !($t > 5)}" && break
			done
			so=$(echo "$s" | $PY -c 'import json,sys; d=json.load(sys.stdin); print("%+.1f%%" % d["overhead_pct"] if d["ok"] else "no fit (" + d["why"] + ")")')
			ratio=$(awk "BEGIN{printf \"%.1f\", $best / ($cpu > 0 ? $cpu : 1e-4)}")
			echo "| $name | $p% | $b | $so | $ov | $cpu | $(printf %.3f "$best") | $ratio |"
		else
			q=$(quoted "$name" "$p")
			echo "| $name | $p% | $b | ${q:--} | $ov | $cpu |"
		fi
	done
done
