#!/bin/sh
# bench/rockmate.sh - issue 12: the chain view through aliasing, and the
# rockmate planner against the others.  Results:
# bench/results/planners-chain.md, section "Chain view through aliasing; rockmate".
#
#   bench/rockmate.sh chain BUILD [OLD_REMAT]   stages per zoo graph; rotor
#                                                and chen at 90/70/50% on
#                                                resnet101 and gpt2_small
#                                                (OLD_REMAT: a binary built
#                                                before the change, side by side)
#   bench/rockmate.sh sweep BUILD [LIMIT]        rockmate, rotor, twremat,
#                                                checkmate (--time-limit LIMIT,
#                                                default 60), auto at 90..30%
#   bench/rockmate.sh time BUILD [REPEAT]        rockmate's planning time on
#                                                gpt2_small (min of REPEAT runs,
#                                                wall and CPU)
#
# Markdown tables on stdout.  Run from the source tree.
set -eu
mode=${1:?usage: bench/rockmate.sh chain|sweep|time BUILD [...]}
build=${2:?usage: bench/rockmate.sh chain|sweep|time BUILD [...]}
remat=$build/remat
py=/usr/bin/python3

# plan BIN GRAPH BUDGET PLANNER [ARGS...]: "+x.xx%" or "none", and the time
plan() {
	bin=$1; gr=$2; bu=$3; pl=$4; shift 4
	"$bin" plan "graphs/$gr.json" -b "$bu" --planner "$pl" --json "$@" 2>/dev/null |
	$py -c '
import json, sys
d = json.load(sys.stdin)
ov = "%+.2f%%" % (100 * d["overhead"]) if d["feasible"] else "none"
print("%s (%.2f s)" % (ov, d["time_s"] or 0))' || echo "error"
}

stages() {
	"$1" info "graphs/$2.json" --json 2>/dev/null |
	$py -c 'import json, sys; d = json.load(sys.stdin); print("%d | %d" % (d["stages"], d["largest_stage_nodes"]))'
}

case $mode in
chain)
	old=${3:-}
	echo "| graph | nodes | stages (largest) before | stages (largest) after |"
	echo "| --- | ---: | ---: | ---: |"
	for g in resnet18 resnet101 gpt2_small vit_b_16 regnet_x_3_2gf lstm64 convnext_tiny; do
		n=$("$remat" info "graphs/$g.json" --json | $py -c 'import json,sys; print(json.load(sys.stdin)["nodes"])')
		a=$(stages "$remat" $g | sed 's/ | /  (/; s/$/)/')
		b="-"
		[ -n "$old" ] && b=$(stages "$old" $g | sed 's/ | /  (/; s/$/)/')
		echo "| $g | $n | $b | $a |"
	done
	echo
	echo "| graph | budget | planner | before | after |"
	echo "| --- | ---: | --- | ---: | ---: |"
	for g in resnet101 gpt2_small; do
		for b in 90% 70% 50%; do
			for p in rotor chen; do
				a=$(plan "$remat" $g $b $p)
				o="-"
				[ -n "$old" ] && o=$(plan "$old" $g $b $p)
				echo "| $g | $b | $p | $o | $a |"
			done
		done
	done
	;;
sweep)
	limit=${3:-60}
	echo "| graph | budget | rockmate | rotor | twremat | checkmate ($limit s) | auto |"
	echo "| --- | ---: | ---: | ---: | ---: | ---: | ---: |"
	for g in resnet101 gpt2_small vit_b_16 regnet_x_3_2gf lstm64; do
		for b in 90% 70% 50% 40% 30%; do
			r1=$(plan "$remat" $g $b rockmate)
			r2=$(plan "$remat" $g $b rotor)
			r3=$(plan "$remat" $g $b twremat)
			r4=$(plan "$remat" $g $b checkmate --time-limit "$limit")
			r5=$(plan "$remat" $g $b auto)
			echo "| $g | $b | $r1 | $r2 | $r3 | $r4 | $r5 |"
		done
	done
	;;
time)
	rep=${3:-5}
	tf=$(mktemp)
	trap 'rm -f "$tf"' EXIT
	echo "| budget | best wall (s) | best CPU user+sys (s) |"
	echo "| ---: | ---: | ---: |"
	for b in 90% 50% 30%; do
		best=""
		bestc=""
		i=0
		while [ $i -lt "$rep" ]; do
			/usr/bin/time -o "$tf" -f "%e %U %S" "$remat" plan graphs/gpt2_small.json \
				-b $b --planner rockmate >/dev/null 2>&1 || true
			t=$(tail -1 "$tf")
			w=$(echo "$t" | awk '{print $1}')
			c=$(echo "$t" | awk '{print $2 + $3}')
			best=$(echo "$best $w" | awk '{m=$1; for(i=2;i<=NF;i++) if($i<m) m=$i; print m}')
			bestc=$(echo "$bestc $c" | awk '{m=$1; for(i=2;i<=NF;i++) if($i<m) m=$i; print m}')
			i=$((i + 1))
		done
		echo "| $b | $best | $bestc |"
	done
	;;
*)
	echo "usage: bench/rockmate.sh chain|sweep|time BUILD [...]" >&2
	exit 2
	;;
esac
