"""The memory PyTorch's allocator really holds (issue 28).

The executor counts the storages of the tensors it holds; an operator
allocates more than its outputs while it runs (a convolution's buffers, a
fused kernel's temporaries), and only the allocator sees that.  This
module reads the allocator:

- on CUDA, torch.cuda.max_memory_allocated() after reset_peak_memory_stats()
  at the start of the measured block, less memory_allocated() at that start;
- on the CPU, which keeps no such statistics, the profiler's memory events
  (torch.profiler with profile_memory=True: one event per allocation, +bytes,
  and per free, -bytes), added up in time order.  The CPU allocator reports a
  free only when it saw the allocation: a tensor allocated before the block
  (outside any measured block) and freed inside it is never subtracted.  The
  running sum is therefore at least what the block adds to memory, never an
  underestimate.  (The allocator remembers every allocation made while any
  block was measured: a tensor allocated in an earlier block and freed in
  this one is subtracted, as the real decrease it is.)  (The allocator also logs
  a warning for each such free; it is kept off the terminal while a block is
  measured, and everything else written to stderr meanwhile is passed on.)

Both give `peak`, the most bytes held at once above what was held at the
start, and `end`, what the block left allocated.  running_peak() is the sum
itself, kept apart so that it can be checked on sequences worked out by hand.
"""
import contextlib
import gc
import os
import sys
import tempfile

try:
    import torch
except ImportError:  # the commands say how to install it
    torch = None

# What c10's CPU allocator logs for a free it cannot size (see above).
_UNSIZED_FREE = ("Memory block of unknown size was allocated before the profiling started",
                 "Logging before InitGoogleLogging() is written to STDERR")


def running_peak(deltas):
    """(peak, end) of a sequence of allocation deltas in time order (+bytes
    allocated, -bytes freed): the largest running sum (0 when it never goes
    above the start) and the final one."""
    cur = peak = 0
    for d in deltas:
        cur += d
        if cur > peak:
            peak = cur
    return peak, cur


@contextlib.contextmanager
def quiet_unsized_frees():
    """Hide the CPU allocator's warnings about frees it cannot size while
    the block runs (written by C++ straight to file descriptor 2); every
    other line written to stderr meanwhile is written out afterwards."""
    try:
        fd = sys.stderr.fileno()
    except (AttributeError, OSError, ValueError):
        yield
        return
    sys.stderr.flush()
    saved = os.dup(fd)
    with tempfile.TemporaryFile(mode="w+b") as tmp:
        os.dup2(tmp.fileno(), fd)
        try:
            yield
        finally:
            try:
                sys.stderr.flush()
            except (OSError, ValueError):
                pass
            os.dup2(saved, fd)
            os.close(saved)
            tmp.seek(0)
            text = tmp.read().decode("utf-8", "replace")
            keep = [ln for ln in text.splitlines(True) if not any(w in ln for w in _UNSIZED_FREE)]
            if keep:
                sys.stderr.write("".join(keep))
                sys.stderr.flush()


def _profiler():
    from torch.profiler import ProfilerActivity, profile
    return profile(activities=[ProfilerActivity.CPU], profile_memory=True)


def memory_events(prof, device_type="cpu"):
    """[(time in us, +/-bytes)] of the profiler's memory events on one
    device type, in the order the profiler recorded them (time order)."""
    want = torch.device(device_type).type
    out = []
    for e in prof.profiler.kineto_results.events():
        if e.name() != "[memory]":
            continue
        dt = str(e.device_type()).split(".")[-1].lower()
        if dt == want:
            # start_us() in torch 1.13, start_ns() from 2.x
            t = e.start_ns() / 1000 if hasattr(e, "start_ns") else e.start_us()
            out.append((t, e.nbytes()))
    out.sort(key=lambda x: x[0])  # stable: ties keep the recorded order
    return out


class AllocatorMeter:
    """with AllocatorMeter(device) as m: ...  then m.peak and m.end (bytes
    above what the allocator held when the block began; see the module
    docstring for what each device's figure means)."""

    def __init__(self, device="cpu"):
        self.device = torch.device(device)
        self.peak = self.end = None
        self._prof = self._quiet = None

    def __enter__(self):
        if self.device.type == "meta":      # nothing is allocated there
            return self
        if self.device.type == "cuda":
            torch.cuda.synchronize(self.device)
            torch.cuda.reset_peak_memory_stats(self.device)
            self._base = torch.cuda.memory_allocated(self.device)
        else:
            self._quiet = quiet_unsized_frees()
            self._quiet.__enter__()
            self._prof = _profiler()
            self._prof.__enter__()
        return self

    def __exit__(self, *exc):
        if self.device.type == "meta":
            self.peak = self.end = 0
            return False
        if self.device.type == "cuda":
            torch.cuda.synchronize(self.device)
            self.peak = torch.cuda.max_memory_allocated(self.device) - self._base
            self.end = torch.cuda.memory_allocated(self.device) - self._base
            return False
        try:
            self._prof.__exit__(*exc)
        finally:
            self._quiet.__exit__(*exc)
        if exc[0] is None:
            self.peak, self.end = running_peak(d for _, d in memory_events(self._prof, "cpu"))
        self._prof = None
        return False


@contextlib.contextmanager
def gc_paused():
    """Collect, then keep Python's garbage collector off while a block is
    measured: collected inside it, a tensor an earlier measured block saw
    allocated would be subtracted (a real decrease, but not the block's
    own doing)."""
    gc.collect()
    gc.disable()
    try:
        yield
    finally:
        gc.enable()


def loop_peak(model, step, n=3, device="cpu"):
    """The allocator's peak over n iterations of the usual training loop,
    zero_grad(set_to_none=True), step(), SGD's step, above what was
    allocated before it (the parameters, the batch); .grad starts None."""
    opt = torch.optim.SGD(model.parameters(), lr=1e-3)
    for p in model.parameters():
        p.grad = None
    with gc_paused(), AllocatorMeter(device) as m:
        for _ in range(n):
            opt.zero_grad(set_to_none=True)
            step()
            opt.step()
    return m.peak


def device_of(tensors):
    """The device of the first tensor (cpu when there is none)."""
    for t in tensors:
        if isinstance(t, torch.Tensor):
            return t.device
    return torch.device("cpu")
