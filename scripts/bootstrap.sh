#!/usr/bin/env bash
# Install what remat needs from Debian's packages (only what is missing),
# then configure and build into build/.  Idempotent; quick when nothing
# changed.  Usage: scripts/bootstrap.sh [--quiet] [--packages]
# (--packages: install what is missing, then stop: no configure, no build).
set -euo pipefail
cd "$(dirname "$0")/.."

quiet=0
packages_only=0
for arg in "$@"; do
  case $arg in
    --quiet) quiet=1 ;;
    --packages) packages_only=1 ;;
    *) echo "usage: scripts/bootstrap.sh [--quiet] [--packages]" >&2; exit 2 ;;
  esac
done
say() { [ "$quiet" = 1 ] || echo "bootstrap: $*" >&2; }

# man-db, groff-base: the cli/manpage test renders man/remat.1 (skipped without).
packages=(gcc make cmake pkg-config python3 libcjson-dev libigraph-dev
          libglpk-dev libcmocka-dev coinor-libcbc-dev zlib1g-dev python3-pip python3-setuptools
          man-db groff-base)
# REMAT_BOOTSTRAP_FUZZ=1 (bench/fuzz.sh): also clang and its sanitizer and
# libFuzzer runtimes, for the fuzz targets (-DREMAT_FUZZ=ON).
if [ "${REMAT_BOOTSTRAP_FUZZ:-0}" = 1 ]; then
  packages+=(clang libclang-rt-dev)
fi
missing=()
for p in "${packages[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" \
    || missing+=("$p")
done
if [ "${#missing[@]}" -gt 0 ]; then
  sudo=""
  [ "$(id -u)" -ne 0 ] && sudo="sudo"
  say "installing ${missing[*]}"
  export DEBIAN_FRONTEND=noninteractive
  if ! $sudo apt-get install -y -qq "${missing[@]}" >&2; then
    $sudo apt-get update -qq >&2
    $sudo apt-get install -y -qq "${missing[@]}" >&2
  fi
fi

[ "$packages_only" = 1 ] && exit 0

build=${REMAT_BUILD_DIR:-build}
if [ ! -f "$build/CMakeCache.txt" ]; then
  say "configuring $build/"
  cmake -S . -B "$build" -DCMAKE_BUILD_TYPE=RelWithDebInfo >&2
fi
say "building $build/"
if [ "$quiet" = 1 ]; then
  cmake --build "$build" -j "$(nproc)" >/dev/null
else
  cmake --build "$build" -j "$(nproc)" >&2
fi
