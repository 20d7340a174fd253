#!/usr/bin/env bash
# Build the Debian package: a Release build in build-deb/, then
# `cpack -G DEB` there (CMakeLists.txt's CPack settings: prefix /usr,
# Depends on Debian's libc6, libcjson1, libigraph3, libglpk40,
# coinor-libcbc3, zlib1g and python3; Recommends python3-torch and
# python3-torchvision).  Prints the .deb's path.
#   scripts/package.sh            then: sudo apt-get install ./remat_*.deb
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/bootstrap.sh --quiet
cmake -S . -B build-deb -DCMAKE_BUILD_TYPE=Release -DREMAT_TESTS=OFF -DREMAT_BENCH=OFF \
      -DCMAKE_INSTALL_PREFIX=/usr >/dev/null
cmake --build build-deb -j "$(nproc)" >/dev/null
(cd build-deb && cpack -G DEB >/dev/null)
ls -1 "$PWD"/build-deb/remat_*.deb
