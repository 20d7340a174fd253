#!/usr/bin/python3
"""Overhead versus budget for the dynamic planners (issue 7).

    bench/dynamic_sweep.py [--remat build/remat] [--out FILE] GRAPH...

For each graph and each budget (100% of the no-remat peak down to 10% in
steps of 10, plus the graph's lower bound), runs `remat plan --json` with
every planner `remat planners` lists except `auto`, and `dtr` once per
heuristic, and prints a Markdown table per graph: the overhead (extra
compute over the baseline, in percent) of each schedule, or "-" where the
planner exits 3 (no schedule within the budget).  Standard library only.
"""
import argparse
import json
import os
import subprocess
import sys

HEURISTICS = ["dtr", "dtr-local", "lru", "largest", "msps"]


def run(cmd):
    p = subprocess.run(cmd, capture_output=True, text=True, timeout=600)
    return p.returncode, p.stdout, p.stderr


def planners(remat):
    code, out, err = run([remat, "planners"])
    if code != 0:
        sys.exit("remat planners failed: %s" % err)
    names = [line.split()[0] for line in out.splitlines() if line.strip()]
    return [n for n in names if n != "auto"]


def configs(remat):
    out = []
    for name in planners(remat):
        if name == "dtr":
            out += [("dtr " + h, ["--planner", "dtr", "--heuristic", h]) for h in HEURISTICS]
        else:
            out.append((name, ["--planner", name]))
    return out


def info(remat, graph):
    code, out, err = run([remat, "info", graph, "--json"])
    if code != 0:
        sys.exit("remat info %s failed: %s" % (graph, err))
    return json.loads(out)


def cell(remat, graph, budget, args):
    code, out, err = run([remat, "plan", graph, "--budget", str(budget), "--json"] + args)
    if code == 3:
        return "-"
    if code != 0:
        return "error %d" % code
    d = json.loads(out)
    return "%.1f" % (100.0 * d["overhead"])


def sweep(remat, graph, cfgs):
    gi = info(remat, graph)
    nrp, lb = gi["no_remat_peak"], gi["min_peak_lower_bound"]
    budgets = [(pct, nrp * pct // 100) for pct in range(100, 0, -10)]
    budgets = [(p, b) for p, b in budgets if b >= lb]
    budgets.append((100.0 * lb / nrp if nrp else 0, lb))
    lines = ["### %s (%s)" % (gi.get("name", graph), os.path.basename(graph)), "",
             "%d nodes; no-remat peak %d bytes; lower bound %d bytes (%.1f%%). "
             "Overhead in %% of the baseline cost; - = exit 3." %
             (gi["nodes"], nrp, lb, 100.0 * lb / nrp if nrp else 0), "",
             "| budget | " + " | ".join(name for name, _ in cfgs) + " |",
             "| --- |" + " ---: |" * len(cfgs)]
    for pct, b in budgets:
        row = [cell(remat, graph, b, args) for _, args in cfgs]
        label = "%d%%" % pct if isinstance(pct, int) else "%.1f%% (lb)" % pct
        lines.append("| %s | %s |" % (label, " | ".join(row)))
    return "\n".join(lines) + "\n"


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--remat", default="build/remat")
    ap.add_argument("--out", help="also write the tables to this file")
    ap.add_argument("graphs", nargs="+")
    a = ap.parse_args()
    cfgs = configs(a.remat)
    text = "\n".join(sweep(a.remat, g, cfgs) for g in a.graphs)
    sys.stdout.write(text)
    if a.out:
        with open(a.out, "w") as f:
            f.write(text)


if __name__ == "__main__":
    main()
