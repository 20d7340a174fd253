#!/usr/bin/env bash
# Step time of remat_torch.wrap against eager PyTorch and
# torch.utils.checkpoint (issue 29), interleaved; see bench/torch_overhead.py.
# Needs build/remat and Debian's python3-torch (scripts/bootstrap.sh,
# scripts/bootstrap-torch.sh).
#
#   bench/torch_overhead.sh [--models a,b] [--budgets 100%,70%,50%] [--rounds N]
#                           [--device cuda] [--markdown FILE]
#
# Recorded: bench/data/torch-overhead.md (bench/torch_overhead.sh --markdown
# bench/data/torch-overhead.md), summarised in bench/results/torch.md and
# bench/RESULTS.md.
set -euo pipefail
cd "$(dirname "$0")/.."
export REMAT=${REMAT:-build/remat}
exec /usr/bin/python3 bench/torch_overhead.py "$@"
