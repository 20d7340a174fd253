#!/bin/sh
# bench/chain.sh - the chain planners' benchmarks (issue 3), printed as the
# Markdown tables of bench/RESULTS.md's "Chain planners" section.
#
#   bench/chain.sh [BUILD_DIR]        (default: build; configure and build first)
#
# Rotor's table fill (bench_rotor) on random heterogeneous chains, best of
# 5 runs: against stages at 500 slots, against slots at 100 stages, both
# for Rotor's recurrence alone (--plain) and for the planner's full one;
# then the chain view and the planners on a 100k-node chain (bench_chain),
# best of 3.  The machine is shared: compare best-of-N, not single runs.
set -eu
build=${1:-build}
rotor=$build/bench/bench_rotor
chain=$build/bench/bench_chain
if [ ! -x "$rotor" ] || [ ! -x "$chain" ]; then
	echo "chain.sh: build first: cmake -S . -B $build && cmake --build $build -j2" >&2
	exit 2
fi

field() { # NAME LINE: the word after NAME
	echo "$2" | awk -v k="$1" '{ for (i = 1; i < NF; i++) if ($i == k) { print $(i + 1); exit } }'
}

echo "machine: $(uname -m), $(nproc) cores, $(. /etc/os-release && echo "$PRETTY_NAME"), $(gcc --version | head -1)"
echo "date: $(date -u +%F), load average at start: $(cut -d' ' -f1-3 /proc/loadavg)"
echo
echo "| stages | slots | Rotor's recurrence (s) | with held/release variants (s) | tables (MiB) | peak RSS (MiB) |"
echo "| ---: | ---: | ---: | ---: | ---: | ---: |"
for L in 25 50 100 150 200 300; do
	p=$("$rotor" --plain "$L" 500 5)
	f=$("$rotor" "$L" 500 5)
	echo "| $L | 500 | $(field best "$p") | $(field best "$f") | $(field tables "$f") | $(field maxrss "$f") |"
done
echo
echo "| stages | slots | Rotor's recurrence (s) | with held/release variants (s) | tables (MiB) | peak RSS (MiB) |"
echo "| ---: | ---: | ---: | ---: | ---: | ---: |"
for M in 125 250 500 1000 2000; do
	p=$("$rotor" --plain 100 "$M" 5)
	f=$("$rotor" 100 "$M" 5)
	echo "| 100 | $M | $(field best "$p") | $(field best "$f") | $(field tables "$f") | $(field maxrss "$f") |"
done
echo
echo "100k-node chain (50,000 layers), best of 3:"
echo
echo '```'
"$chain" 50000 3 10
"$chain" 50000 3 50
echo '```'
