#!/usr/bin/env bash
# Install under a scratch prefix and build README's library example with
# `pkg-config remat` only (no source tree on the include path): the
# installed headers, library and remat.pc must work, and remat.pc must
# follow the prefix given at install time.
# Usage: check_install.sh BUILD_DIR SOURCE_DIR
set -euo pipefail
build=$1 src=$2
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
prefix="$tmp/prefix"
cmake --install "$build" --prefix "$prefix" >/dev/null
test -x "$prefix/bin/remat"
pc=$(find "$prefix" -name remat.pc)
export PKG_CONFIG_PATH=$(dirname "$pc")
# The .pc resolves to the install prefix, not to CMAKE_INSTALL_PREFIX.
incdir=$(pkg-config --variable=includedir remat)
[ -f "$incdir/remat/remat.h" ] || { echo "remat.pc includedir '$incdir' has no remat/remat.h"; exit 1; }
[ -f "$incdir/remat/version.h" ] || { echo "version.h not installed"; exit 1; }
# README's example, verbatim: the C block after the 'library example' marker.
awk '/<!-- library example -->/ {on=1; next} on && /^```c$/ {body=1; next}
     body && /^```$/ {exit} body {print}' "$src/README.md" > "$tmp/plan.c"
[ -s "$tmp/plan.c" ] || { echo "no library example found in README.md"; exit 1; }
${CC:-cc} -std=c11 -Wall -Wextra -Werror "$tmp/plan.c" -o "$tmp/plan" \
  $(pkg-config --cflags --libs remat)
"$tmp/plan" "$src/examples/kumar-fig1.json" 3 "$tmp/out.json" > "$tmp/said"
[ "$(cat "$tmp/said")" = "kumar-fig1: peak 3 of 3 bytes, overhead 20.00%" ] ||
  { echo "example printed '$(cat "$tmp/said")'"; exit 1; }
"$prefix/bin/remat" simulate "$src/examples/kumar-fig1.json" "$tmp/out.json" --budget 3 >/dev/null 2>&1 ||
  { echo "the example's schedule does not simulate within 3 bytes"; exit 1; }
echo "install ok"
