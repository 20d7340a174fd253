#!/usr/bin/python3
"""The least cost of any schedule of a small graph, by a shortest-path
search over every state a schedule can be in, written from FORMATS.md
section 2 with the judge's graph loader (judge.py) and nothing of remat.

A state is the set of resident nodes and the set of "recompute": false
nodes computed so far.  "compute v" costs cost(v) and needs: v not an
input, not resident, not (if it may not be recomputed) computed before,
its inputs resident, and resident + mem(v) + workspace(v) within the
budget (memory is measured while computes run); "free v" of a resident
node costs nothing.  Inputs start resident.  The goal: every output
resident.  Dijkstra's algorithm over these states gives the optimum over
every schedule in every order.  Exponential: for graphs of about 20
nodes at most.

Usage: brute.py GRAPH BUDGET...   (prints "BUDGET COST", -1: nothing fits)
"""
import heapq
import sys
import os

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import judge  # noqa: E402


def least_cost(g, budget):
    """The optimum at budget (bytes), or -1 when no schedule fits."""
    inp = [k == "input" for k in g.kind]
    start = (sum(1 << v for v in range(g.n) if inp[v]), 0)
    goal = sum(1 << v for v in g.outputs)
    dist = {start: 0.0}
    heap = [(0.0, start)]
    while heap:
        d, st = heapq.heappop(heap)
        if d > dist[st]:
            continue
        res, done = st
        if res & goal == goal:
            return d
        cur = sum(g.mem[v] for v in range(g.n) if res >> v & 1)
        for v in range(g.n):
            if res >> v & 1:
                nxt, nd = (res & ~(1 << v), done), d
            else:
                if inp[v] or (not g.recompute[v] and done >> v & 1):
                    continue
                if any(not res >> u & 1 for u in g.inputs[v]):
                    continue
                if cur + g.mem[v] + g.workspace[v] > budget:
                    continue
                nxt = (res | 1 << v, done | (0 if g.recompute[v] else 1 << v))
                nd = d + g.cost[v]
            if nd < dist.get(nxt, float("inf")):
                dist[nxt] = nd
                heapq.heappush(heap, (nd, nxt))
    return -1


def main(argv):
    g = judge.load_graph(argv[1])
    for b in argv[2:]:
        print(b, least_cost(g, int(b)))


if __name__ == "__main__":
    main(sys.argv)
