#!/usr/bin/env bash
# auto's answer time (issue 30): `remat plan G -b B` with the default
# options on the model zoo at 90/70/50%, its wall time and overhead, beside
# another binary's (BASE, e.g. a build from before the change, which spent
# its whole 10 s limit) on the same runs.  Prints a Markdown table, the
# median wall time, and how many runs cost more than BASE's.
#
#   BASE=/path/to/old/remat bench/auto_latency.sh [GRAPH...]
#
# Default graphs: graphs/*.json.  Needs build/remat (REMAT to override).
set -euo pipefail
cd "$(dirname "$0")/.."
remat=${REMAT:-build/remat}
base=${BASE:-}
graphs=("$@")
[ ${#graphs[@]} -gt 0 ] || graphs=(graphs/*.json)
walls=()
worse=0
echo "| graph | budget | wall s | overhead | stopped by | BASE wall s | BASE overhead |"
echo "| --- | ---: | ---: | ---: | --- | ---: | ---: |"
for g in "${graphs[@]}"; do
  for b in 90% 70% 50%; do
    t0=$(date +%s%N)
    out=$("$remat" plan "$g" -b "$b" -q --json || true)
    t1=$(date +%s%N)
    wall=$(( (t1 - t0) / 1000000 ))
    walls+=("$wall")
    row=$(printf '%s' "$out" | /usr/bin/python3 -c '
import json, sys
j = json.load(sys.stdin)
o = j.get("overhead")
note = j.get("note") or ""
why = "cut bound" if "within the gap of the cut bound" in note or "that of the cut bound" in note \
    else "least cost" if "least cost" in note else "time limit" if j.get("error") is None else "no schedule"
print("%s|%s" % ("-" if o is None else "%.4f%%" % (100 * o), why))')
    bw="" bo=""
    if [ -n "$base" ]; then
      t0=$(date +%s%N)
      bout=$("$base" plan "$g" -b "$b" -q --json || true)
      t1=$(date +%s%N)
      bw=$(( (t1 - t0) / 1000000 ))
      bo=$(printf '%s' "$bout" | /usr/bin/python3 -c '
import json, sys
o = json.load(sys.stdin).get("overhead")
print("-" if o is None else "%.4f%%" % (100 * o))')
      if [ "$bo" != "-" ] && [ "${row%%|*}" != "-" ] && \
         /usr/bin/python3 -c "import sys; sys.exit(0 if float('${row%%|*}'[:-1]) > float('$bo'[:-1]) + 1e-9 else 1)"; then
        worse=$((worse + 1))
      fi
    fi
    printf '| %s | %s | %d.%02d | %s | %s | %s | %s |\n' "$(basename "$g" .json)" "$b" \
      $((wall / 1000)) $((wall % 1000 / 10)) "${row%%|*}" "${row##*|}" \
      "${bw:+$((bw / 1000)).$(printf '%02d' $((bw % 1000 / 10)))}" "$bo"
  done
done
median=$(printf '%s\n' "${walls[@]}" | sort -g | awk '{a[NR]=$1} END {m = (NR%2) ? a[(NR+1)/2] : (a[NR/2]+a[NR/2+1])/2; printf "%.2f", m / 1000}')
echo
echo "median wall: ${median} s over ${#walls[@]} runs${base:+; costlier than BASE: $worse}"
