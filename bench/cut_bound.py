#!/usr/bin/python3
"""The cut bound against the best plans of the benchmark sweep.

    bench/cut_bound.py [--remat build/remat] [--sweep bench/data/sweep.csv]
                       [--budgets 90,80,70,60,50] [--limit 10] [--check]
                       [--only NAME]

For every graph of the sweep file (bench/results.sh writes it) and every
budget, runs `remat info FILE -b P% --json -t LIMIT` and prints, as a
Markdown table: the cheapest plan any planner of the sweep found (its
overhead over each needed node once, and the planner), the cut bound
(the same unit), the gap between them in points, and the node whose cut
gave the bound.

--check recomputes the Lagrangian dual at the bound's node independently,
from docs/FORMATS.md alone, with a max-flow written here (Dinic) and a
price search of its own.  remat's bound is that dual or, where CBC
solved the node's knapsack whole, more: the dual may not exceed it
("BELOW ITS DUAL" otherwise).  No bound may exceed the cheapest plan
("ABOVE THE PLAN").
"""
import argparse
import collections
import csv
import json
import os
import subprocess
import sys

INF = float("inf")


class Flow:
    """Dinic's max-flow on float capacities."""

    def __init__(self, n):
        self.n = n
        self.g = [[] for _ in range(n)]

    def add(self, u, v, c):
        self.g[u].append([v, c, len(self.g[v])])
        self.g[v].append([u, 0.0, len(self.g[u]) - 1])

    def maxflow(self, s, t):
        total = 0.0
        while True:
            level = [-1] * self.n
            level[s] = 0
            q = collections.deque([s])
            while q:
                u = q.popleft()
                for v, c, _ in self.g[u]:
                    if c > 1e-12 and level[v] < 0:
                        level[v] = level[u] + 1
                        q.append(v)
            if level[t] < 0:
                return total
            it = [0] * self.n
            while True:
                pushed = self._push(s, t, INF, level, it)
                if pushed <= 0:
                    break
                total += pushed

    def _push(self, s, t, amount, level, it):
        # Iterative DFS along the level graph.
        path = []
        u = s
        while True:
            if u == t:
                f = min(self.g[a][i][1] for a, i in path)
                for a, i in path:
                    e = self.g[a][i]
                    e[1] -= f
                    self.g[e[0]][e[2]][1] += f
                return f
            advanced = False
            while it[u] < len(self.g[u]):
                v, c, _ = self.g[u][it[u]]
                if c > 1e-12 and level[v] == level[u] + 1:
                    path.append((u, it[u]))
                    u = v
                    advanced = True
                    break
                it[u] += 1
            if not advanced:
                if not path:
                    return 0.0
                level[u] = -1  # dead end
                a, i = path.pop()
                it[a] += 1
                u = a

    def source_side(self, s):
        seen = [False] * self.n
        seen[s] = True
        stack = [s]
        while stack:
            u = stack.pop()
            for v, c, _ in self.g[u]:
                if c > 1e-12 and not seen[v]:
                    seen[v] = True
                    stack.append(v)
        return seen


def load(path):
    g = json.load(open(path))
    ns = g["nodes"]
    idx = {n["id"]: i for i, n in enumerate(ns)}
    ins = [[idx[u] for u in dict.fromkeys(n.get("inputs", []))] for n in ns]
    if "outputs" in g:
        outs = [idx[o] for o in g["outputs"]]
    else:
        read = {u for l in ins for u in l}
        outs = [i for i in range(len(ns)) if i not in read]
    return ns, ins, outs


def reach(start, adj):
    seen = {start}
    stack = [start]
    while stack:
        u = stack.pop()
        for v in adj[u]:
            if v not in seen:
                seen.add(v)
                stack.append(v)
    return seen


def cut_bound_at(ns, ins, outs, x, budget):
    """The Lagrangian dual's best value at node x: extra cost over the
    least cost (every needed node once) that every schedule pays."""
    n = len(ns)
    users = [[] for _ in range(n)]
    for v in range(n):
        for u in ins[v]:
            users[u].append(v)
    need = set()
    for o in outs:
        need |= reach(o, ins)
    anc = reach(x, ins) - {x}
    desc = (reach(x, users) - {x}) & need
    mem = [n_.get("mem", 0) for n_ in ns]
    cost = [n_.get("cost", 0) for n_ in ns]
    kind = [n_.get("kind", "op") for n_ in ns]
    room = budget - mem[x] - ns[x].get("workspace", 0)

    def closure(lam):
        # a_v = 2v+2 (in R or C), c_v = 2v+3 (in C); 0 source, 1 sink.
        f = Flow(2 * n + 2)
        const = 0.0
        big = 1e300
        for v in need:
            if v == x:
                continue
            a, c = 2 * v + 2, 2 * v + 3
            if mem[v]:
                f.add(a, 1, lam * mem[v])
            never = kind[v] == "input" or v in ins[x] or (
                v in anc and ns[v].get("recompute", True) is False)
            if never:
                f.add(c, 1, big)
            else:
                w = (cost[v] if v in anc else 0) - lam * mem[v]
                if w < 0:
                    f.add(0, c, -w)
                    const += w
                elif w > 0:
                    f.add(c, 1, w)
            f.add(c, a, big)
            for u in ins[v]:
                if u != x:
                    f.add(c, 2 * u + 2, big)
            if v in desc:
                f.add(0, c, big)
            if v in ins[x] or v in outs:
                f.add(0, a, big)
        value = const + f.maxflow(0, 1) - lam * room
        side = f.source_side(0)
        m = sum(mem[v] for v in need if v != x and side[2 * v + 2] and not side[2 * v + 3])
        k = sum(cost[v] for v in need if v in anc and side[2 * v + 3])
        return value, k, m - room

    if room < 0:
        return INF
    best = 0.0
    v0, k0, s0 = closure(0.0)
    if s0 <= 0:
        return 0.0
    up = (k0, s0)
    lam = 1.0
    total_anc = sum(cost[v] for v in anc)
    while True:
        if lam > total_anc + 1:
            return INF  # not even the least memory fits (not separated here)
        val, k, s = closure(lam)
        best = max(best, val)
        if s > 0:
            up = (k, s)
            lam *= 4
        else:
            down = (k, s)
            break
    for _ in range(40):
        if up[1] <= down[1]:
            break
        lam = (down[0] - up[0]) / (up[1] - down[1])
        val, k, s = closure(lam)
        best = max(best, val)
        if s > 0:
            if (k, s) == up:
                break
            up = (k, s)
        else:
            if (k, s) == down:
                break
            down = (k, s)
    return best


def least_cost(ns, ins, outs):
    need = set()
    for o in outs:
        need |= reach(o, ins)
    return sum(ns[v].get("cost", 0) for v in need if ns[v].get("kind", "op") != "input")


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--remat", default="build/remat")
    ap.add_argument("--sweep", default="bench/data/sweep.csv")
    ap.add_argument("--budgets", default="90,80,70,60,50")
    ap.add_argument("--limit", type=float, default=10)
    ap.add_argument("--check", action="store_true")
    ap.add_argument("--only", default="")
    a = ap.parse_args()
    budgets = [int(b) for b in a.budgets.split(",")]
    rows = list(csv.DictReader(open(a.sweep)))
    files = {}
    best = {}
    for r in rows:
        files[r["graph"]] = r["file"]
        if r["feasible"] != "true" or not r["cost"]:
            continue
        key = (r["graph"], r["budget_spec"])
        c = float(r["cost"])
        if key not in best or c < best[key][0]:
            best[key] = (c, r["planner"])
    print("| graph | budget | best plan | cut bound | gap (points) | node |" +
          (" its dual, recomputed |" if a.check else ""))
    print("| --- | ---: | ---: | ---: | ---: | --- |" + (" ---: |" if a.check else ""))
    for name in sorted(files):
        if a.only and a.only not in name:
            continue
        path = files[name]
        if not os.path.exists(path):
            continue
        model = None
        for pct in budgets:
            out = subprocess.run([a.remat, "info", path, "-b", "%d%%" % pct, "--json",
                                  "-t", str(a.limit)], capture_output=True, text=True)
            d = json.loads(out.stdout.splitlines()[0])
            if "error" in d:
                continue
            floor = None
            if model is None:
                model = load(path)
            floor = least_cost(*model)
            b = best.get((name, "%d%%" % pct))
            plan = "+%.2f%% (%s)" % (100 * (b[0] / floor - 1), b[1]) if b else "none"
            if d["cut_status"] == "ok":
                cut = 100 * (d["cut_lower_bound"] / floor - 1)
                cut_s = "+%.2f%%" % cut
                gap = "%.2f" % (100 * (b[0] / floor - 1) - cut) if b else "-"
            else:
                cut = None
                cut_s = d["cut_status"]
                gap = "-"
            line = "| %s | %d%% | %s | %s | %s | %s |" % (name, pct, plan, cut_s, gap,
                                                      d["cut_node"] or "-")
            if b and cut is not None and d["cut_lower_bound"] > b[0] * (1 + 1e-9):
                line += " ABOVE THE PLAN"
            if a.check:
                if d["cut_node"] and cut is not None:
                    ns, ins, outs = model
                    x = [i for i, n in enumerate(ns) if n["id"] == d["cut_node"]][0]
                    ind = cut_bound_at(ns, ins, outs, x, d["budget"])
                    ind_pct = 100 * ind / floor
                    line += " +%.2f%% |" % ind_pct
                    if ind_pct > cut + 0.005 + 1e-6 * abs(cut):
                        line += " BELOW ITS DUAL"
                else:
                    line += " - |"
            print(line, flush=True)


if __name__ == "__main__":
    sys.exit(main())
