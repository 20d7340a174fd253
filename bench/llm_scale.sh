#!/usr/bin/env bash
# Language models at their published sizes, traced without memory (issue
# 31): `remat_torch export MODEL --fake` (the meta device: no activation
# allocated, no kernel run), then `remat plan` at 50% and for an 80 GiB
# device.  Prints a Markdown table: export wall time and peak resident
# memory (GNU time), nodes, edges, no-remat peak, parameter bytes; plan wall
# time, peak, overhead, lower bound and gap.
#
#   bench/llm_scale.sh [OUTDIR]       (graphs kept there; default a temporary folder)
#
# Needs build/remat (REMAT to override), Debian's python3-torch and GNU time
# (/usr/bin/time, package "time").  Recorded in bench/results/torch.md.
set -euo pipefail
cd "$(dirname "$0")/.."
remat=${REMAT:-build/remat}
out=${1:-$(mktemp -d)}
mkdir -p "$out"
models=("llama-7b --batch 1 --input-shape 2048 --dtype bf16"
        "gpt2-xl --batch 8 --input-shape 1024 --dtype fp32")
echo "| model | export s | export max RSS | nodes | edges | no-remat peak | parameters | plan | plan s | peak | overhead | lower bound | gap |"
echo "| --- | ---: | ---: | ---: | ---: | ---: | ---: | --- | ---: | ---: | ---: | ---: | ---: |"
for spec in "${models[@]}"; do
	read -r name rest <<<"$spec"
	g="$out/$name.json.gz"
	# shellcheck disable=SC2086
	/usr/bin/time -f "%e %M" -o "$out/$name.time" \
		/usr/bin/python3 -m remat_torch export "$name" $rest --fake -q -o "$g" 2>"$out/$name.log"
	read -r ex_s ex_kb <"$out/$name.time"
	info=$("$remat" info "$g" --json)
	for plan in "-b 50%" "--device-memory 80GiB"; do
		t0=$(date +%s.%N)
		# shellcheck disable=SC2086
		res=$("$remat" plan "$g" $plan --json -q)
		t1=$(date +%s.%N)
		/usr/bin/python3 - "$name $rest" "$ex_s" "$ex_kb" "$info" "$plan" "$t0" "$t1" "$res" <<'PY'
import json, sys
name, ex_s, ex_kb, info, plan, t0, t1, res = sys.argv[1:]
info, res = json.loads(info), json.loads(res)
gib = lambda b: "%.2f GiB" % (b / 2 ** 30)
print("| %s | %.1f | %.2f GiB | %d | %d | %s | %s | %s | %.1f | %s | %+.2f%% | %s | %.2f%% |" % (
    name, float(ex_s), int(ex_kb) / 2 ** 20, info["nodes"], info["edges"],
    gib(info["no_remat_peak"]), gib(info.get("fixed_bytes", 0)), plan.replace("-b ", ""),
    float(t1) - float(t0), gib(res["peak_mem"]), 100 * res["overhead"],
    "%.4g T" % (res["lower_bound"] / 1e12) if res.get("lower_bound") else "-",
    100 * (res.get("gap") or 0)))
PY
	done
done
