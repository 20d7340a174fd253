#!/usr/bin/python3
"""Write the remat-graph training graphs of the benchmarks that `remat gen`
cannot make (training chains are `remat gen chain`; see bench/README.md).

    gen_graphs.py ffn LAYERS              > ffn.json
    gen_graphs.py transformer LAYERS      > transformer.json
    gen_graphs.py resnet BLOCKS           > resnet.json
    gen_graphs.py layered LAYERS [--skip P] [--seed S] > layered.json

ffn, transformer and resnet are op-level graphs built by a small
reverse-mode differentiator: every forward op lists, per input, which
tensors its gradient reads (a matmul's input gradient reads the weight, its
weight gradient reads the input, relu and softmax read their output, ...);
gradients reaching a tensor from several consumers are summed by one node;
every parameter gets an SGD update node, and the updated parameters are
the graph's outputs.  Parameters and data are input nodes.  (`remat gen
train` differentiates by Checkmate's rule instead: one backward node per
forward node, no parameters.)

ffn: Kumar et al. section 4's feed-forward network (ReLU layers, MSE loss,
gradient descent), batch 8192, width 128 (float32): activations of 4 MiB,
weights of 64 KiB, so that activations, not parameters, dominate memory.
transformer: a post-LN Transformer encoder stack with a softmax
cross-entropy head (batch 32, sequence 256, model 512, 8 heads,
feed-forward 2048, vocabulary 4096: Transformer Base sizes).  resnet: basic
residual blocks (conv, relu, conv, add, relu) of 8 MiB activations, for
size and speed tests.  Used by bench/twremat_bench.py.

layered (not `remat gen layered`, which is Gagrani et al.'s random layered
DAG): a forward network where layer i reads layer i-1 and, with
probability P each (default 0.1), up to two earlier layers within 8 (skip
connections, as in ResNets and U-Nets), with random sizes (1-16 MiB),
costs (1-10) and workspaces (0 or 1-4 MiB on one layer in five); then a
loss and one backward node per layer by Checkmate's rule (b_i reads the
gradients of i's consumers, i's inputs and i itself).  2L + 2 nodes.
Deterministic for a given seed (default 1).  Used by bench/dynamic_scale.sh.

Only the Python standard library; run with /usr/bin/python3.
"""
import argparse
import json
import random
import sys

MIB = 1 << 20


class Builder:
    def __init__(self, name):
        self.name = name
        self.nodes = []
        self.ids = set()
        self.kind = {}
        self.mem = {}
        self.grad_rules = {}   # node -> [(input, [tensors the grad reads], cost)]
        self.consumers = {}
        self.params = []
        self.order = []

    def add(self, nid, kind, mem, inputs=(), cost=1.0, label=None):
        assert nid not in self.ids, nid
        self.ids.add(nid)
        node = {"id": nid, "kind": kind, "mem": int(mem)}
        if kind != "input":
            node["cost"] = cost
            node["inputs"] = list(inputs)
        if label:
            node["label"] = label
        self.nodes.append(node)
        self.kind[nid] = kind
        self.mem[nid] = int(mem)
        for i in inputs:
            self.consumers.setdefault(i, []).append(nid)
        return nid

    def param(self, nid, mem):
        self.params.append(nid)
        return self.add(nid, "input", mem, label="parameter")

    def data(self, nid, mem):
        return self.add(nid, "input", mem, label="data")

    def op(self, nid, mem, inputs, grads, cost=1.0, kind="forward", label=None):
        """grads: {input: [extra tensors its gradient reads]}; "@out" = this op."""
        self.add(nid, kind, mem, inputs, cost, label)
        self.order.append(nid)
        self.grad_rules[nid] = [(i, [nid if t == "@out" else t for t in ts], cost)
                                for i, ts in grads.items()]
        return nid

    def backward(self, loss):
        """Reverse mode from loss; returns nothing, adds nodes."""
        contrib = {}   # tensor -> [gradient contribution nodes]
        gof = {loss: None}
        for y in reversed(self.order):
            if y == loss:
                gy = None
            else:
                parts = contrib.get(y, [])
                if not parts:
                    continue
                if len(parts) == 1:
                    gy = parts[0]
                else:
                    gy = self.add("sum.g." + y, "backward", self.mem[y], parts,
                                  cost=1.0, label="grad sum")
            gof[y] = gy
            for (x, reads, cost) in self.grad_rules[y]:
                if self.kind[x] == "input" and x not in self.params:
                    continue
                ins = ([gy] if gy else []) + reads
                g = self.add("g.%s.%s" % (x, y), "backward", self.mem[x], ins,
                             cost=2.0 * cost, label="grad")
                contrib.setdefault(x, []).append(g)
        outs = []
        for p in self.params:
            parts = contrib.get(p, [])
            if not parts:
                continue
            g = parts[0] if len(parts) == 1 else self.add(
                "sum.g." + p, "backward", self.mem[p], parts, label="grad sum")
            outs.append(self.add("upd." + p, "op", self.mem[p], [p, g], cost=1.0,
                                 label="sgd update"))
        self.outputs = outs

    def dump(self):
        return json.dumps({"format": "remat-graph", "version": 1, "name": self.name,
                           "cost_unit": "unit", "nodes": self.nodes,
                           "outputs": self.outputs}, separators=(",", ":"))


F = 4  # bytes per float32


def ffn(layers, batch=8192, width=128):
    b = Builder("ffn%d" % layers)
    act = batch * width * F
    h = b.data("x", act)
    y = b.data("y", act)
    for i in range(1, layers + 1):
        w = b.param("W%d" % i, width * width * F)
        bias = b.param("b%d" % i, width * F)
        mm = b.op("mm%d" % i, act, [h, w], {h: [w], w: [h]}, label="matmul")
        ad = b.op("add%d" % i, act, [mm, bias], {mm: [], bias: []}, label="bias add")
        h = b.op("relu%d" % i, act, [ad], {ad: ["@out"]}, label="relu")
    diff = b.op("diff", act, [h, y], {h: []}, label="sub")
    sq = b.op("sq", act, [diff], {diff: [diff]}, label="square")
    loss = b.op("loss", F, [sq], {sq: ["@out"]}, kind="loss", label="mean")
    b.backward(loss)
    return b.dump()


def transformer(layers, batch=32, seq=256, d=512, heads=8, ff=2048, vocab=4096):
    b = Builder("transformer%d" % layers)
    act = batch * seq * d * F
    att = batch * heads * seq * seq * F
    hid = batch * seq * ff * F
    tok = b.data("tokens", batch * seq * 4)
    lab = b.data("labels", batch * seq * 4)
    emb = b.param("embed", vocab * d * F)
    pos = b.param("pos", seq * d * F)
    x = b.op("embed.lookup", act, [emb, tok], {emb: [tok]}, label="gather")
    x = b.op("embed.pos", act, [x, pos], {x: [], pos: []}, label="add")
    for l in range(layers):
        p = "L%d." % l
        wq, wk, wv, wo = (b.param(p + n, d * d * F) for n in ("Wq", "Wk", "Wv", "Wo"))
        w1, w2 = b.param(p + "W1", d * ff * F), b.param(p + "W2", ff * d * F)
        b1 = b.param(p + "b1", ff * F)
        g1, be1 = b.param(p + "ln1.g", d * F), b.param(p + "ln1.b", d * F)
        g2, be2 = b.param(p + "ln2.g", d * F), b.param(p + "ln2.b", d * F)
        q = b.op(p + "q", act, [x, wq], {x: [wq], wq: [x]}, cost=2, label="matmul")
        k = b.op(p + "k", act, [x, wk], {x: [wk], wk: [x]}, cost=2, label="matmul")
        v = b.op(p + "v", act, [x, wv], {x: [wv], wv: [x]}, cost=2, label="matmul")
        s = b.op(p + "scores", att, [q, k], {q: [k], k: [q]}, cost=2, label="batched matmul")
        pr = b.op(p + "softmax", att, [s], {s: ["@out"]}, label="softmax")
        c = b.op(p + "context", act, [pr, v], {pr: [v], v: [pr]}, cost=2,
                 label="batched matmul")
        o = b.op(p + "proj", act, [c, wo], {c: [wo], wo: [c]}, cost=2, label="matmul")
        r1 = b.op(p + "res1", act, [x, o], {x: [], o: []}, label="add")
        n1 = b.op(p + "ln1", act, [r1, g1, be1], {r1: [g1], g1: [r1], be1: []},
                  label="layer norm")
        h1 = b.op(p + "ff1", hid, [n1, w1], {n1: [w1], w1: [n1]}, cost=4, label="matmul")
        h1b = b.op(p + "ff1.bias", hid, [h1, b1], {h1: [], b1: []}, label="bias add")
        h1r = b.op(p + "ff1.relu", hid, [h1b], {h1b: ["@out"]}, label="relu")
        h2 = b.op(p + "ff2", act, [h1r, w2], {h1r: [w2], w2: [h1r]}, cost=4, label="matmul")
        r2 = b.op(p + "res2", act, [n1, h2], {n1: [], h2: []}, label="add")
        x = b.op(p + "ln2", act, [r2, g2, be2], {r2: [g2], g2: [r2], be2: []},
                 label="layer norm")
    wout = b.param("Wout", d * vocab * F)
    logits = b.op("logits", batch * seq * vocab * F, [x, wout], {x: [wout], wout: [x]},
                  cost=4, label="matmul")
    loss = b.op("loss", F, [logits, lab], {logits: [logits, lab]}, kind="loss",
                label="softmax cross-entropy")
    b.backward(loss)
    return b.dump()


def resnet(blocks, batch=32, ch=64, hw=32):
    b = Builder("resnet%d" % blocks)
    act = batch * ch * hw * hw * F
    x = b.data("image", act)
    lab = b.data("labels", batch * 4)
    for i in range(blocks):
        p = "B%d." % i
        w1, w2 = b.param(p + "W1", ch * ch * 9 * F), b.param(p + "W2", ch * ch * 9 * F)
        c1 = b.op(p + "conv1", act, [x, w1], {x: [w1], w1: [x]}, cost=4, label="conv")
        r1 = b.op(p + "relu1", act, [c1], {c1: ["@out"]}, label="relu")
        c2 = b.op(p + "conv2", act, [r1, w2], {r1: [w2], w2: [r1]}, cost=4, label="conv")
        a = b.op(p + "add", act, [c2, x], {c2: [], x: []}, label="add")
        x = b.op(p + "relu2", act, [a], {a: ["@out"]}, label="relu")
    wfc = b.param("Wfc", ch * 10 * F)
    pool = b.op("pool", batch * ch * F, [x], {x: []}, label="global pool")
    logits = b.op("fc", batch * 10 * F, [pool, wfc], {pool: [wfc], wfc: [pool]}, label="matmul")
    loss = b.op("loss", F, [logits, lab], {logits: [logits, lab]}, kind="loss",
                label="softmax cross-entropy")
    b.backward(loss)
    return b.dump()


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
    return json.dumps({"format": "remat-graph", "version": 1, "name": "layered%d" % n,
                       "cost_unit": "unit", "nodes": nodes, "outputs": ["b0"]},
                      separators=(",", ":"))


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("kind", choices=["ffn", "transformer", "resnet", "layered"])
    ap.add_argument("n", type=int, help="layers (blocks for resnet)")
    ap.add_argument("--skip", type=float, default=0.1, help="layered: skip probability")
    ap.add_argument("--seed", type=int, default=1, help="layered: random seed")
    a = ap.parse_args()
    if a.n < 1:
        ap.error("the number of layers must be at least 1")
    if a.kind == "layered":
        print(layered(a.n, a.skip, a.seed))
    else:
        print({"ffn": ffn, "transformer": transformer, "resnet": resnet}[a.kind](a.n))
    return 0


if __name__ == "__main__":
    sys.exit(main())
