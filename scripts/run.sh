#!/usr/bin/env bash
# Set up and build (scripts/bootstrap.sh), then run remat with the given
# arguments:  scripts/run.sh plan examples/kumar-fig1.json --budget 3
set -euo pipefail
top="$(cd "$(dirname "$0")/.." && pwd)"
"$top/scripts/bootstrap.sh" --quiet
exec "$top/${REMAT_BUILD_DIR:-build}/remat" "$@"
