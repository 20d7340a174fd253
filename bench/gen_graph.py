#!/usr/bin/python3
"""Generate large remat-graph training graphs for scale benchmarks.

    bench/gen_graph.py chain  LAYERS [-o FILE]
    bench/gen_graph.py layered LAYERS [--skip P] [--seed S] [-o FILE]

chain: x -> f1 .. fL -> loss -> bL .. b1, b_i reading b_(i+1) (loss for
L), f_(i-1) (x for 1) and f_i; every tensor 1 MiB, forward cost 1,
backward cost 2 (2L + 2 nodes).

layered: a forward network where layer i reads layer i-1 and, with
probability P each (default 0.1), up to two earlier layers within 8
(skip connections, as in ResNets and U-Nets), with random sizes (1-16
MiB), costs (1-10) and workspaces (0 or 1-4 MiB on one layer in five);
then a loss and one backward node per layer by Checkmate's rule (b_i
reads the gradients of i's consumers, i's inputs and i itself).  2L + 2
nodes.  Deterministic for a given seed.  Standard library only.
"""
import argparse
import json
import random
import sys

MIB = 1 << 20


def chain(n):
    nodes = [{"id": "x", "kind": "input", "mem": MIB}]
    for i in range(1, n + 1):
        nodes.append({"id": "f%d" % i, "kind": "forward", "mem": MIB, "cost": 1,
                      "inputs": ["x" if i == 1 else "f%d" % (i - 1)]})
    nodes.append({"id": "loss", "kind": "loss", "mem": MIB, "cost": 1, "inputs": ["f%d" % n]})
    for i in range(n, 0, -1):
        nodes.append({"id": "b%d" % i, "kind": "backward", "mem": MIB, "cost": 2,
                      "grad_of": "f%d" % i,
                      "inputs": ["loss" if i == n else "b%d" % (i + 1),
                                 "x" if i == 1 else "f%d" % (i - 1), "f%d" % i]})
    return {"format": "remat-graph", "version": 1, "name": "chain%d" % n, "cost_unit": "unit",
            "nodes": nodes, "outputs": ["b1"]}


def layered(n, skip, seed):
    rnd = random.Random(seed)
    ins = [[] for _ in range(n)]
    users = [[] for _ in range(n)]
    nodes = [{"id": "x", "kind": "input", "mem": 4 * MIB}]
    for i in range(n):
        src = ["x"] if i == 0 else [i - 1]
        for _ in range(2):
            if i >= 2 and rnd.random() < skip:
                j = rnd.randint(max(0, i - 8), i - 2)
                if j not in src:
                    src.append(j)
        ins[i] = src
        for j in src:
            if j != "x":
                users[j].append(i)
        node = {"id": "f%d" % i, "kind": "forward", "mem": rnd.randint(1, 16) * MIB,
                "cost": rnd.randint(1, 10),
                "inputs": ["x" if j == "x" else "f%d" % j for j in src]}
        if rnd.random() < 0.2:
            node["workspace"] = rnd.randint(1, 4) * MIB
        nodes.append(node)
    nodes.append({"id": "loss", "kind": "loss", "mem": 4, "cost": 1, "inputs": ["f%d" % (n - 1)]})
    for i in range(n - 1, -1, -1):
        b_in = ["f%d" % i] + ["x" if j == "x" else "f%d" % j for j in ins[i]]
        b_in += ["b%d" % k for k in users[i]]
        if i == n - 1:
            b_in.append("loss")
        nodes.append({"id": "b%d" % i, "kind": "backward", "grad_of": "f%d" % i,
                      "mem": nodes[i + 1]["mem"], "cost": 2 * nodes[i + 1]["cost"],
                      "inputs": b_in})
    return {"format": "remat-graph", "version": 1, "name": "layered%d" % n, "cost_unit": "unit",
            "nodes": nodes, "outputs": ["b0"]}


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("kind", choices=["chain", "layered"])
    ap.add_argument("layers", type=int)
    ap.add_argument("--skip", type=float, default=0.1)
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("-o", "--output")
    a = ap.parse_args()
    if a.layers < 1:
        sys.exit("gen_graph.py: LAYERS must be at least 1")
    g = chain(a.layers) if a.kind == "chain" else layered(a.layers, a.skip, a.seed)
    f = open(a.output, "w") if a.output else sys.stdout
    json.dump(g, f, separators=(",", ":"))
    f.write("\n")


if __name__ == "__main__":
    main()
