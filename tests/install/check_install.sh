#!/usr/bin/env bash
# Install into a scratch DESTDIR, build a consumer with `pkg-config remat`
# and run it: the installed headers, library and remat.pc must work.
# Usage: check_install.sh BUILD_DIR SOURCE_DIR
set -euo pipefail
build=$1 src=$2
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
DESTDIR="$tmp" cmake --install "$build" --prefix /usr/local >/dev/null
test -x "$tmp/usr/local/bin/remat"
export PKG_CONFIG_SYSROOT_DIR="$tmp" PKG_CONFIG_PATH="$tmp/usr/local/lib/pkgconfig"
${CC:-cc} "$src/tests/install/use_remat.c" -o "$tmp/use" $(pkg-config --cflags --libs remat)
out=$("$tmp/use" "$src/examples/kumar-fig1.json")
[ "$out" = "kumar-fig1 5 4" ] || { echo "consumer printed '$out'"; exit 1; }
echo "install ok"
