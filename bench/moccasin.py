#!/usr/bin/env python3
"""Moccasin's Table 2 cells, and a 5,000-node graph (issue 11).

    bench/moccasin.py [--remat build/remat] [--limit 60] [--only n100] [--big]
                      [--seeds 1,2,3] [--args "--lns-threads 1"]
                      [-o bench/moccasin-runs.jsonl]

For n = 100, 250, 500, 1000: the random layered graphs with the authors'
node order (../shared/benchmarks/published/random-layered-nN-paper-order.json)
at 90% and 80% of their no-remat peak (exactly Moccasin's budgets), and
the loader-order variants (random-layered-nN.json) at the same absolute
budgets; each `remat plan GRAPH --budget B --time-limit LIMIT --json`
with the default planner and order.  Per cell: overhead, time to the
first plan, time to the final plan, the lower bound and the gap, as
remat reports them.  --big adds a 5,001-node training graph (`remat gen
layered 2500 --seed 1 --train`: a random layered DAG of 2,500 nodes and
its backward pass) planned by `auto --time-limit 10` and by `twremat`.
--seeds runs every cell once per seed (`--seed S`; default: the planner's
own seed), --args adds options to every `remat plan` (split on spaces).
Every run is appended to -o as one JSON line; the table goes to stdout in
Markdown.
"""
import argparse
import json
import os
import subprocess
import sys
import tempfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)
PUBLISHED = os.path.join(ROOT, "..", "shared", "benchmarks", "published")

# Moccasin's overheads (TDI %) and times, quoted from its paper (Bartan et
# al. 2023, Table 2 and appendix table A.1), for the paper-order graphs.
MOCCASIN = {
    (100, 90): ("+0.8%", "9.3 s"), (100, 80): ("+2.3%", "9.5 s"),
    (250, 90): ("+0.9%", "55 s"), (250, 80): ("+4.9%", "640 s"),
    (500, 90): ("+0.7%", "1,803 s"), (500, 80): ("+3.4%", "1,805 s"),
    (1000, 90): ("+0.7%", "3,613 s"), (1000, 80): ("+3.4%", "3,612 s"),
}


def run(cmd, timeout):
    t = time.monotonic()
    p = subprocess.run(cmd, capture_output=True, text=True, timeout=timeout,
                       stdin=subprocess.DEVNULL)
    wall = time.monotonic() - t
    try:
        out = json.loads(p.stdout)
    except ValueError:
        out = {"error": p.stderr.strip()[:300] or "no JSON"}
    out["exit"] = p.returncode
    out["wall_s"] = round(wall, 3)
    return out


def peak_of(remat, graph):
    p = subprocess.run([remat, "info", graph, "--json"], capture_output=True, text=True,
                       check=True)
    return json.loads(p.stdout)["no_remat_peak"]


def pct(x):
    return "-" if x is None else "%+.2f%%" % (100 * x)


def sec(x):
    return "-" if x is None else "%.1f s" % x


def cell_row(label, budget, r, mocc):
    lb, gap = r.get("lower_bound"), r.get("gap")
    return "| %s | %s | %s | %s | %s | %s | %s | %s | %s |" % (
        label, budget, pct(r.get("overhead")) if r.get("feasible") else "none (exit %d)" % r["exit"],
        sec(r.get("first_s")), sec(r.get("final_s")), sec(r.get("wall_s")),
        "-" if lb is None else "%.6g" % lb, pct(gap), mocc)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--remat", default=os.path.join(ROOT, "build", "remat"))
    ap.add_argument("--limit", type=float, default=60)
    ap.add_argument("--only", default=None)
    ap.add_argument("--big", action="store_true")
    ap.add_argument("--seeds", default=None)
    ap.add_argument("--args", default="")
    ap.add_argument("-o", "--output", default=os.path.join(HERE, "moccasin-runs.jsonl"))
    a = ap.parse_args()
    seeds = [None] if not a.seeds else [int(x) for x in a.seeds.split(",")]
    extra = a.args.split()
    if not os.path.isdir(PUBLISHED):
        print("moccasin.py: %s is absent: nothing to run" % PUBLISHED, file=sys.stderr)
        return 0
    log = open(a.output, "a")
    print("| graph | budget | overhead | first plan | final plan | wall | lower bound | gap "
          "| Moccasin (paper) |")
    print("| --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: | --- |")
    for n in (100, 250, 500, 1000) if a.only != "big" else ():
        paper = os.path.join(PUBLISHED, "random-layered-n%d-paper-order.json" % n)
        loader = os.path.join(PUBLISHED, "random-layered-n%d.json" % n)
        if a.only and a.only not in ("n%d" % n, "n%d-80" % n):
            continue
        peak = peak_of(a.remat, paper)
        for frac in (90, 80):
            if a.only == "n%d-80" % n and frac != 80:
                continue
            budget = peak * frac // 100  # Moccasin's budgets (41,687 for n100 at 90%)
            for label, g in (("n%d paper order @ %d%%" % (n, frac), paper),
                             ("n%d loader order @ same" % n, loader)):
                for seed in seeds:
                    cmd = [a.remat, "plan", g, "--budget", str(budget), "--time-limit",
                           str(a.limit), "--json"] + extra
                    if seed is not None:
                        cmd += ["--seed", str(seed)]
                    r = run(cmd, a.limit * 3 + 60)
                    r.update(graph=os.path.basename(g), budget=budget, limit=a.limit,
                             seed=seed, args=a.args, date=time.strftime("%Y-%m-%d"))
                    log.write(json.dumps(r) + "\n")
                    log.flush()
                    m = MOCCASIN[(n, frac)]
                    print(cell_row(label + ("" if seed is None else ", seed %d" % seed), budget,
                                   r, "%s in %s" % m if g == paper else "-"))
                    sys.stdout.flush()
    if a.big or a.only == "big":
        with tempfile.TemporaryDirectory() as d:
            g = os.path.join(d, "train5001.json")
            subprocess.run([a.remat, "gen", "layered", "2500", "--seed", "1", "--train",
                            "-o", g], check=True)
            peak = peak_of(a.remat, g)
            for frac in (90, 80):
                budget = peak * frac // 100
                for planner, limit in (("auto", 10), ("twremat", 0)):
                    cmd = [a.remat, "plan", g, "--budget", str(budget), "--planner", planner,
                           "--json"]
                    if limit:
                        cmd += ["--time-limit", str(limit)]
                    r = run(cmd, 600)
                    r.update(graph="train5001 (remat gen layered 2500 --seed 1 --train)",
                             budget=budget, limit=limit, date=time.strftime("%Y-%m-%d"))
                    log.write(json.dumps(r) + "\n")
                    log.flush()
                    print(cell_row("train5001 @ %d%%, %s%s" % (frac, planner,
                                   " --time-limit %d" % limit if limit else ""), budget, r, "-"))
                    sys.stdout.flush()
    return 0


if __name__ == "__main__":
    sys.exit(main())
