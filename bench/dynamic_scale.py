#!/usr/bin/python3
"""Planning time of the dynamic planners on 100k-node generated graphs.

    bench/dynamic_scale.py [--remat build/remat] [--layers 50000] [--runs 3]

Generates (into a temporary directory) a training chain (`remat gen chain
LAYERS --loss-mem 1MiB`) and a layered training network with skip
connections (bench/gen_graphs.py layered), each with
2 * LAYERS + 2 nodes, and runs `remat plan --json` with greedy and with dtr
under every heuristic at budgets of 50%, 25% and 10% of the no-remat peak.
Prints one Markdown table per graph: the best planning time (`time_s`,
wall clock inside remat, excluding loading) over RUNS runs, the overhead
and the number of recomputations, or "-" where the planner exits 3.

With --extra, two more tables on the layered network at 10%: dtr's
planning time for LAYERS/4, /2, x1 and x2 (near-linear growth), and the
effect of --sample (0 = score every candidate, the quadratic scan).
Standard library only.
"""
import argparse
import json
import os
import subprocess
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
CONFIGS = [("greedy", ["--planner", "greedy"])] + [
    ("dtr " + h, ["--planner", "dtr", "--heuristic", h])
    for h in ["dtr", "dtr-local", "lru", "largest", "msps"]]
BUDGETS = ["50%", "25%", "10%"]


def gen(remat, kind, n, path):
    if kind == "chain":
        subprocess.run([remat, "gen", "chain", str(n), "--loss-mem", "1MiB", "--name",
                        "chain%d" % n, "-o", path],
                       check=True)
    else:
        with open(path, "w") as f:
            subprocess.run(["/usr/bin/python3", os.path.join(HERE, "gen_graphs.py"), kind,
                            str(n)], stdout=f, check=True)


def plan(remat, graph, budget, args):
    p = subprocess.run([remat, "plan", graph, "--budget", budget, "--json"] + args,
                       capture_output=True, text=True, timeout=3600)
    d = json.loads(p.stdout)
    return p.returncode, d


def table(remat, graph, runs):
    out = ["| planner | " + " | ".join("%s: time s / overhead / recomputes" % b
                                      for b in BUDGETS) + " |",
           "| --- |" + " ---: |" * len(BUDGETS)]
    for name, args in CONFIGS:
        cells = []
        for b in BUDGETS:
            best = None
            for _ in range(runs):
                code, d = plan(remat, graph, b, args)
                if code == 3:
                    best = None
                    break
                if code != 0:
                    sys.exit("%s %s %s: exit %d: %s" % (graph, name, b, code, d.get("error")))
                if best is None or d["time_s"] < best["time_s"]:
                    best = d
            cells.append("-" if best is None else "%.3f / %.1f%% / %d" % (
                best["time_s"], 100 * best["overhead"], best["recomputes"]))
        out.append("| %s | %s |" % (name, " | ".join(cells)))
    return "\n".join(out) + "\n"


def best_of(remat, graph, budget, args, runs):
    best = None
    for _ in range(runs):
        code, d = plan(remat, graph, budget, args)
        if code != 0:
            return None
        if best is None or d["time_s"] < best["time_s"]:
            best = d
    return best


def fmt(d):
    return "-" if d is None else "%.3f / %.2f%% / %d" % (d["time_s"], 100 * d["overhead"],
                                                         d["recomputes"])


def extra(remat, tmp, layers, runs):
    print("### dtr on layered networks at 10%: growth with size\n")
    print("| layers | nodes | time s / overhead / recomputes |\n| ---: | ---: | ---: |")
    for n in [layers // 4, layers // 2, layers, 2 * layers]:
        path = os.path.join(tmp, "layered%d.json" % n)
        if not os.path.exists(path):
            gen(remat, "layered", n, path)
        print("| %d | %d | %s |" % (n, 2 * n + 2, fmt(best_of(remat, path, "10%",
                                                          ["--planner", "dtr"], runs))))
    print("\n### dtr --sample on layered%d at 10%% (one run each)\n" % layers)
    print("| --sample | time s / overhead / recomputes |\n| ---: | ---: |")
    path = os.path.join(tmp, "layered%d.json" % layers)
    for smp in [0, 64, 256, 1024]:
        print("| %d | %s |" % (smp, fmt(best_of(remat, path, "10%",
                                                ["--planner", "dtr", "--sample", str(smp)], 1))))
    print()


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--remat", default="build/remat")
    ap.add_argument("--layers", type=int, default=50000)
    ap.add_argument("--runs", type=int, default=3)
    ap.add_argument("--extra", action="store_true")
    a = ap.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        for kind in ["chain", "layered"]:
            path = os.path.join(tmp, "%s%d.json" % (kind, a.layers))
            gen(a.remat, kind, a.layers, path)
            info = json.loads(subprocess.run([a.remat, "info", path, "--json"], check=True,
                                             capture_output=True, text=True).stdout)
            print("### %s: %d nodes, %d edges\n" % (info["name"], info["nodes"], info["edges"]))
            print(table(a.remat, path, a.runs))
        if a.extra:
            extra(a.remat, tmp, a.layers, a.runs)


if __name__ == "__main__":
    main()
