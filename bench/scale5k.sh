#!/usr/bin/env bash
# Issue 11's scaling target: `auto --time-limit 10` on graphs of about
# 5,000 nodes returns a plan at least as good as `twremat`'s, within the
# limit.  Runs both on three graphs at several budgets and prints one
# Markdown row per run: overhead, the process's wall time (loading
# included, from /usr/bin/time), and what auto chose.
#
# Usage: bench/scale5k.sh [build-dir] [time-limit]
#
# Graphs: `remat gen layered 5000` (Moccasin's generator, 5,000 nodes,
# 57,438 edges), `remat gen chain 2500` (a 5,002-node training chain) and
# graphs/lstm64.json (6,876 nodes) when present.  Timings on a shared
# machine are noisy; the overheads are deterministic except where a run
# is cut by its limit.
set -euo pipefail
cd "$(dirname "$0")/.."
build=${1:-build}
limit=${2:-10}
remat=$build/remat
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

"$remat" gen layered 5000 -o "$tmp/layered-5000.json"
"$remat" gen chain 2500 -o "$tmp/chain-2500.json"
graphs=("$tmp/layered-5000.json:99% 97% 95%" "$tmp/chain-2500.json:90% 70% 50% 30%")
if [ -f graphs/lstm64.json ]; then
  graphs+=("graphs/lstm64.json:90% 70% 50% 40%")
fi

cell() { # planner graph budget -> "overhead | wall | chosen"
  local out rc wall
  set +e
  out=$(/usr/bin/time -f '%e' -o "$tmp/time" "$remat" plan "$2" -b "$3" -p "$1" \
        -t "$limit" -q --json -o /dev/null 2>/dev/null)
  rc=$?
  set -e
  wall=$(tail -1 "$tmp/time")
  /usr/bin/python3 - "$out" "$rc" "$wall" <<'EOF'
import json, sys
out, rc, wall = sys.argv[1], int(sys.argv[2]), sys.argv[3]
d = json.loads(out) if out.strip() else {}
ov = d.get("overhead")
cell = "none (exit %d)" % rc if ov is None else "+%.2f%%" % (100 * ov)
print("%s | %s s | %s" % (cell, wall, d.get("chosen") or "-"))
EOF
}

echo "| graph | budget | twremat | wall | auto -t $limit | wall | auto chose |"
echo "| --- | ---: | ---: | ---: | ---: | ---: | --- |"
for spec in "${graphs[@]}"; do
  g=${spec%%:*}
  for b in ${spec#*:}; do
    tw=$(cell twremat "$g" "$b")
    au=$(cell auto "$g" "$b")
    echo "| $(basename "$g" .json) | $b | ${tw% | *} | ${au} |"
  done
done
