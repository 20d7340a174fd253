#!/usr/bin/env bash
# Set up, build and pass every test: the normal build (build/) and the
# same suite under AddressSanitizer + UndefinedBehaviorSanitizer
# (build-asan/).  Exit non-zero on any failure.
set -euo pipefail
cd "$(dirname "$0")/.."

scripts/bootstrap.sh
jobs=$(nproc)
echo "== tests (build/)" >&2
ctest --test-dir build --output-on-failure -j "$jobs"

echo "== tests under ASan+UBSan (build-asan/)" >&2
if [ ! -f build-asan/CMakeCache.txt ]; then
  cmake -S . -B build-asan -DCMAKE_BUILD_TYPE=Debug -DREMAT_SANITIZE=ON >&2
fi
cmake --build build-asan -j "$jobs" >/dev/null
ASAN_OPTIONS=detect_leaks=1:abort_on_error=1 \
UBSAN_OPTIONS=print_stacktrace=1:halt_on_error=1 \
  ctest --test-dir build-asan --output-on-failure -j "$jobs"
echo "test.sh: all tests passed" >&2
