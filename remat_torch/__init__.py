"""PyTorch tools for remat (installed, or run from the repository root):

    /usr/bin/python3 -m remat_torch export MODEL [options]   # a model's training graph
    /usr/bin/python3 -m remat_torch run GRAPH SCHEDULE       # execute a schedule
    /usr/bin/python3 -m remat_torch check MODEL --budget B   # plan, execute, compare

`export` (remat_torch/export.py) runs one training step of a model on the
CPU and writes its graph as a remat-graph for `remat plan`; with --joint,
the joint forward+backward graph of ATen operators (remat_torch/joint.py),
which `run` executes under any schedule (remat_torch/executor.py) and
`check` compares with PyTorch.  In Python, remat_torch.plan(model, inputs,
loss_fn, budget=..., planner=...) returns a training step that runs a plan
(remat_torch/api.py); remat_torch.wrap(model, example_inputs, budget=...)
returns a module used like the model, whose forward and backward run a
plan (remat_torch/wrapped.py).  Every command needs Debian's python3-torch and
python3-torchvision (scripts/bootstrap-torch.sh); without them each prints
one line saying so and exits 1.  Importing the package does not import
torch.
"""
import sys


def plan(*args, **kwargs):
    """remat_torch.api.plan: a training step of `model` that runs a remat
    schedule within a budget (see remat_torch/api.py)."""
    from remat_torch import api
    return api.plan(*args, **kwargs)


def wrap(*args, **kwargs):
    """remat_torch.wrapped.wrap: an nn.Module that runs `model` with a remat
    plan; out = m(*inputs) as the model, backward as eager (see
    remat_torch/wrapped.py)."""
    from remat_torch import wrapped as W
    return W.wrap(*args, **kwargs)


def no_torch_message():
    """The one line every command prints when torch cannot be imported."""
    return ("remat_torch: %s cannot import torch; install Debian's python3-torch and "
            "python3-torchvision with scripts/bootstrap-torch.sh, then use /usr/bin/python3"
            % sys.executable)


def import_torch():
    """torch, or None after printing no_torch_message() on stderr."""
    try:
        import torch
    except ImportError:
        print(no_torch_message(), file=sys.stderr)
        return None
    return torch


def command_parser(doc, prog):
    """The parser of a subcommand whose module docstring is its help: the
    first paragraph the description, the third on the epilog."""
    import argparse
    return argparse.ArgumentParser(prog=prog, description=doc.split("\n\n")[0],
                                   epilog=doc.split("\n\n", 2)[2],
                                   formatter_class=argparse.RawDescriptionHelpFormatter)


def write_text(text, path):
    """Write text to path atomically (a temporary file beside it, synced,
    then renamed over it), gzip-compressed where path ends in .gz, or to
    standard output for "-": how every graph file is written."""
    import os
    if path == "-":
        sys.stdout.write(text)
        return
    data = text.encode()
    if path.endswith(".gz"):
        import gzip
        data = gzip.compress(data, mtime=0)
    tmp = "%s.tmp.%d" % (path, os.getpid())
    try:
        with open(tmp, "wb") as f:
            f.write(data)
            f.flush()
            os.fsync(f.fileno())
        os.replace(tmp, path)
    finally:
        if os.path.exists(tmp):
            os.unlink(tmp)


def read_text(path):
    """A file's text, gunzipped when it is gzip (as remat reads .json.gz)."""
    with open(path, "rb") as f:
        data = f.read()
    if data[:2] == b"\x1f\x8b":
        import gzip
        data = gzip.decompress(data)
    return data.decode()


def storage_key(t):
    """(storage id, nbytes) of a tensor's storage, None when it holds no
    bytes: how both exporters tell tensors that share memory apart.  The id
    is the storage object's address (_cdata), not its data pointer: tensors
    on the meta device (an export that allocates nothing) all have data
    pointer 0, but each storage is an object of its own."""
    s = _storage_of(t)
    n = s.nbytes()
    if n == 0:
        return None
    return s._cdata, n


def _storage_of(t):
    """A tensor's storage: untyped_storage() where torch has it (storage()
    is deprecated from torch 2.0 and warns on every call)."""
    return t.untyped_storage() if hasattr(t, "untyped_storage") else t.storage()


def storage_nbytes(t):
    """The bytes of a tensor's storage."""
    return _storage_of(t).nbytes()
