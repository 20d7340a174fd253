#!/usr/bin/python3
"""A training graph of K residual MLP blocks, the shape of a ViT block's
MLP half: residual x (1 MiB) -> h = fc1 (4 MiB) -> a = gelu (4 MiB) ->
m = fc2 (1 MiB) -> x' = x + m, then a loss and the backward, where each
block's input gradient adds the incoming residual gradient to the MLP's.

    bench/resmlp.py K > r.json
    build/remat info r.json                          # cut peak bound: 13 MiB
    build/remat plan r.json -p checkmate -b 14MiB    # the exact MILP

Used in bench/results/auto-latency.md (issue 30): how far a schedule can
get to the cut peak bound when every block needs its residual gradient
after its GELU backward.
"""
import json
import sys

K = int(sys.argv[1])
M = 1 << 20
nodes = [{"id": "x0", "kind": "input", "mem": M}]


def node(i, kind, inputs, mem, cost, grad_of=None):
    n = {"id": i, "kind": kind, "mem": mem, "cost": cost, "inputs": inputs}
    if grad_of:
        n["grad_of"] = grad_of
    nodes.append(n)


for k in range(K):
    x = "x%d" % k
    node("h%d" % k, "forward", [x], 4 * M, 1)
    node("a%d" % k, "forward", ["h%d" % k], 4 * M, 1)
    node("m%d" % k, "forward", ["a%d" % k], M, 1)
    node("x%d" % (k + 1), "forward", [x, "m%d" % k], M, 1)
node("loss", "loss", ["x%d" % K], M, 1)
g = "loss"
for k in reversed(range(K)):
    node("da%d" % k, "backward", [g, "a%d" % k], 4 * M, 2, "a%d" % k)
    node("dh%d" % k, "backward", ["da%d" % k, "h%d" % k], 4 * M, 2, "h%d" % k)
    node("dx%d" % k, "backward", ["dh%d" % k, "x%d" % k, g], M, 2, "x%d" % k)
    g = "dx%d" % k
json.dump({"format": "remat-graph", "version": 1, "name": "resmlp%d" % K,
           "cost_unit": "unit", "nodes": nodes, "outputs": [g]}, sys.stdout, indent=0)
sys.stdout.write("\n")
