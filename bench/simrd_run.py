#!/usr/bin/python3
"""Run DTR's reference simulator (simrd) on a remat-graph at an absolute budget.

    bench/simrd_run.py SIMRD_DIR GRAPH BUDGET_BYTES [HEURISTIC [RUNTIME]]

SIMRD_DIR is the `simrd` folder of a checkout of uwsampl/dtr-prototype (the
folder that holds the `simrd` package; pure Python, needs python3-attr).
It is not a dependency of remat: only bench/peers.sh uses it, when given.

The graph becomes a simrd program the way the peers' comparison built it
(../shared/benchmarks/peers/README.md): every node an operator in the
file's order (cost = TIME, mem = MEMORY, one output each), input nodes
constants pinned from the start, each tensor released after its last
reader in that order, outputs never released; heuristic DTREqClass on
RuntimeV2EagerOptimized (the paper's eager-eviction runtime), thrash limit
2x the baseline.  Prints one JSON object: ok, overhead_pct (recomputed
cost / baseline cost, in percent), max_memory, cpu_s (the simulation's
CPU time, loading excluded).
"""
import json
import sys
import time


def main():
    if len(sys.argv) < 4:
        sys.exit(__doc__)
    sys.path.insert(0, sys.argv[1])
    sys.setrecursionlimit(1000000)
    from simrd.parse.graph import Graph, GOp, GCompute, GGet, GRelease
    from simrd.heuristic import HEURISTICS
    from simrd.runtime import RUNTIMES, RematExceededError

    path, budget = sys.argv[2], int(sys.argv[3])
    hname = sys.argv[4] if len(sys.argv) > 4 else "DTREqClass"
    rname = sys.argv[5] if len(sys.argv) > 5 else "RuntimeV2EagerOptimized"
    with open(path) as f:
        d = json.load(f)
    nodes = d["nodes"]
    kind = {nd["id"]: nd.get("kind", "op") for nd in nodes}
    outputs = set(d.get("outputs") or [])
    last = {}
    for i, nd in enumerate(nodes):
        for p in nd.get("inputs", []):
            last[p] = i
    if not outputs:
        outputs = {nd["id"] for nd in nodes if nd["id"] not in last}
    g = Graph()
    tmap = {}
    sched = []
    base = 0.0
    for i, nd in enumerate(nodes):
        if kind[nd["id"]] == "input":
            op, (t,) = GOp.make(g, (), 0.0, (int(nd["mem"]),), (-1,), "constant",
                                (nd["id"],), {})
            tmap[nd["id"]] = t
            sched += [GCompute(op), GGet(t, True)]
            continue
        cost = float(nd.get("cost", 1))
        base += cost
        args = tuple(tmap[p] for p in nd.get("inputs", []))
        op, (t,) = GOp.make(g, args, cost, (int(nd["mem"]),), (-1,), "f%d" % i,
                            (nd["id"],), {})
        tmap[nd["id"]] = t
        sched.append(GCompute(op))
        for p in dict.fromkeys(nd.get("inputs", [])):
            if last[p] == i and p not in outputs and kind[p] != "input":
                sched.append(GRelease(tmap[p]))
        if nd["id"] not in last and nd["id"] not in outputs:
            sched.append(GRelease(t))
    g.schedule = sched
    rt = RUNTIMES[rname](budget, HEURISTICS[hname](), remat_limit=2.0 * base)
    t0 = time.process_time()
    try:
        g.get_closure()(rt)
        s = rt.telemetry.summary
        out = {"ok": True, "overhead_pct": 100.0 * s["remat_compute"] / base,
               "max_memory": s["max_memory"]}
    except MemoryError:
        out = {"ok": False, "why": "out of memory"}
    except RematExceededError:
        out = {"ok": False, "why": "thrash limit"}
    out["cpu_s"] = time.process_time() - t0
    out["budget"] = budget
    print(json.dumps(out))


main()
