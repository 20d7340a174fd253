#!/usr/bin/python3
"""Benchmarks of the twremat planner; prints Markdown tables.

    bench/twremat_bench.py [REMAT] [--only fig2b|transformer|tradeoff|published|speed]

REMAT defaults to build/remat.  Graphs are generated into a temporary
directory, training chains by `remat gen chain N --mem 1 --loss-mem 1` and
the others by bench/gen_graphs.py; the published graphs are read from
../shared/benchmarks/published (or $REMAT_PUBLISHED), the examples from
examples/.

- fig2b: Kumar et al. Fig. 2b.  Feed-forward training graphs of 10 to 100
  layers: the no-remat peak, the peak of Algorithm 1 alone (--cutoff 1)
  with its relative length, and the lowest budget the planner meets.
- transformer: Kumar et al. Table 2 on generated Transformer training graphs.
- tradeoff: Kumar et al. section 4.3 (TWRemat(k), their Fig. 4): peak and
  relative length of the bare recursion for a range of cutoffs k, and the
  planner's cost at a range of budgets.
- published: the lowest budget at which twremat succeeds on every example
  and published graph, against min_peak_lower_bound from `remat info`.
- speed: planning time, best of 5 runs (wall clock, whole process).

"Lowest budget" is found by bisection on the budget (to 0.05 %), then
the peak of the schedule found there is tried as a budget: the smallest
budget tried at which `remat plan` exits 0.

Why a script and not `remat bench`: it bisects on the budget, reads
`computes` (for the relative length) and the graph's parameter bytes,
times whole processes (best of 5), and sweeps --cutoff; bench rows and
budget lists do none of these (see bench/README.md).
"""
import glob
import json
import os
import subprocess
import sys
import tempfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)


def run(remat, *args):
    r = subprocess.run([remat] + list(args), capture_output=True, text=True)
    return r.returncode, (json.loads(r.stdout) if r.stdout.strip() else None)


def info(remat, path):
    # --time-limit 0: the width always (info bounds it by default).
    return run(remat, "info", path, "--json", "--time-limit", "0")[1]


def plan(remat, path, budget, *extra):
    return run(remat, "plan", path, "--planner", "twremat", "--budget", str(budget),
               "--json", *extra)


def lowest(remat, path):
    """Smallest budget (bisection to 0.05 %) at which twremat succeeds."""
    i = info(remat, path)
    lo, hi = i["min_peak_lower_bound"] - 1, i["no_remat_peak"]
    rc, best = plan(remat, path, hi)
    assert rc == 0, path
    while hi - lo > max(1, hi * 0.0005):
        mid = (lo + hi) // 2
        rc, d = plan(remat, path, mid)
        if rc == 0:
            hi, best = mid, d
        else:
            lo = mid
    # The schedule found there may peak lower still: try its peak.
    if best["peak_mem"] < hi:
        rc, d = plan(remat, path, best["peak_mem"])
        if rc == 0:
            hi, best = best["peak_mem"], d
    return hi, best, i


def gen(remat, tmp, kind, n):
    path = os.path.join(tmp, "%s%d.json" % (kind, n))
    if os.path.exists(path):
        return path
    if kind == "chain":  # unit sizes: peaks in the tables count tensors
        subprocess.run([remat, "gen", "chain", str(n), "--mem", "1", "--loss-mem", "1",
                        "-o", path], check=True)
        return path
    with open(path, "w") as f:
        subprocess.run(["/usr/bin/python3", os.path.join(HERE, "gen_graphs.py"),
                        kind, str(n)], stdout=f, check=True)
    return path


def mib(b):
    return "%.1f" % (b / 2.0 ** 20)


def fig2b(remat, tmp):
    print("### Feed-forward network: peak vs depth (Kumar et al. Fig. 2b)\n")
    print("| layers | nodes | parameters (MiB) | no-remat peak (MiB) | Algorithm 1 peak (MiB) | "
          "its length | lowest twremat budget (MiB) | overhead there |")
    print("| ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: |")
    for n in range(10, 101, 10):
        p = gen(remat, tmp, "ffn", n)
        i = info(remat, p)
        _, a1 = plan(remat, p, "100%", "--cutoff", "1")
        lo, d, _ = lowest(remat, p)
        g = json.load(open(p))
        params = sum(x["mem"] for x in g["nodes"] if x.get("label") == "parameter")
        print("| %d | %d | %s | %s | %s | %.2fx | %s | %+.0f%% |" % (
            n, i["nodes"], mib(params), mib(i["no_remat_peak"]), mib(a1["peak_mem"]),
            a1["computes"] / (i["nodes"] - i["inputs"]), mib(lo), 100 * d["overhead"]))
    print()


def transformer(remat, tmp):
    print("### Transformer training graphs (Kumar et al. Table 2)\n")
    print("| layers | nodes | no-remat peak (GiB) | Algorithm 1 peak (GiB) | reduction | "
          "relative length | lowest twremat budget (GiB) | reduction | relative length |")
    print("| ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: |")
    for n in (6, 12):
        p = gen(remat, tmp, "transformer", n)
        i = info(remat, p)
        base = i["nodes"] - i["inputs"]
        _, a1 = plan(remat, p, "100%", "--cutoff", "1")
        lo, d, _ = lowest(remat, p)
        print("| %d | %d | %.2f | %.2f | %.2fx | %.2fx | %.2f | %.2fx | %.2fx |" % (
            n, i["nodes"], i["no_remat_peak"] / 2.0 ** 30, a1["peak_mem"] / 2.0 ** 30,
            i["no_remat_peak"] / a1["peak_mem"], a1["computes"] / base,
            lo / 2.0 ** 30, i["no_remat_peak"] / lo, d["computes"] / base))
    print()


def tradeoff(remat, tmp):
    p = gen(remat, tmp, "transformer", 6)
    i = info(remat, p)
    base = i["nodes"] - i["inputs"]
    print("### Trading memory for length (Kumar et al. section 4.3), Transformer, 6 layers\n")
    print("Bare recursion, TWRemat(k) (`--cutoff k`):\n")
    print("| k | peak (MiB) | relative length |")
    print("| ---: | ---: | ---: |")
    for k in (1, 2, 4, 8, 16, 32, 64, 128, 256, 512):
        _, d = plan(remat, p, "100%", "--cutoff", str(k))
        print("| %d | %s | %.2fx |" % (k, mib(d["peak_mem"]), d["computes"] / base))
    print("\nThe planner (cutoff searched, replay post-pass) at fixed budgets:\n")
    print("| budget (% of no-remat peak) | peak (MiB) | overhead (cost) | relative length |")
    print("| ---: | ---: | ---: | ---: |")
    for pct in (100, 80, 60, 40, 30, 25, 20):
        rc, d = plan(remat, p, "%d%%" % pct)
        if rc != 0:
            print("| %d%% | no fit | | |" % pct)
            continue
        print("| %d%% | %s | %+.1f%% | %.2fx |" % (pct, mib(d["peak_mem"]),
                                                 100 * d["overhead"], d["computes"] / base))
    print()


def published(remat, tmp):
    pub = os.environ.get("REMAT_PUBLISHED",
                         os.path.join(ROOT, "..", "shared", "benchmarks", "published"))
    files = sorted(glob.glob(os.path.join(ROOT, "examples", "*.json")))
    files += sorted(glob.glob(os.path.join(ROOT, "graphs", "*.json")))
    files += sorted(glob.glob(os.path.join(pub, "*.json")))
    print("### Lowest budget vs the lower bound\n")
    print("| graph | nodes | width | lower bound | no-remat peak | lowest twremat budget | "
          "x lower bound | overhead there | plan time (s) |")
    print("| --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: |")
    for f in files:
        lo, d, i = lowest(remat, f)
        print("| %s | %d | %d | %d | %d | %d | %.3f | %+.1f%% | %.3f |" % (
            os.path.relpath(f, ROOT) if f.startswith(ROOT) else os.path.basename(f),
            i["nodes"], i["treewidth"], i["min_peak_lower_bound"], i["no_remat_peak"], lo,
            lo / i["min_peak_lower_bound"], 100 * d["overhead"], d["time_s"]))
    print()


def best_wall(cmd, reps=5):
    best = None
    for _ in range(reps):
        t0 = time.perf_counter()
        r = subprocess.run(cmd, capture_output=True, text=True)
        t = time.perf_counter() - t0
        best = t if best is None else min(best, t)
    return best, r


def speed(remat, tmp):
    print("### Planning time (best of 5, wall clock of the whole `remat plan` process)\n")
    print("| graph | nodes | request | peak | overhead | time (s) |")
    print("| --- | ---: | --- | ---: | ---: | ---: |")
    cases = [("chain", 400), ("chain", 1000), ("chain", 10000), ("resnet", 1100)]
    for kind, n in cases:
        p = gen(remat, tmp, kind, n)
        i = info(remat, p)
        for req in (["--cutoff", "1", "--budget", "100%"], ["--budget", "50%"],
                    ["--budget", "10%"], ["--budget", "5%"]):
            t, r = best_wall([remat, "plan", p, "--planner", "twremat", "--json"] + req)
            d = json.loads(r.stdout)
            print("| %s%d | %d | `%s` | %d | %+.1f%% | %.3f |" % (
                kind, n, i["nodes"], " ".join(req), d["peak_mem"], 100 * d["overhead"], t))
    print()


def main():
    args = [a for a in sys.argv[1:] if not a.startswith("--")]
    only = sys.argv[sys.argv.index("--only") + 1] if "--only" in sys.argv else None
    args = [a for a in args if a != only]
    remat = os.path.abspath(args[0] if args else os.path.join(ROOT, "build", "remat"))
    parts = [("fig2b", fig2b), ("transformer", transformer), ("tradeoff", tradeoff),
             ("published", published), ("speed", speed)]
    with tempfile.TemporaryDirectory() as tmp:
        for name, fn in parts:
            if only is None or only == name:
                fn(remat, tmp)
    return 0


if __name__ == "__main__":
    sys.exit(main())
