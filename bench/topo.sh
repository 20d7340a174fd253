#!/usr/bin/env bash
# The loader's stable Kahn sort against igraph_topological_sorting() on
# the zoo and a 100k-node layered graph (bench/bench_topo.c); the figures
# in bench/results/loader.md, "Topological sort: ours or igraph's".
#   bench/topo.sh [BUILD_DIR]
set -euo pipefail
cd "$(dirname "$0")/.."
b=${1:-build}
cmake --build "$b" --target bench_topo >/dev/null
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
"$b/remat" gen layered 100000 -o "$tmp/layered-100k.json"
for f in graphs/resnet101.json graphs/gpt2_small.json "$tmp/layered-100k.json"; do
  "$b/bench/bench_topo" "$f" 5
done
