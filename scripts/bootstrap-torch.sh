#!/usr/bin/env bash
# Install what remat_torch (python3 -m remat_torch) needs: Debian's PyTorch and
# torchvision (python3-torch 1.13.1, python3-torchvision 0.14.1), and networkx,
# which functorch's own partitioner needs (tests/torch/test_mincut_torch.py).  Kept apart
# from scripts/bootstrap.sh because it is large (~1 GB) and only remat_torch
# and its tests use it.  Idempotent.  Usage: scripts/bootstrap-torch.sh [--quiet]
set -euo pipefail

quiet=0
[ "${1:-}" = "--quiet" ] && quiet=1
say() { [ "$quiet" = 1 ] || echo "bootstrap-torch: $*" >&2; }

packages=(python3 python3-torch python3-torchvision python3-networkx)
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
  if ! $sudo apt-get install -y -qq --no-install-recommends "${missing[@]}" >&2; then
    $sudo apt-get update -qq >&2
    $sudo apt-get install -y -qq --no-install-recommends "${missing[@]}" >&2
  fi
fi
/usr/bin/python3 -c 'import torch, torchvision, networkx' \
  || { echo "bootstrap-torch: /usr/bin/python3 cannot import torch" >&2; exit 1; }
say "torch $(/usr/bin/python3 -c 'import torch; print(torch.__version__)') ready"
