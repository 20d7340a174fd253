#!/usr/bin/env bash
# Plans on the real allocator against eager PyTorch (issue 28): the zoo's
# torch models and EfficientNet-B0 at 100%, 70%, 50% and the lowest budget;
# see bench/torch_real.py for what each column is.  Needs build/remat and
# Debian's python3-torch (scripts/bootstrap.sh, scripts/bootstrap-torch.sh).
#
#   bench/torch_real.sh [--models a,b] [--budgets ...] [--reps N] [--markdown FILE]
#
# Recorded: bench/data/torch-real.md (bench/torch_real.sh --markdown
# bench/data/torch-real.md), summarised in bench/results/torch.md
# ("Training on the allocator") and bench/RESULTS.md.
set -euo pipefail
cd "$(dirname "$0")/.."
export REMAT=${REMAT:-build/remat}
exec /usr/bin/python3 bench/torch_real.py "$@"
