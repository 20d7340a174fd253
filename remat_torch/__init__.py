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
import contextlib
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


@contextlib.contextmanager
def replacing(path):
    """A binary file to write path's new contents into, as remat writes its
    own outputs (FORMATS.md, Files): a symbolic link is written through (its
    target replaced, the link kept); a FIFO or character device (/dev/null)
    is written in place; a directory or other file that is not regular is
    refused (OSError); a regular file is replaced atomically when the block
    ends without an exception (a temporary file beside it, synced, renamed
    over it) and keeps its permission bits; on an exception nothing changes."""
    import errno
    import os
    import stat
    real = os.path.realpath(path)
    try:
        st = os.stat(real)
    except FileNotFoundError:
        st = None
    if st is not None and not stat.S_ISREG(st.st_mode):
        if stat.S_ISFIFO(st.st_mode) or stat.S_ISCHR(st.st_mode):
            with open(real, "wb") as f:
                yield f
            return
        if stat.S_ISDIR(st.st_mode):
            raise IsADirectoryError(errno.EISDIR, "Is a directory", path)
        raise OSError(errno.EINVAL, "not a regular file", path)
    tmp = os.path.join(os.path.dirname(real),
                       ".%s.tmp.%d" % (os.path.basename(real), os.getpid()))
    with _killed_as_exception():
        try:
            fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o666)
            with os.fdopen(fd, "wb") as f:
                if st is not None:
                    os.fchmod(f.fileno(), stat.S_IMODE(st.st_mode))
                yield f
                f.flush()
                os.fsync(f.fileno())
            os.replace(tmp, real)
        finally:
            if os.path.lexists(tmp):
                os.unlink(tmp)


class _Killed(BaseException):
    pass


@contextlib.contextmanager
def _killed_as_exception():
    """SIGTERM and SIGHUP raise inside the block (in the main thread), so
    that a write's temporary file is removed (SIGINT does already); the
    process then dies of the signal as it would have."""
    import os
    import signal
    import threading
    saved = {}
    if threading.current_thread() is threading.main_thread():
        def die(signum, frame):
            raise _Killed(signum)
        for sig in (signal.SIGTERM, signal.SIGHUP):
            try:
                saved[sig] = signal.signal(sig, die)
            except (ValueError, OSError):
                pass
    try:
        yield
    except _Killed as k:
        signal.signal(k.args[0], signal.SIG_DFL)
        os.kill(os.getpid(), k.args[0])
        raise
    finally:
        for sig, h in saved.items():
            signal.signal(sig, h)


def write_text(text, path):
    """Write text to path (replacing()), gzip-compressed where path ends in
    .gz, or to standard output for "-": how every graph file is written."""
    if path == "-":
        sys.stdout.write(text)
        sys.stdout.flush()
        return
    data = text.encode()
    if path.endswith(".gz"):
        import gzip
        data = gzip.compress(data, mtime=0)
    with replacing(path) as f:
        f.write(data)


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
