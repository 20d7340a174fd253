#!/usr/bin/env bash
# Install under a scratch prefix and build the documented library example with
# `pkg-config remat` only (no source tree on the include path): the
# installed headers, library and remat.pc must work, and remat.pc must
# follow the prefix given at install time.  Then (issue 35) remat_torch:
# installed in the prefix it finds the installed binary first; `pip
# install --target` from the source's Python parts, offline; and the .deb
# `cpack -G DEB` makes from this build holds every piece, the man page and
# the bash completion included.
# Usage: check_install.sh BUILD_DIR SOURCE_DIR
set -euo pipefail
build=$(cd "$1" && pwd) src=$(cd "$2" && pwd)
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
prefix="$tmp/prefix"
cmake --install "$build" --prefix "$prefix" >/dev/null
test -x "$prefix/bin/remat"
# The man page and the bash completion the build wrote (issue 34).
[ -f "$prefix/share/man/man1/remat.1" ] || { echo "share/man/man1/remat.1 not installed"; exit 1; }
comp="$prefix/share/bash-completion/completions/remat"
[ -f "$comp" ] || { echo "share/bash-completion/completions/remat not installed"; exit 1; }
cmp -s "$comp" <("$prefix/bin/remat" completion bash) ||
  { echo "the installed completion is not what 'remat completion bash' prints"; exit 1; }
pc=$(find "$prefix" -name remat.pc)
export PKG_CONFIG_PATH=$(dirname "$pc")
# The .pc resolves to the install prefix, not to CMAKE_INSTALL_PREFIX.
incdir=$(pkg-config --variable=includedir remat)
[ -f "$incdir/remat/remat.h" ] || { echo "remat.pc includedir '$incdir' has no remat/remat.h"; exit 1; }
[ -f "$incdir/remat/version.h" ] || { echo "version.h not installed"; exit 1; }
# The documented example, verbatim: the C block after the 'library example'
# marker, in README.md or docs/library.md (where the README's guide points).
doc=$(grep -l -- '<!-- library example -->' "$src/README.md" "$src/docs/library.md" \
      2>/dev/null | head -1 || true)
[ -n "$doc" ] || { echo "no library example marker in README.md or docs/library.md"; exit 1; }
awk '/<!-- library example -->/ {on=1; next} on && /^```c$/ {body=1; next}
     body && /^```$/ {exit} body {print}' "$doc" > "$tmp/plan.c"
[ -s "$tmp/plan.c" ] || { echo "no library example found in $doc"; exit 1; }
${CC:-cc} -std=c11 -Wall -Wextra -Werror "$tmp/plan.c" -o "$tmp/plan" \
  $(pkg-config --cflags --libs remat)
"$tmp/plan" "$src/examples/kumar-fig1.json" 3 "$tmp/out.json" > "$tmp/said"
[ "$(cat "$tmp/said")" = "kumar-fig1: peak 3 of 3 bytes, overhead 20.00%" ] ||
  { echo "example printed '$(cat "$tmp/said")'"; exit 1; }
"$prefix/bin/remat" simulate "$src/examples/kumar-fig1.json" "$tmp/out.json" --budget 3 >/dev/null 2>&1 ||
  { echo "the example's schedule does not simulate within 3 bytes"; exit 1; }
# remat_torch in the prefix's module directory, finding the installed binary
# first (REMAT unset, run from outside the clone).
pydir="$prefix/lib/python3/dist-packages"
[ -f "$pydir/remat_torch/api.py" ] && [ -f "$pydir/remat_torch/_installed.py" ] ||
  { echo "remat_torch is not installed under $pydir"; exit 1; }
found=$(cd "$tmp" && env -u REMAT PYTHONPATH="$pydir" /usr/bin/python3 -c \
  'import remat_torch.api as a; print(a.find_remat())')
[ "$found" = "$prefix/bin/remat" ] ||
  { echo "the installed remat_torch finds '$found', not $prefix/bin/remat"; exit 1; }
(cd "$tmp" && "$prefix/bin/remat" plan "$src/examples/train-chain4.json" -b 80% -q >/dev/null) ||
  { echo "the installed remat cannot plan an example"; exit 1; }
# pip, offline, from a copy of the source tree's Python parts (an in-tree
# build would write into build/, the CMake build folder).
mkdir "$tmp/pysrc"
cp -r "$src/pyproject.toml" "$src/README.md" "$src/LICENSE" "$src/remat_torch" "$tmp/pysrc/"
/usr/bin/python3 -m pip install --quiet --no-build-isolation --no-index --no-deps \
  --target "$tmp/pip" "$tmp/pysrc" >/dev/null 2>"$tmp/pip.err" ||
  { echo "pip install failed: $(tail -3 "$tmp/pip.err")"; exit 1; }
found=$(cd "$tmp" && REMAT="$prefix/bin/remat" PYTHONPATH="$tmp/pip" /usr/bin/python3 -c \
  'import remat_torch, remat_torch.api as a; print(remat_torch.__file__, a.find_remat())')
case "$found" in
  "$tmp/pip/remat_torch/__init__.py $prefix/bin/remat") ;;
  *) echo "pip's remat_torch: '$found'"; exit 1 ;;
esac
missing=$(cd "$tmp" && env -u REMAT PATH=/usr/bin:/bin PYTHONPATH="$tmp/pip" /usr/bin/python3 -c \
  'import remat_torch.api as a
try:
    print("found", a.find_remat())
except a.PlanError as e:
    print(e)')
case "$missing" in
  found\ /usr/bin/remat) ;;  # a remat installed system-wide
  *"cannot find the remat binary"*"REMAT"*) ;;
  *) echo "without a binary, pip's remat_torch says: '$missing'"; exit 1 ;;
esac
# The Debian package (cpack on this build): its file list holds the binary,
# the library, the headers, the .pc and remat_torch.
if command -v dpkg-deb >/dev/null; then
  (cd "$tmp" && cpack -G DEB --config "$build/CPackConfig.cmake" -B "$tmp/deb" >/dev/null)
  deb=$(ls "$tmp"/deb/remat_*.deb)
  list=$(dpkg-deb -c "$deb" | awk '{print $6}')
  for want in ./usr/bin/remat ./usr/include/remat/remat.h ./usr/include/remat/version.h \
              ./usr/share/man/man1/remat.1 ./usr/share/bash-completion/completions/remat \
              /libremat.a /pkgconfig/remat.pc \
              ./usr/lib/python3/dist-packages/remat_torch/api.py \
              ./usr/lib/python3/dist-packages/remat_torch/_installed.py; do
    printf '%s\n' "$list" | grep -q -- "$want" || { echo "the .deb lacks $want"; exit 1; }
  done
  dpkg-deb -f "$deb" Depends | grep -q "coinor-libcbc3" || { echo "the .deb's Depends"; exit 1; }
fi
echo "install ok"
