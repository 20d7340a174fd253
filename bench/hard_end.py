#!/usr/bin/env python3
"""Rows of bench/hard_end.sh's table, from the answers of `remat plan
--json` and `remat info --budget --json` for one graph and budget.

  hard_end.py table RAW.jsonl     the whole table again from a RAW file
                                  (lines {"graph", "budget", "plan", "info"})

The gap is measured against the best bound that holds in every node
order: the cut, window, down-set and path bounds and the least cost (each
needed node once), from `info`, and auto's own `lower_bound`: since
2026-11-29 (f78d8b0) it holds in every order (the bounds auto proved in
its run; on a graph on one path, the path bound's MILP), and RAW lines
written since say so ("auto_lower_bound": "any order").  Before, it
could be a MILP's bound in one order, as the LP bound is (Checkmate's
model); where one of those is higher, the last column says so.
"""
import json
import os
import sys

ANY_ORDER = ("cut", "window", "downset", "path")


def row(graph, budget, p, i, auto_any_order=True):
    name = os.path.basename(graph).replace(".json", "")
    base = p.get("baseline_cost") or i.get("baseline_cost")
    layered = "layered" in name
    target = 2.0 if layered else 1.0
    infeasible = [k for k in ANY_ORDER if i.get(k + "_status") == "infeasible"]
    if not base:
        return "| %s | %s | - | - | | - | no answer |" % (name, budget), False
    pct = lambda v: "%+.2f%%" % (100.0 * (v / base - 1))
    bounds = [(base, 0, "least cost")]
    for pref, k in enumerate(ANY_ORDER):
        if i.get(k + "_lower_bound") is not None:
            bounds.append((i[k + "_lower_bound"], -1 - pref, k))
    # auto's own lower_bound holds in every order too (the bounds it
    # proved in its run: on a graph on one path, the path bound's MILP).
    best, _, which = max(bounds)
    auto = p.get("lower_bound")
    if auto_any_order and auto is not None and auto > best + 5e-5 * base:
        best, which = auto, "auto's run"
    note = ""
    one_order = [(v, k) for v, k in ((i.get("lp_lower_bound"), "the LP"),
                                     (None if auto_any_order else auto, "auto's MILP"))
                 if v is not None and v > best + 5e-5 * base]
    if one_order:
        v, k = max(one_order)
        note = "; %s bound in its order: %s" % (k, pct(v))
    if p.get("cost") is None:
        if infeasible:
            return ("| %s | %s | none | infeasible | %s | - | met (no schedule fits) |"
                    % (name, budget, infeasible[0])), True
        return ("| %s | %s | none | %s | %s | - | OUTSIDE (no schedule found%s) |"
                % (name, budget, pct(best), which, note)), False
    gap = 100.0 * (p["cost"] - best) / base
    ok = gap <= target + 1e-9
    return ("| %s | %s | %s | %s | %s | %.2f | %s%s |" % (
        name, budget, pct(p["cost"]), pct(best), which, gap, "met" if ok else "OUTSIDE",
        note)), ok


def load(f):
    try:
        with open(f) as fh:
            return json.load(fh)
    except (OSError, ValueError):
        return {}


if __name__ == "__main__":
    if len(sys.argv) == 3 and sys.argv[1] == "table":
        n = outside = 0
        print("| graph | budget | auto | best bound, any order | bound | gap (points) | target |")
        print("| --- | ---: | ---: | ---: | --- | ---: | --- |")
        for line in open(sys.argv[2]):
            d = json.loads(line)
            r, ok = row(d["graph"], d["budget"], d["plan"], d["info"],
                        d.get("auto_lower_bound") == "any order")
            print(r)
            n += 1
            outside += not ok
        print("\ncases: %d; outside the target: %d" % (n, outside))
    elif len(sys.argv) == 5:
        g, b, pf, inf = sys.argv[1:]
        p, i = load(pf), load(inf)
        if os.environ.get("RAW"):
            with open(os.environ["RAW"], "a") as f:
                f.write(json.dumps({"graph": g, "budget": b, "plan": p, "info": i,
                                    "auto_lower_bound": "any order"}) + "\n")
        print(row(g, b, p, i)[0])
    else:
        sys.exit("usage: hard_end.py table RAW.jsonl | hard_end.py GRAPH BUDGET PLAN INFO")
