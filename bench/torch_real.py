#!/usr/bin/python3
"""Plans on the real allocator, against eager PyTorch (issue 28).

    bench/torch_real.py [--models a,b] [--budgets 100%,70%,50%,lowest]
                        [--reps N] [--time-limit S] [--threads T] [--markdown FILE]

For each model (the zoo's torch models of tests/torch/check_matrix.py:
resnet18, mobilenet_v2, the Transformer encoder and the GPT-style decoder,
and torchvision's EfficientNet-B0 at batch 8, 128x128) and each budget, a
plan is made with remat_torch.plan(planner auto) and run in the usual loop

    opt.zero_grad(set_to_none=True); loss = step(x, y); opt.step()   (SGD)

beside eager PyTorch's (loss = loss_fn(model(x), y); loss.backward()) on a
copy of the same weights.  Reported per row:

  simulated   the plan's peak (remat simulate: batch, activations, gradients)
  real        the allocator's peak while the step's schedule ran plus the
              batch (Step.last.real_peak, remat_torch/meter.py), and its
              ratio to simulated (the target: at most 1.02)
  loop plan / loop eager   the allocator's peak over three iterations of
              each loop, above what was allocated before it (parameters,
              the batch), their ratio, and plan - eager in bytes
  time        median step time of the plan over eager's, measured
              interleaved (eager, plan, eager, plan, ...), each --reps times

The exit status is 1 when a real peak is more than 2% above its simulated
peak.  CPU only here (no GPU on this machine); on CUDA the meter reads
torch.cuda.max_memory_allocated instead of the profiler.
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

import remat_torch  # noqa: E402
from remat_torch import api, export as EX  # noqa: E402
from remat_torch.meter import loop_peak  # noqa: E402

# name -> (exporter MODEL, batch, input shape); EfficientNet-B0 is built here.
MODELS = {
    "resnet18": ("resnet18", 8, [3, 128, 128]),
    "mobilenet_v2": ("mobilenet_v2", 8, [3, 64, 64]),
    "encoder": ("tiny-encoder", 8, [64, 64]),
    "gpt": ("tiny-gpt", 8, [64]),
    "efficientnet_b0": (None, 8, [3, 128, 128]),
}


def build(name):
    """(model, x, y, loss_fn(out, y))."""
    spec, batch, shape = MODELS[name]
    torch.manual_seed(0)
    if spec is None:
        import torchvision
        model = torchvision.models.efficientnet_b0(num_classes=10)
        g = torch.Generator().manual_seed(1)
        x = torch.randn(batch, *shape, generator=g)
        y = torch.randint(0, 10, (batch,), generator=g)
        return model, x, y, nn.functional.cross_entropy
    model, inputs, loss_fn, _ = EX.build(spec, batch, shape)
    # The exporter's loss closes over its target; the loop passes none.
    return model, inputs[0], None, (lambda out, _y=None: loss_fn(out))


def mib(b):
    return "%.2f" % (b / 2 ** 20)


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--models", default=",".join(MODELS))
    ap.add_argument("--budgets", default="100%,70%,50%,lowest")
    ap.add_argument("--reps", type=int, default=5, help="timed steps of each (default 5)")
    ap.add_argument("--time-limit", type=float, default=5, help="per plan (default 5 s)")
    ap.add_argument("--threads", type=int, default=1, help="torch threads (default 1)")
    ap.add_argument("--markdown", help="also write the table to this file")
    a = ap.parse_args()
    torch.set_num_threads(a.threads)
    rows = ["| model | budget | simulated MiB | real MiB (ratio) | loop: plan MiB | "
            "loop: eager MiB | plan / eager | plan - eager bytes | recomputes | time plan / eager |",
            "| --- | --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: |"]
    over = []
    for name in a.models.split(","):
        model0, x, y, lf = build(name)
        targets = () if y is None else (y,)
        for budget in a.budgets.split(","):
            model = copy.deepcopy(model0)
            eager = copy.deepcopy(model0)
            t0 = time.time()
            try:
                step = remat_torch.plan(model, x, lf, example_target=y, budget=budget,
                                        time_limit=a.time_limit)
            except api.PlanError as e:
                low = getattr(e, "lowest_budget", None)
                rows.append("| %s | %s | no schedule (the lowest budget auto reaches: %s) "
                            "| | | | | | | |" % (name, budget, "none" if low is None
                                               else mib(low) + " MiB"))
                print(rows[-1], flush=True)
                continue
            plan_s = time.time() - t0
            step.run(x, *targets, meter=True)
            L = step.last
            ratio = L.real_peak / L.simulated_peak
            if ratio > 1.02:
                over.append("%s %s: real %d, simulated %d" % (name, budget, L.real_peak,
                                                              L.simulated_peak))

            def e_step():
                loss = lf(eager(x), y) if y is not None else lf(eager(x))
                loss.backward()

            def p_step():
                step(x, *targets)
            pe = loop_peak(eager, e_step)
            pp = loop_peak(model, p_step)
            te, tp = [], []
            for _ in range(a.reps):
                for fn, out, mod in ((e_step, te, eager), (p_step, tp, model)):
                    for p in mod.parameters():
                        p.grad = None
                    t1 = time.perf_counter()
                    fn()
                    out.append(time.perf_counter() - t1)
            rows.append("| %s | %s | %s | %s (%.4f) | %s | %s | %.4f | %+d | %d | %.2f |"
                        % (name, budget, mib(L.simulated_peak), mib(L.real_peak), ratio,
                           mib(pp), mib(pe), pp / pe, pp - pe, L.recomputes,
                           statistics.median(tp) / statistics.median(te)))
            print(rows[-1] + "  (planned in %.0f s)" % plan_s, flush=True)
    table = "\n".join(rows) + "\n"
    head = ("bench/torch_real.py: %s, %s, torch %s, %d thread(s), %s\n\n"
            % (platform.node() or "this machine", platform.processor() or platform.machine(),
               torch.__version__, a.threads, time.strftime("%Y-%m-%d")))
    print()
    print(head + table)
    if a.markdown:
        with open(a.markdown, "w") as f:
            f.write(head + table)
    for o in over:
        print("OVER", o)
    return 1 if over else 0


if __name__ == "__main__":
    sys.exit(main())
