#!/usr/bin/python3
"""`mincut --natural` beside PyTorch's own partitioner (issue 37).

    bench/mincut_torch.py [--remat build/remat] [--markdown FILE] [MODEL,BATCH,SHAPE ...]

For each model (default: resnet18 and mobilenet_v2 at batch 4, 3x64x64,
and the two-block Transformer encoder `tiny-encoder` at batch 4, 64x64):

- PyTorch: functorch's aot_module with min_cut_rematerialization_partition
  (Debian's torch 1.13, compiler "nvfuser", its default) on the training
  step loss_fn(model(x)); the saved values are the forward graph's outputs
  after the loss.  "Saved bytes" are the distinct storages those tensors
  hold when the forward graph runs, leaving out the parameters' (what the
  allocator keeps for the backward; PyTorch's own _size_of would count a
  transposed weight or a view of a saved activation again).  "Recomputed"
  are the operators in both its forward and its backward graph.
- remat: the joint graph remat_torch exports for the same model, batch and
  seeds, planned with `remat plan G -b 100% -p mincut --natural --policy P`
  for P = torch-1.13 (the default on such graphs) and remat; saved bytes
  and recomputed nodes are the planner's own figures (its note).

Needs /usr/bin/python3 with Debian's python3-torch and python3-networkx
(scripts/bootstrap-torch.sh) and build/remat.  Prints a Markdown table.
"""
import argparse
import json
import os
import re
import subprocess
import sys
import tempfile
import time

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, ROOT)

MODELS = [("resnet18", 4, [3, 64, 64]), ("mobilenet_v2", 4, [3, 64, 64]),
          ("tiny-encoder", 4, [64, 64])]


def pytorch_partition(name, batch, shape):
    """(saved storage bytes, saved tensors, recomputed operators) of
    functorch 1.13's min_cut_rematerialization_partition on the model."""
    import torch
    import torch.nn as nn
    from functorch.compile import aot_module, min_cut_rematerialization_partition
    from remat_torch import export as EX

    model, inputs, loss_fn, _ = EX.build(name, batch, shape)

    class Step(nn.Module):
        def __init__(self, m):
            super().__init__()
            self.m = m

        def forward(self, *xs):
            return loss_fn(self.m(*xs))

    st = Step(model)
    got = {}

    def fw_compiler(gm, _):
        got["fw"] = gm
        return gm

    def bw_compiler(gm, _):
        got["bw"] = gm
        return gm
    import warnings
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        c = aot_module(st, fw_compiler=fw_compiler, bw_compiler=bw_compiler,
                       partition_fn=min_cut_rematerialization_partition)
        c(*inputs).backward()
    fw, bw = got["fw"], got["bw"]
    params = list(st.parameters()) + list(st.buffers())
    with torch.no_grad():
        outs = fw(*([p.detach() for p in params] + list(inputs)))
    pst = {p.storage().data_ptr() for p in params}
    saved = {}
    for t in outs[1:]:
        if isinstance(t, torch.Tensor) and t.storage().data_ptr() not in pst:
            saved[t.storage().data_ptr()] = t.storage().nbytes()
    fwn = {n.name for n in fw.graph.nodes if n.op == "call_function"}
    bwn = {n.name for n in bw.graph.nodes if n.op == "call_function"}
    return sum(saved.values()), len(saved), len(fwn & bwn)


def export_joint(name, batch, shape, path):
    subprocess.run([sys.executable, "-m", "remat_torch", "export", name, "--batch", str(batch),
                    "--input-shape", ",".join(map(str, shape)), "--joint", "-o", path],
                   cwd=ROOT, check=True, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)


NOTE = re.compile(r"saves (\d+) values \((\d+) bytes\) for the backward and recomputes (\d+) nodes")


def remat_partition(remat, graph, policy):
    """(saved bytes, saved values, recomputed nodes, exit code) of
    `remat plan -p mincut --natural --policy policy` at a budget of the
    graph's total memory and its largest workspace, which no partition
    can exceed: PyTorch's partitioner has no budget, and the natural cut
    may peak a little above the file order (resnet18 at batch 2 under
    remat's policy: by 0.27%, so that at 100% mincut honestly finds no
    partition).  The workspaces are measured, so they depend on the
    machine (a weight gradient's convolution took 72 MiB on one CPU)."""
    info = subprocess.run([remat, "info", graph, "--json"], capture_output=True, text=True,
                          check=True)
    with open(graph, "rb") as f:
        raw = f.read()
    if raw[:2] == b"\x1f\x8b":
        import gzip
        raw = gzip.decompress(raw)
    work = max([n.get("workspace", 0) for n in json.loads(raw)["nodes"]] + [0])
    total = json.loads(info.stdout)["total_mem"] + work
    p = subprocess.run([remat, "plan", graph, "-b", str(total), "-p", "mincut", "--natural",
                        "--policy", policy, "--json", "-q"], capture_output=True, text=True)
    d = json.loads(p.stdout)
    m = NOTE.search(d.get("note") or d.get("error") or "")
    if not m:
        raise RuntimeError("remat plan -p mincut: %s" % (d.get("error") or p.stderr))
    return int(m.group(2)), int(m.group(1)), int(m.group(3)), p.returncode


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--remat", default=os.path.join(ROOT, "build", "remat"))
    ap.add_argument("--markdown", help="also write the table to this file")
    ap.add_argument("models", nargs="*", help="NAME,BATCH,SHAPE (SHAPE with x: 3x64x64)")
    a = ap.parse_args()
    import torch
    torch.set_num_threads(1)
    models = [(m.split(",")[0], int(m.split(",")[1]), [int(x) for x in m.split(",")[2].split("x")])
              for m in a.models] or MODELS
    rows = ["| model | PyTorch: saved bytes / recomputed | remat torch-1.13: saved bytes "
            "(vs PyTorch) / recomputed | remat policy remat: saved bytes / recomputed |",
            "| --- | ---: | ---: | ---: |"]
    with tempfile.TemporaryDirectory() as tmp:
        for name, batch, shape in models:
            t0 = time.time()
            pb, pn, pr = pytorch_partition(name, batch, shape)
            gpath = os.path.join(tmp, name + ".json")
            export_joint(name, batch, shape, gpath)
            tb, tn, tr, _ = remat_partition(a.remat, gpath, "torch-1.13")
            rb, rn, rr, _ = remat_partition(a.remat, gpath, "remat")
            rows.append("| %s, batch %d, %s | %s / %d | %s (%+.2f%%) / %d | %s / %d |"
                        % (name, batch, "x".join(map(str, shape)), format(pb, ","), pr,
                           format(tb, ","), 100.0 * (tb / pb - 1), tr, format(rb, ","), rr))
            print(rows[-1] + "  (%.0f s)" % (time.time() - t0), flush=True)
    head = ("bench/mincut_torch.py: torch %s, functorch's min_cut_rematerialization_partition "
            "(compiler nvfuser), %s\n\n" % (torch.__version__, time.strftime("%Y-%m-%d")))
    table = head + "\n".join(rows) + "\n"
    print()
    print(table)
    if a.markdown:
        with open(a.markdown, "w") as f:
            f.write(table)
    return 0


if __name__ == "__main__":
    sys.exit(main())
