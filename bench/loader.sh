#!/usr/bin/env bash
# Loader benchmark: time and peak RSS of `remat info` on inference chains
# (`remat gen chain N --forward`) of growing size (1M nodes is the issue's
# target), best of 3.  Kept as a script: `remat bench` times planning only,
# not loading, and does not measure memory.  Usage: bench/loader.sh [build-dir]
set -euo pipefail
cd "$(dirname "$0")/.."
remat=${1:-build}/remat
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
printf '%-10s %-10s %-10s %-9s %-10s\n' nodes file_MB seconds rss_MB bytes/node
for n in 10000 100000 500000 1000000; do
  "$remat" gen chain "$n" --forward -o "$tmp/g.json"
  nodes=$((n + 1))
  size=$(stat -c %s "$tmp/g.json")
  best=""
  for rep in 1 2 3; do
    /usr/bin/time -f '%e %M' -o "$tmp/t" "$remat" info "$tmp/g.json" --json >/dev/null
    read -r secs kb < "$tmp/t"
    if [ -z "$best" ] || awk "BEGIN{exit !($secs < $best)}"; then best=$secs; rss=$kb; fi
  done
  printf '%-10s %-10.1f %-10s %-9.1f %-10.0f\n' "$nodes" "$(echo "$size/1048576" | bc -l)" \
    "$best" "$(echo "$rss/1024" | bc -l)" "$(echo "$rss*1024/$nodes" | bc -l)"
done
