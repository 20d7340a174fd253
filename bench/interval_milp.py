#!/usr/bin/python3
"""How far a plan is from the best hold-or-recompute choice in its own order.

    bench/interval_milp.py GRAPH PLAN BUDGET_BYTES OUT {highs|cbc|windows} SECONDS
                           [--depth D] [--window W] [--window-seconds S]

An experiment of issue 32 (bench/RESULTS.md, the hard end), not a planner:
it needs Debian's python3-scipy (HiGHS, inside scipy) or CBC's C library
(libCbcSolver.so.3, through ctypes), neither of which remat links for this.

The order is PLAN's first computations; stage t ends with the first
computation of the t-th node.  A value v may be computed again only at a
stage where one of its descendants up to D levels down (default 2) is
first computed, or where PLAN computes it again; between two stages
where v can be needed (an event: its own, its users' and their possible
recomputations) it is held throughout or not at all (Moccasin's retention
intervals, with the order fixed).  Memory at a stage counts what is held
into it and everything computed in it at once, so the model's schedules
fit wherever it says they do (no frees inside a stage); where PLAN's own
stage counts more than the budget that way, that stage's row is relaxed
to PLAN's value for the modes that start from PLAN (the simulator still
judges the result); `highs` keeps every row at the budget.  The objective is
the cost of the computations again.  The model's optimum is not a bound
on anything: it restricts where values come back.

Modes: `highs` solves the whole model with scipy's HiGHS (no start);
`cbc` solves it with CBC from PLAN's point; `windows` frees only the
variables of W stages at a time (default 120, sliding by half), CBC for
S seconds each (default 10), from PLAN's point, keeping each window's
answer when it is cheaper.  OUT receives the schedule, to be judged with
`remat simulate GRAPH OUT -b BUDGET_BYTES`.
"""
import ctypes
import json
import os
import sys
import time

import numpy as np
import scipy.sparse as sp


def opt(name, default):
    if name in sys.argv:
        i = sys.argv.index(name)
        val = sys.argv[i + 1]
        del sys.argv[i:i + 2]
        return type(default)(val)
    return default


DEPTH = opt("--depth", 2)
WINDOW = opt("--window", 120)
WSECS = opt("--window-seconds", 10.0)
if len(sys.argv) != 7 or sys.argv[5] not in ("highs", "cbc", "windows"):
    sys.exit(__doc__.strip().split("\n\n")[1])
GRAPH, PLAN, BUDGET, OUT, MODE, SECS = sys.argv[1:]
BUDGET, SECS = int(BUDGET), float(SECS)

g = json.load(open(GRAPH))
ids = [nd["id"] for nd in g["nodes"]]
ix = {k: i for i, k in enumerate(ids)}
n = len(ids)
inp = [[ix[u] for u in nd.get("inputs", [])] for nd in g["nodes"]]
mem = [nd["mem"] for nd in g["nodes"]]
cost = [nd.get("cost", 0) for nd in g["nodes"]]
users = [[] for _ in range(n)]
for v in range(n):
    for u in inp[v]:
        users[u].append(v)
plan = json.load(open(PLAN))

# The order, and the stage of each computation again (step: the stage of
# the next first computation).
sigma, seen, again, pending = [], set(), [], []
for s in plan["steps"]:
    if s["op"] != "compute":
        continue
    v = ix[s["node"]]
    if v in seen:
        pending.append(v)
        continue
    seen.add(v)
    again += [(len(sigma), w) for w in pending]
    pending = []
    sigma.append(v)
T = len(sigma)
pos = [-1] * n
for t, v in enumerate(sigma):
    pos[v] = t


def descendants_stages(v):
    out, front = set(), [v]
    for _ in range(DEPTH):
        nxt = []
        for x in front:
            for c in users[x]:
                if pos[c] not in out:
                    out.add(pos[c])
                    nxt.append(c)
        front = nxt
    return out


cand = [descendants_stages(v) for v in range(n)]
for t, v in again:
    cand[v].add(t)
events = []
for v in range(n):
    ev = {pos[v]} | cand[v]
    for c in users[v]:
        ev |= {pos[c]} | cand[c]
    if not users[v]:
        ev.add(T - 1)
    events.append(sorted(ev))
seg_of = [{e: i for i, e in enumerate(events[v])} for v in range(n)]

# Columns: R[t, v] (v computed again at stage t), H[v, i] (v held from
# the end of stage events[v][i] into stage events[v][i + 1]).
R, H, obj, lo = {}, {}, [], []
for v in range(n):
    for t in sorted(cand[v]):
        R[(t, v)] = len(obj)
        obj.append(cost[v])
        lo.append(0)
for v in range(n):
    for i in range(len(events[v]) - 1):
        H[(v, i)] = len(obj)
        obj.append(0)
        lo.append(0 if users[v] else 1)  # outputs stay
ncol = len(obj)
rows, rlo, rhi = [], [], []


def present(u, t):
    """Terms of 'u is resident during stage t'."""
    i, co = seg_of[u][t], {}
    if i >= 1:
        co[H[(u, i - 1)]] = 1
    if (t, u) in R:
        co[R[(t, u)]] = co.get(R[(t, u)], 0) + 1
    return co


for v in range(n):  # held only when present: H[v,i] <= H[v,i-1] + R[e_i,v]
    for i in range(1, len(events[v]) - 1):
        co = {H[(v, i)]: 1, H[(v, i - 1)]: -1}
        if (events[v][i], v) in R:
            co[R[(events[v][i], v)]] = -1
        rows.append(co), rlo.append(-np.inf), rhi.append(0)
for c in range(n):  # a computation's inputs are resident
    for u in inp[c]:
        rows.append(present(u, pos[c])), rlo.append(1), rhi.append(np.inf)
    for t in cand[c]:
        for u in inp[c]:
            co = present(u, t)
            co[R[(t, c)]] = co.get(R[(t, c)], 0) - 1
            rows.append(co), rlo.append(0), rhi.append(np.inf)
first_mem_row = len(rows)
memrows = [dict() for _ in range(T)]
for v in range(n):
    for i in range(len(events[v]) - 1):
        for t in range(events[v][i] + 1, events[v][i + 1] + 1):
            memrows[t][H[(v, i)]] = mem[v]
    for t in cand[v]:
        memrows[t][R[(t, v)]] = mem[v]
for t in range(T):
    rows.append(memrows[t]), rlo.append(-np.inf), rhi.append(BUDGET - mem[sigma[t]])
ri, ci, dv = [], [], []
for k, r in enumerate(rows):
    for j, a in r.items():
        ri.append(k), ci.append(j), dv.append(a)
A = sp.csr_matrix((dv, (ri, ci)), shape=(len(rows), ncol))
rlo, rhi = np.array(rlo, float), np.array(rhi, float)
obj, lo = np.array(obj, float), np.array(lo, float)

# PLAN's point: its computations again, and what is resident entering each
# stage (before the stage's first computation).
x0 = np.zeros(ncol)
for t, v in again:
    x0[R[(t, v)]] = 1
resident, entering, done, fresh = set(), {0: set()}, set(), True
for s in plan["steps"]:
    v = ix[s["node"]]
    if s["op"] == "compute":
        resident.add(v)
        fresh = False
        if v not in done:
            done.add(v)
            entering[pos[v] + 1] = set(resident)
            fresh = True
    else:
        resident.discard(v)
        if fresh:
            entering[len(done)].discard(v)
for v in range(n):
    for i in range(len(events[v]) - 1):
        if v in entering.get(events[v][i + 1], ()) or not users[v]:
            x0[H[(v, i)]] = 1
ax = A @ x0
bad = [k for k in range(len(rows)) if ax[k] < rlo[k] - 1e-6 or ax[k] > rhi[k] + 1e-6]
if any(k < first_mem_row for k in bad):
    sys.exit("PLAN does not map into the model (a computation's input is missing)")
if MODE == "highs":
    pass  # no start: every row stays at the budget
else:
    for k in bad:
        rhi[k] = ax[k]
print(f"{T} stages, {ncol} columns, {len(rows)} rows, {A.nnz} nonzeros; PLAN costs "
      f"{obj @ x0:g} again ({len(bad)} memory rows over the budget in the model"
      f"{'' if MODE == 'highs' else ', relaxed to it'})", file=sys.stderr)


def cbc(lo_, up_, start, seconds):
    lib = ctypes.CDLL("libCbcSolver.so.3")
    lib.Cbc_newModel.restype = ctypes.c_void_p
    lib.Cbc_getColSolution.restype = ctypes.POINTER(ctypes.c_double)
    m = ctypes.c_void_p(lib.Cbc_newModel())
    ac = A.tocsc()
    arrs = [ac.indptr.astype(np.int32), ac.indices.astype(np.int32), ac.data.astype(float),
            np.array(lo_, float), np.array(up_, float), obj,
            np.maximum(rlo, -1e30), np.minimum(rhi, 1e30),
            np.arange(ncol, dtype=np.int32), np.array(start, float)]
    p = [a.ctypes.data_as(ctypes.POINTER(ctypes.c_int if a.dtype == np.int32
                                         else ctypes.c_double)) for a in arrs]
    lib.Cbc_loadProblem(m, ncol, len(rows), *p[:8])
    for j in range(ncol):
        lib.Cbc_setInteger(m, j)
    lib.Cbc_setMIPStartI(m, ncol, p[8], p[9])
    for k, val in (("log", os.environ.get("CBC_LOG", "0")), ("timeMode", "elapsed"),
                   ("sec", str(seconds))):
        lib.Cbc_setParameter(m, k.encode(), val.encode())
    for kv in filter(None, os.environ.get("CBC_PARAMS", "").split(",")):
        k, val = kv.split("=")
        lib.Cbc_setParameter(m, k.encode(), val.encode())
    lib.Cbc_solve(m)
    sol = lib.Cbc_getColSolution(m)
    x = np.round([sol[j] for j in range(ncol)])
    lib.Cbc_deleteModel(m)
    ax_ = A @ x
    ok = bool(np.all(ax_ >= rlo - 1e-6) and np.all(ax_ <= rhi + 1e-6))
    return x if ok else start


t0 = time.time()
if MODE == "highs":
    from scipy.optimize import Bounds, LinearConstraint, milp
    res = milp(obj, constraints=LinearConstraint(A, rlo, rhi), integrality=np.ones(ncol),
               bounds=Bounds(lo, np.ones(ncol)),
               options={"time_limit": SECS, "disp": True, "mip_rel_gap": 1e-4})
    print(f"HiGHS: {res.message}; model bound {getattr(res, 'mip_dual_bound', None)}",
          file=sys.stderr)
    x = np.round(res.x) if res.x is not None else x0
elif MODE == "cbc":
    x = cbc(lo, np.ones(ncol), x0, SECS)
else:
    x, a = x0, 0
    while time.time() - t0 < SECS:
        b = min(T, a + WINDOW)
        up, low = x.copy(), x.copy()
        for (t, v), j in R.items():
            if a <= t < b:
                low[j], up[j] = 0, 1
        for (v, i), j in H.items():
            if users[v] and events[v][i + 1] >= a and events[v][i] < b:
                low[j], up[j] = 0, 1
        y = cbc(low, up, x, min(WSECS, max(1.0, SECS - (time.time() - t0))))
        if obj @ y < obj @ x:
            print(f"window {a}..{b}: {obj @ x:g} -> {obj @ y:g} "
                  f"({time.time() - t0:.0f} s)", file=sys.stderr)
            x = y
        a = 0 if b >= T else a + WINDOW // 2
print(f"cost again {obj @ x:g} ({time.time() - t0:.0f} s)", file=sys.stderr)

# The schedule: each stage computes its values again in order, then its
# node, freeing after each computation what the stage no longer reads and
# is not held into the next stage.
held_after = {}
for (v, i), j in H.items():
    if x[j] > 0.5:
        for t in range(events[v][i], events[v][i + 1]):
            held_after[(v, t)] = True
again_at = [[] for _ in range(T)]
for (t, v), j in R.items():
    if x[j] > 0.5:
        again_at[t].append(v)
steps, resident = [], set()
for t in range(T):
    comp = sorted((v for v in again_at[t] if v not in resident), key=lambda v: pos[v])
    run = comp + [sigma[t]]
    for k, v in enumerate(run):
        steps.append({"op": "compute", "node": ids[v]})
        resident.add(v)
        later = {u for w in run[k + 1:] for u in inp[w]} | set(run[k + 1:])
        for u in sorted(resident - later):
            if users[u] and not held_after.get((u, t)):
                steps.append({"op": "free", "node": ids[u]})
                resident.discard(u)
sched = {k: plan[k] for k in ("format", "version", "graph") if k in plan}
sched.update(planner="interval_milp", budget=BUDGET, steps=steps)
with open(OUT, "w") as f:
    json.dump(sched, f)
