#!/usr/bin/python3
"""Step time of a wrapped module against eager PyTorch (issue 29).

    bench/torch_overhead.py [--models a,b] [--budgets 100%,70%,50%] [--rounds N]
                            [--threads T] [--device cpu|cuda] [--markdown FILE]

For each model, the usual step

    opt.zero_grad(set_to_none=True); loss_fn(m(x), y).backward(); opt.step()   (SGD)

is timed for eager PyTorch, for torch.utils.checkpoint around each block
(the model's own notion of a block: its residual blocks, transformer
layers or inverted residual blocks), and for remat_torch.wrap(model, budget=B) at each
budget, with the compiled schedule and with the interpreting executor.
Interleaved: every round runs each variant once, in a rotated order, so
that drifts of the machine fall on all of them alike; reported is the
median step time over the rounds and its ratio to eager's, and the
allocator's peak over three iterations of the loop (remat_torch/meter.py:
the profiler on the CPU, max_memory_allocated on CUDA) over eager's.  Each variant
trains its own copy of the same weights.  The per-node overhead is
(median(wrap at 100%) - median(eager)) / nodes of the plan's graph.

Models: resmlp (a residual MLP, 8 blocks of width 64, batch 256),
tiny-gpt (remat_torch's 2-layer GPT-style decoder, d_model 64, batch 16,
sequence 32), mobilenet_v2 (torchvision, batch 8, 64x64; dropout in its
classifier, so each variant draws its own masks).
"""
import argparse
import copy
import os
import platform
import statistics
import sys
import time

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, ROOT)

import torch  # noqa: E402
import torch.nn as nn  # noqa: E402
from torch.utils.checkpoint import checkpoint  # noqa: E402

import remat_torch  # noqa: E402
from remat_torch import api, export as EX  # noqa: E402
from remat_torch.meter import loop_peak  # noqa: E402


class ResBlock(nn.Module):
    def __init__(self, d):
        super().__init__()
        self.fc1, self.fc2 = nn.Linear(d, d), nn.Linear(d, d)

    def forward(self, x):
        return x + self.fc2(torch.relu(self.fc1(x)))


class ResMLP(nn.Module):
    def __init__(self, d=64, blocks=8, classes=10, ckpt=False):
        super().__init__()
        self.inp = nn.Linear(d, d)
        self.blocks = nn.ModuleList(ResBlock(d) for _ in range(blocks))
        self.head = nn.Linear(d, classes)
        self.ckpt = ckpt

    def forward(self, x):
        h = self.inp(x)
        for b in self.blocks:
            h = checkpoint(b, h, use_reentrant=False) if self.ckpt else b(h)
        return self.head(h)


def build(name, device):
    g = torch.Generator().manual_seed(0)
    torch.manual_seed(0)
    if name == "resmlp":
        model = ResMLP()
        x = torch.randn(256, 64, generator=g)
        y = torch.randint(0, 10, (256,), generator=g)
        lf = nn.functional.cross_entropy

        def ckpt(m):
            m = copy.deepcopy(m)
            m.ckpt = True
            return m
    elif name == "tiny-gpt":
        model, inputs, _, _ = EX.build("tiny-gpt", 16, [32])
        x = inputs[0]
        y = torch.randint(0, 256, x.shape, generator=g)

        def lf(out, t):
            return nn.functional.cross_entropy(out.reshape(-1, 256), t.reshape(-1))

        def ckpt(m):
            m = copy.deepcopy(m)
            blocks = [c for c in m.modules() if isinstance(c, nn.ModuleList)][0]
            for i, b in enumerate(blocks):
                blocks[i] = _Checkpointed(b)
            return m
    elif name == "mobilenet_v2":
        import torchvision
        model = torchvision.models.mobilenet_v2(num_classes=10)
        x = torch.randn(8, 3, 64, 64, generator=g)
        y = torch.randint(0, 10, (8,), generator=g)
        lf = nn.functional.cross_entropy

        def ckpt(m):
            m = copy.deepcopy(m)
            for i in range(1, len(m.features) - 1):     # its inverted residual blocks
                m.features[i] = _Checkpointed(m.features[i])
            return m
    else:
        raise SystemExit("torch_overhead.py: unknown model %s (resmlp, tiny-gpt, mobilenet_v2)" % name)
    return model.to(device), x.to(device), y.to(device), lf, ckpt


class _Checkpointed(nn.Module):
    def __init__(self, inner):
        super().__init__()
        self.inner = inner

    def forward(self, *a, **kw):
        return checkpoint(lambda *b: self.inner(*b, **kw), *a, use_reentrant=False)


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--models", default="resmlp,tiny-gpt,mobilenet_v2")
    ap.add_argument("--budgets", default="100%,70%,50%")
    ap.add_argument("--rounds", type=int, default=30)
    ap.add_argument("--threads", type=int, default=0)
    ap.add_argument("--device", default="cpu")
    ap.add_argument("--markdown")
    a = ap.parse_args()
    if a.threads:
        torch.set_num_threads(a.threads)
    dev = torch.device(a.device)
    sync = (lambda: torch.cuda.synchronize(dev)) if dev.type == "cuda" else (lambda: None)
    rows = []
    for name in a.models.split(","):
        model, x, y, lf, ckpt = build(name, dev)
        variants = [("eager", copy.deepcopy(model))]
        variants.append(("checkpoint per block", ckpt(model)))
        nodes = None
        for b in a.budgets.split(","):
            for interp in (False, True):
                m = copy.deepcopy(model)
                try:
                    w = remat_torch.wrap(m, (x,), budget=b, cache=False, notice=False,
                                         interpret=interp)
                except api.PlanError as e:
                    rows.append((name, "wrap %s" % b, None, None, None, str(e).split(";")[0]))
                    break
                pl = next(iter(w.plans.values()))
                nodes = nodes or sum(1 for n in pl.J.nodes if n.kind != "input")
                note = "+%.2f%% compute, %d recomputed" % (
                    100 * float(pl.summary.get("overhead") or 0), pl.plan.recomputes)
                variants.append(("wrap %s%s" % (b, ", interpreted" if interp else ""), w, note))
        times = {v[0]: [] for v in variants}
        opts = {v[0]: torch.optim.SGD(v[1].parameters(), lr=1e-3) for v in variants}
        for r in range(a.rounds + 2):
            k = r % len(variants)
            for v in variants[k:] + variants[:k]:
                label, m = v[0], v[1]
                opt = opts[label]
                sync()
                t0 = time.perf_counter()
                opt.zero_grad(set_to_none=True)
                lf(m(x), y).backward()
                opt.step()
                sync()
                if r >= 2:
                    times[label].append(time.perf_counter() - t0)
        base = statistics.median(times["eager"])
        peaks = {}
        for v in variants:
            label, m = v[0], v[1]
            torch.manual_seed(0)
            peaks[label] = loop_peak(m, lambda: lf(m(x), y).backward(), device=dev)
        for v in variants:
            med = statistics.median(times[v[0]])
            rows.append((name, v[0], med, med / base, peaks[v[0]] / peaks["eager"],
                         v[2] if len(v) > 2 else ""))
            if v[0] == "wrap 100%":
                rows.append((name, "per-node overhead at 100%", (med - base) / nodes, None,
                             None, "%d nodes" % nodes))
        print("\n".join(_fmt(r) for r in rows if r[0] == name), flush=True)
    head = ("# remat_torch.wrap step time against eager (bench/torch_overhead.py)\n\n"
            "%s, %s, torch %s, %d threads, %d rounds interleaved, %s.\n\n"
            "| model | variant | median step | / eager | loop peak / eager | note |\n"
            "| --- | --- | --- | --- | --- | --- |\n"
            % (time.strftime("%Y-%m-%d"), platform.processor() or platform.machine(),
               torch.__version__, torch.get_num_threads(), a.rounds, a.device))
    text = head + "".join(_fmt(r, md=True) + "\n" for r in rows)
    if a.markdown:
        with open(a.markdown, "w") as f:
            f.write(text)


def _fmt(r, md=False):
    name, label, med, ratio, mem, note = r
    t = "—" if med is None else ("%.1f us" % (med * 1e6) if med < 1e-3 else
                                 "%.2f ms" % (med * 1e3))
    q = "—" if ratio is None else "%.3f" % ratio
    p = "—" if mem is None else "%.4f" % mem
    if md:
        return "| %s | %s | %s | %s | %s | %s |" % (name, label, t, q, p, note)
    return "%-12s %-28s %10s %7s %7s  %s" % (name, label, t, q, p, note)


if __name__ == "__main__":
    main()
