"""A reference implementation of FORMATS.md's no-remat peak, independent of
remat's C code: Kahn's algorithm (the ready node earliest in the file first),
then the compute-only schedule with every value freed right after its last
use (never, for outputs; right after its compute, when nobody uses it)."""
import heapq
import json


def load(path):
    with open(path) as f:
        return json.load(f)


def topo_order(g):
    nodes = g["nodes"]
    index = {n["id"]: i for i, n in enumerate(nodes)}
    ins = [sorted({index[x] for x in n.get("inputs", [])}) for n in nodes]
    users = [[] for _ in nodes]
    for v, xs in enumerate(ins):
        for u in xs:
            users[u].append(v)
    indeg = [len(x) for x in ins]
    heap = [v for v in range(len(nodes)) if indeg[v] == 0]
    heapq.heapify(heap)
    order = []
    while heap:
        u = heapq.heappop(heap)
        order.append(u)
        for v in users[u]:
            indeg[v] -= 1
            if indeg[v] == 0:
                heapq.heappush(heap, v)
    assert len(order) == len(nodes), "cycle"
    return order, ins, users


def no_remat_peak(g):
    nodes = g["nodes"]
    order, ins, users = topo_order(g)
    index = {n["id"]: i for i, n in enumerate(nodes)}
    if "outputs" in g:
        outputs = {index[x] for x in g["outputs"]}
    else:
        outputs = {v for v in range(len(nodes)) if not users[v]}
    pos = {v: i for i, v in enumerate(order)}
    mem = [int(n["mem"]) for n in nodes]
    ws = [int(n.get("workspace", 0)) for n in nodes]
    is_input = [n.get("kind") == "input" for n in nodes]
    last = {}
    for v in order:
        if is_input[v]:
            continue
        for u in ins[v]:
            last[u] = max(last.get(u, -1), pos[v])
    resident = {v for v in range(len(nodes)) if is_input[v] and (v in last or v in outputs)}
    cur = sum(mem[v] for v in resident)
    peak = cur
    step = 0
    for v in order:
        if is_input[v]:
            continue
        peak = max(peak, cur + mem[v] + ws[v])
        resident.add(v)
        cur += mem[v]
        for u in set(ins[v]) | {v}:
            if u in resident and u not in outputs and last.get(u, -1) <= pos[v]:
                resident.discard(u)
                cur -= mem[u]
        step += 1
    return peak
