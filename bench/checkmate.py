#!/usr/bin/python3
"""Benchmark the exact planner: GLPK vs CBC, with and without warm start.

    bench/checkmate.py [--remat build/remat] [--limit 60] [--quick] [--raw FILE]

Runs `remat plan --planner checkmate` on training chains of 8 to 32 layers
(`remat gen chain N`; at 80% and 60% of the no-remat peak) and on the
published graphs of ../shared/benchmarks/published/ (at 90% and 80%),
each with a --time-limit of 60 s, and prints Markdown tables for
bench/results/solver.md: time to proven optimality, or the gap when the limit
stopped the search.  Then two variations on CBC: Checkmate's own
hazard-count FREE rows instead of the default split rows, and
--max-computes 2.  Last, how closely short time limits are kept on two
graphs no solver finishes quickly.  A run that proves optimality in under 10 s is repeated
twice more and the best time kept (the machine is shared).  --quick runs
a small subset (smoke test); --raw appends every run as a JSON line;
--from RAW prints the tables again from such a file, running only what
it lacks (bench/data/checkmate-runs.jsonl holds the runs of
bench/results/solver.md).

Why a script and not `remat bench`: its tables need what bench rows do
not record (the MILP's cost bound, gap and `optimal`; the wall time of
the whole process), runs repeated for the best time, and several option
sets (--solver, --warm-start, --free-rows, --max-computes) side by side;
see bench/README.md.
"""
import json
import os
import subprocess
import sys
import tempfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)
PUBLISHED = os.path.join(ROOT, "..", "shared", "benchmarks", "published")
PUBLISHED_GRAPHS = ["vgg16-train", "vgg19-train", "fcn-8-vgg-train", "segnet-train",
                    "vgg-unet-train", "random-layered-n100"]
CHAINS = [8, 12, 16, 24, 32]


def arg(name, default):
    if name in sys.argv:
        return sys.argv[sys.argv.index(name) + 1]
    return default


REMAT = os.path.abspath(arg("--remat", os.path.join(ROOT, "build", "remat")))
LIMIT = float(arg("--limit", "60"))
RAW = arg("--raw", None)
QUICK = "--quick" in sys.argv
CACHE = {}


def key(cmd):
    # The chains live in a temporary directory: key on file names.
    return " ".join(os.path.basename(c) if c.endswith(".json") else c for c in cmd)


if arg("--from", None):
    for line in open(arg("--from", None)):
        d = json.loads(line)
        CACHE.setdefault(key(d["cmd"].split()), []).append(d)


def plan(graph, budget, extra, limit=None):
    cmd = [REMAT, "plan", graph, "--budget", budget, "--planner", "checkmate",
           "--time-limit", "%g" % (limit or LIMIT), "--json"] + extra
    if CACHE.get(key(cmd[1:])):
        return CACHE[key(cmd[1:])].pop(0)
    t0 = time.monotonic()
    p = subprocess.run(cmd, capture_output=True, text=True, stdin=subprocess.DEVNULL)
    wall = time.monotonic() - t0
    try:
        d = json.loads(p.stdout)
    except ValueError:
        d = {"error": "no JSON: " + p.stderr.strip()[:200]}
    d["exit"] = p.returncode
    d["wall"] = wall
    d["cmd"] = " ".join(cmd[1:])
    if RAW:
        with open(RAW, "a") as f:
            f.write(json.dumps(d) + "\n")
    return d


def best_of(graph, budget, extra):
    d = plan(graph, budget, extra)
    if d.get("optimal") and d.get("time_s", LIMIT) < 10:
        for _ in range(2):
            e = plan(graph, budget, extra)
            if e.get("optimal") and e["time_s"] < d["time_s"]:
                d = e
    return d


def cell(d):
    if d.get("optimal"):
        return "%.2f s" % d["time_s"]
    if d.get("cost") is None and "infeasible" in (d.get("error") or ""):
        return "infeasible (%.2f s)" % d.get("time_s", d["wall"])
    if d.get("cost") is None:
        return "none in %.0f s" % d.get("time_s", d["wall"])
    g = 100 * d.get("gap", float("nan"))
    return "gap %.1f%%" % g if g >= 0.1 else "gap %.2g%%" % g


def fmt_cost(c):
    if c is None:
        return "-"
    return "%.6g" % c if c < 1e7 else "%.4e" % c


def instances(tmp):
    out = []
    for n in CHAINS[:2] if QUICK else CHAINS:
        path = os.path.join(tmp, "chain%d.json" % n)
        subprocess.run([REMAT, "gen", "chain", str(n), "-o", path], check=True)
        for b in ["80%", "60%"]:
            out.append(("chain-%d (%d nodes)" % (n, 2 * n + 2), path, b))
    for g in PUBLISHED_GRAPHS[:1] if QUICK else PUBLISHED_GRAPHS:
        path = os.path.join(PUBLISHED, g + ".json")
        for b in ["90%", "80%"]:
            out.append((g, path, b))
    return out


def main():
    if not os.access(REMAT, os.X_OK):
        sys.exit("bench/checkmate.py: %s is not an executable" % REMAT)
    t_start = time.monotonic()
    configs = [("CBC, warm", ["--solver", "cbc"]),
               ("CBC, cold", ["--solver", "cbc", "--warm-start", "off"]),
               ("GLPK, warm", ["--solver", "glpk"]),
               ("GLPK, cold", ["--solver", "glpk", "--warm-start", "off"])]
    with tempfile.TemporaryDirectory() as tmp:
        inst = instances(tmp)
        print("Time to proven optimality, or the gap left at the %.0f s limit "
              "(\"none\": no schedule found in time).\n" % LIMIT)
        print("| graph | budget | " + " | ".join(c[0] for c in configs) +
              " | best cost | lower bound |")
        print("| --- | ---: | " + " | ".join("---:" for _ in configs) + " | ---: | ---: |")
        best = {}
        for name, path, b in inst:
            row = [best_of(path, b, extra) for _, extra in configs]
            costs = [d["cost"] for d in row if d.get("cost") is not None]
            lbs = [d["lower_bound"] for d in row if d.get("lower_bound") is not None]
            infeasible = all(d["exit"] == 3 and "below the lower bound" in (d.get("error") or "")
                             for d in row)
            best[(name, b)] = min(costs) if costs else None
            if infeasible:
                print("| %s | %s | below the memory lower bound: no schedule exists |||||"
                      % (name, b))
                continue
            print("| %s | %s | %s | %s | %s |" % (name, b, " | ".join(cell(d) for d in row),
                                                  fmt_cost(min(costs) if costs else None),
                                                  fmt_cost(max(lbs) if lbs else None)))
            sys.stdout.flush()

        print("\nCBC without warm start: Checkmate's hazard-count FREE rows "
              "(`--free-rows hazard`) against the default split rows.\n")
        print("| graph | budget | split rows | hazard rows |")
        print("| --- | ---: | ---: | ---: |")
        for name, path, b in inst:
            if not name.startswith("chain") and "fcn" not in name and "vgg19" not in name:
                continue
            if best.get((name, b)) is None:
                continue
            row = [best_of(path, b, ["--warm-start", "off"]),
                   best_of(path, b, ["--warm-start", "off", "--free-rows", "hazard"])]
            print("| %s | %s | %s | %s |" % (name, b, cell(row[0]), cell(row[1])))
            sys.stdout.flush()

        print("\nCBC with warm start, `--max-computes 2` (each node at most twice) "
              "against no cap.\n")
        print("| graph | budget | no cap: time | cost | C = 2: time | cost |")
        print("| --- | ---: | ---: | ---: | ---: | ---: |")
        for name, path, b in inst:
            if best.get((name, b)) is None:
                continue
            row = [best_of(path, b, []), best_of(path, b, ["--max-computes", "2"])]
            print("| %s | %s | %s | %s | %s | %s |" % (name, b, cell(row[0]),
                                                      fmt_cost(row[0].get("cost")),
                                                      cell(row[1]), fmt_cost(row[1].get("cost"))))
            sys.stdout.flush()
        print("\nShort time limits, without warm start: wall time of the whole "
              "`remat plan` run (load, build, solve, simulate, write).\n")
        print("| graph | budget | solver | limit 2 s | limit 5 s | limit 10 s |")
        print("| --- | ---: | --- | ---: | ---: | ---: |")
        for g, b in [("random-layered-n100", "80%"), ("segnet-train", "80%")]:
            path = os.path.join(PUBLISHED, g + ".json")
            for solver in ["cbc", "glpk"]:
                row = [plan(path, b, ["--solver", solver, "--warm-start", "off"], lim)
                       for lim in (2, 5, 10)]
                print("| %s | %s | %s | %s |" % (g, b, solver.upper(),
                                                 " | ".join("%.2f s" % d["wall"] for d in row)))
                sys.stdout.flush()
    print("\nTotal wall time: %.0f s." % (time.monotonic() - t_start))


if __name__ == "__main__":
    main()
