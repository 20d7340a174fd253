"""PyTorch tools for remat, run from the repository root:

    /usr/bin/python3 -m remat_torch export MODEL [options]   # a model's training graph

`export` (remat_torch/export.py) runs one training step of a model on the
CPU and writes its graph as a remat-graph for `remat plan`.  Every command
needs Debian's python3-torch and python3-torchvision
(scripts/bootstrap-torch.sh); without them each prints one line saying so
and exits 1.  Importing the package does not import torch.
"""
import sys


def no_torch_message():
    """The one line every command prints when torch cannot be imported."""
    return ("remat_torch: %s cannot import torch; install Debian's python3-torch and "
            "python3-torchvision with scripts/bootstrap-torch.sh, then use /usr/bin/python3"
            % sys.executable)
