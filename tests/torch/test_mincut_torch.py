#!/usr/bin/python3
"""`mincut --natural` against PyTorch's own partitioner (issue 37).

    test_mincut_torch.py PATH/TO/remat PROJECT_ROOT

functorch 1.13's min_cut_rematerialization_partition (the default of
torch.compile's training path in that release; Debian's python3-torch)
runs on resnet18, mobilenet_v2 and a two-block Transformer encoder at a
small batch; `remat plan -p mincut --natural` (policy torch-1.13, the
default on remat_torch's joint graphs) runs on the joint graph remat_torch
exports for the same model and seeds.  Each pair must save the same
activations within 10% (distinct storages, parameters left out: see
bench/mincut_torch.py) and recompute at most 5 nodes more than PyTorch;
and on the same graph the remat policy must differ (it recomputes more),
so that the test cannot pass by the policy being ignored.  Exits 77
(ctest: skipped) without torch or networkx, or with a torch other than
1.13.
"""
import os
import sys
import tempfile

REMAT, ROOT = sys.argv[1], sys.argv[2]
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from harness import run_checks, torch_or_skip  # noqa: E402

torch = torch_or_skip(REMAT, ROOT)
if not torch.__version__.startswith("1.13"):
    # The torch-1.13 policy is that release's partitioner; later releases
    # partition otherwise (and aot_module there refuses the loss's target
    # tensor captured by the step).
    print("this check compares remat's torch-1.13 policy with torch 1.13's partitioner; "
          "torch %s partitions otherwise: skipped" % torch.__version__)
    sys.exit(77)
try:
    import networkx  # noqa: F401
except ImportError:
    print("networkx is not installed for /usr/bin/python3 (functorch's partitioner needs "
          "it): skipped (install it with scripts/bootstrap-torch.sh)")
    sys.exit(77)
sys.path.insert(0, os.path.join(ROOT, "bench"))
import mincut_torch as MT  # noqa: E402

CASES = [("resnet18", 2, [3, 32, 32]), ("mobilenet_v2", 2, [3, 32, 32]),
         ("tiny-encoder", 2, [16, 64])]


def check(name, batch, shape):
    fails = []
    pb, pn, pr = MT.pytorch_partition(name, batch, shape)
    with tempfile.TemporaryDirectory() as tmp:
        g = os.path.join(tmp, "g.json")
        MT.export_joint(name, batch, shape, g)
        tb, tn, tr, _ = MT.remat_partition(REMAT, g, "torch-1.13")
        rb, rn, rr, _ = MT.remat_partition(REMAT, g, "remat")
    print("     %s: PyTorch saves %d bytes (%d tensors), recomputes %d; remat torch-1.13 "
          "%d bytes (%d values), %d; remat policy %d bytes, %d"
          % (name, pb, pn, pr, tb, tn, tr, rb, rr))
    if abs(tb - pb) > 0.10 * pb:
        fails.append("%s: remat saves %d bytes, PyTorch %d (more than 10%% apart)"
                     % (name, tb, pb))
    if tr > pr + 5:
        fails.append("%s: remat recomputes %d nodes, PyTorch %d" % (name, tr, pr))
    if (rb, rr) == (tb, tr):
        fails.append("%s: the remat policy gives the torch-1.13 policy's cut" % name)
    return fails


def main():
    return run_checks("mincut against PyTorch's partitioner",
                      [("%s, batch %d" % (n, b), (lambda n=n, b=b, s=s: check(n, b, s)))
                       for n, b, s in CASES])


if __name__ == "__main__":
    sys.exit(main())
