#!/bin/sh
# bench/chain.sh - the chain planners' benchmarks (issue 3), printed as the
# Markdown tables of the "Chain planners" section of
# bench/results/planners-chain.md.
#
#   bench/chain.sh [BUILD_DIR]        (default: build, relative to the repository
#                                     root; configure and build first)
#
# Rotor's table fill (bench_rotor) on random heterogeneous chains, best of
# 5 runs: against stages at 500 slots, against slots at 100 stages, both
# for Rotor's recurrence alone (--plain) and for the planner's full one;
# then the chain view and the planners on a 100k-node chain (bench_chain),
# best of 3.  The machine is shared: compare best-of-N, not single runs.
# Kept as a script: the table fill and the chain view are timed by the C
# programs bench_rotor and bench_chain (no `remat` command times them), and
# the last table adds the whole command's wall time, which `remat bench`
# does not record.
set -eu
cd "$(dirname "$0")/.."
build=${1:-build}
rotor=$build/bench/bench_rotor
chain=$build/bench/bench_chain
if [ ! -x "$rotor" ] || [ ! -x "$chain" ]; then
	echo "chain.sh: build first: cmake -S . -B $build && cmake --build $build -j2" >&2
	exit 2
fi

field() { # KEY LINE: the value of KEY=VALUE in LINE
	echo "$2" | tr ' ' '\n' | sed -n "s/^$1=//p"
}

echo "machine: $(uname -m), $(nproc) cores, $(. /etc/os-release && echo "$PRETTY_NAME"), $(gcc --version | head -1)"
echo "date: $(date -u +%F), load average at start: $(cut -d' ' -f1-3 /proc/loadavg)"
echo
row() { # L M: one table row, best of 5 runs (wall and CPU seconds)
	p=$("$rotor" --plain "$1" "$2" 5)
	f=$("$rotor" "$1" "$2" 5)
	echo "| $1 | $2 | $(field wall_best "$p") / $(field cpu_best "$p") |" \
	     "$(field wall_best "$f") / $(field cpu_best "$f") | $(field tables_mib "$f") |" \
	     "$(field maxrss_mib "$f") |"
}
head="| stages | slots | Rotor's recurrence: wall / CPU (s) | planner's full table: wall / CPU (s) | tables (MiB) | peak RSS (MiB) |"
echo "$head"
echo "| ---: | ---: | ---: | ---: | ---: | ---: |"
for L in 25 50 100 150 200 300; do
	row "$L" 500
done
echo
echo "$head"
echo "| ---: | ---: | ---: | ---: | ---: | ---: |"
for M in 125 250 500 1000 2000; do
	row 100 "$M"
done
echo
echo "100k-node chain (50,000 layers) built in memory, best of 3 (bench_chain):"
echo
echo '```'
"$chain" 50000 3 10
"$chain" 50000 3 50
echo '```'
echo
echo "The same chain through the command line (remat gen chain 50000), one run each:"
echo "planning time as reported by --json, and the whole command's wall time (load included)."
echo
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
"$build/remat" gen chain 50000 -o "$tmp/c.json"
echo "| planner | budget | planning (s) | whole command (s) | overhead |"
echo "| --- | ---: | ---: | ---: | ---: |"
for p in chen chen-greedy rotor; do
	for b in 10% 50%; do
		t0=$(date +%s.%N)
		out=$("$build/remat" plan "$tmp/c.json" --budget "$b" --planner "$p" --json 2>/dev/null || true)
		t1=$(date +%s.%N)
		echo "$out" | /usr/bin/python3 -c '
import json, sys
d = json.loads(sys.stdin.read())
ov = "%+.1f%%" % (100 * d["overhead"]) if d["feasible"] else "no fit"
print("| %s | %s | %.3f | %.2f | %s |" % (sys.argv[1], sys.argv[2], d["time_s"],
      float(sys.argv[4]) - float(sys.argv[3]), ov))' "$p" "$b" "$t0" "$t1"
	done
done
