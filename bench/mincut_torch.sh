#!/usr/bin/env bash
# `remat plan -p mincut --natural` beside functorch 1.13's own
# min_cut_rematerialization_partition on resnet18, mobilenet_v2 and a
# two-block Transformer encoder (issue 37); see bench/mincut_torch.py.
# Needs build/remat and Debian's python3-torch and python3-networkx
# (scripts/bootstrap.sh, scripts/bootstrap-torch.sh).
#
#   bench/mincut_torch.sh [--markdown FILE] [MODEL,BATCH,SHAPE ...]
#
# Recorded: bench/data/mincut-torch.md, summarised in
# bench/results/planners-mincut.md.
set -euo pipefail
cd "$(dirname "$0")/.."
exec /usr/bin/python3 bench/mincut_torch.py --remat "${REMAT:-build/remat}" "$@"
