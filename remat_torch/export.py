"""Export one training step of a PyTorch model as a remat-graph (FORMATS.md s.1).

    /usr/bin/python3 -m remat_torch export MODEL [--batch N] [--input-shape C,H,W]
                     [--measure] [-o OUT.json] [--name NAME] [--threads N]

(from the repository root; `python3 -m remat_torch.export ...` is the same.)

MODEL is a torchvision classification, segmentation or video model (resnet18,
vit_b_16, fcn_resnet50, r3d_18, ...), one of
the built-in extras (gpt2-small, unet, lstm64, tiny-encoder, tiny-gpt), or
FILE.py:FUNCTION, where
FUNCTION(batch) returns (model, inputs, loss_fn): inputs a tuple of tensors
passed to model(*inputs), loss_fn(output) -> scalar tensor.  Needs Debian's
python3-torch (scripts/bootstrap-torch.sh); nothing is downloaded (models get
random weights: the graph does not depend on them).

How the graph is built (one real forward + backward step on the CPU):

1. Forward nodes: every ATen operator the forward pass runs (seen through a
   TorchDispatchMode, so below autograd: convolution, addmm, relu_, view ...)
   whose inputs include an activation.  Operators that read only parameters
   (weight.t(), ...) belong to the parameters and are left out; factory
   operators (zeros, arange) are activations.  The model inputs are `input`
   nodes; the operator that produces the loss value is the `loss` node.
2. Memory: a node's `mem` is the byte size of the storage it allocates.  A
   view or an in-place operator allocates nothing: it becomes a node of size
   0, and every node that reads its result also reads the node that owns the
   storage, so the storage is counted once and stays resident as long as any
   view or version of it is needed.  An operator with several outputs in
   separate storages (native_batch_norm: output, mean, invstd) becomes one
   node per storage: the first carries the cost, the others cost 0 and read
   the first, so each can be freed on its own as PyTorch frees it.
3. Backward nodes: one per autograd node (grad_fn) reached from the loss,
   except AccumulateGrad and those on parameter-only paths.  Its `inputs`
   are the backward nodes whose gradients it receives, plus the forward
   nodes owning the tensors autograd saved for it (every `_saved_*` tensor
   and a custom Function's saved_tensors, identified through saved-tensor
   pack hooks at the moment they were saved), plus the loss node for the
   first one (the seed gradient).  `grad_of` is the forward node whose
   output carries that grad_fn.  `mem` is the byte size of the activation
   gradients it produces (gradients for parameters are left out; a gradient
   that is a view of the one it received costs 0 and keeps that one's
   owner alive, as for forward views).
4. Cost: estimated FLOPs by default (2 per multiply-add for convolution and
   matrix products, one per element for everything else, 0 for views); a
   backward node's cost is the FLOPs of the ATen operators it runs.
   Random operators (bernoulli_, native_dropout, ...) are marked
   recompute: false: without the generator's state their result cannot be
   computed again.  With
   --measure: CPU time in microseconds of the ATen operators each node
   runs (timed one by one, after one warm-up step; Python overhead left out).

With --joint the graph is instead the joint forward+backward graph of ATen
operators, which remat_torch can execute under any schedule (`python3 -m
remat_torch run`, `check`, and remat_torch.plan()); its parameter gradients
are nodes resident to the end of the step.  See remat_torch/joint.py.

Parameters, their gradients, buffers and optimizer state are not in the
graph: they are resident for the whole step whatever the schedule does, so a
budget covers activations, activation gradients and the batch; add the
"params_bytes" recorded in the file's "source" to get the whole footprint.
Nodes are written in execution order, which is topological: the no-remat
peak of the file is PyTorch's own order with every tensor freed at last use.
"""
import argparse
import inspect
import json
import os
import sys
import time

from remat_torch import no_torch_message, write_text
from remat_torch import storage_key as _storage

try:
    import torch
    import torch.nn as nn
    from torch.utils._python_dispatch import TorchDispatchMode
    from torch.utils._pytree import tree_flatten
except ImportError:  # main() says how to install it; the module still imports
    torch = nn = TorchDispatchMode = tree_flatten = None

EXPORTER_VERSION = 1
PROG = "remat_torch export"


# ---------------------------------------------------------------- helpers

def _numel(ts):
    return sum(t.numel() for t in ts)


def _prod(xs):
    p = 1
    for x in xs:
        p *= x
    return p


def op_flops(name, args, outs):
    """Estimated FLOPs of one ATen operator (see the module docstring)."""
    ta = [a for a in args if isinstance(a, torch.Tensor)]
    to = [o for o in outs if isinstance(o, torch.Tensor)]
    if name == "aten::convolution":
        x, w, bias = args[0], args[1], args[2]
        transposed = args[6] if len(args) > 6 else False
        base = x.numel() if transposed else to[0].numel()
        f = 2 * base * w.shape[1] * _prod(w.shape[2:])
        return f + (to[0].numel() if bias is not None else 0)
    if name == "aten::convolution_backward":
        go, x, w = args[0], args[1], args[2]
        transposed = args[7]
        mask = args[10]
        base = x.numel() if transposed else go.numel()
        f = 2 * base * w.shape[1] * _prod(w.shape[2:])
        return f * (int(mask[0]) + int(mask[1])) + go.numel() * int(mask[2])
    if name in ("aten::mm", "aten::addmm"):
        a, b = (args[0], args[1]) if name == "aten::mm" else (args[1], args[2])
        f = 2 * a.shape[0] * a.shape[1] * b.shape[1]
        return f + (a.shape[0] * b.shape[1] if name == "aten::addmm" else 0)
    if name in ("aten::bmm", "aten::baddbmm"):
        a, b = (args[0], args[1]) if name == "aten::bmm" else (args[1], args[2])
        f = 2 * a.shape[0] * a.shape[1] * a.shape[2] * b.shape[2]
        return f + (a.shape[0] * a.shape[1] * b.shape[2] if name == "aten::baddbmm" else 0)
    return max(_numel(to), _numel(ta))


def is_view(func, args, kwargs, outs):
    """Does the operator only alias its inputs (no new storage, no write)?"""
    if any(r.alias_info is not None and r.alias_info.is_write for r in func._schema.returns):
        return False
    ins = {_storage(a) for a in tree_flatten((args, kwargs))[0] if isinstance(a, torch.Tensor)}
    return all(_storage(o) is None or _storage(o) in ins
               for o in tree_flatten(outs)[0] if isinstance(o, torch.Tensor))


# Operators whose result depends on the random number generator: computing
# them again would give another result, so they are marked recompute: false.
RANDOM_OPS = {"bernoulli", "bernoulli_", "native_dropout", "rand", "rand_like", "randn",
              "randn_like", "randint", "randint_like", "randperm", "normal", "normal_",
              "uniform_", "exponential_", "geometric_", "cauchy_", "log_normal_",
              "multinomial", "random_", "rrelu_with_noise"}


class Node:
    __slots__ = ("id", "kind", "mem", "cost", "inputs", "grad_of", "label", "recompute")

    def __init__(self, nid, kind, mem, cost, inputs, label, grad_of=None):
        self.id, self.kind, self.mem, self.cost = nid, kind, mem, cost
        self.inputs, self.label, self.grad_of = inputs, label, grad_of
        self.recompute = True


# --------------------------------------------------------------- recorder

class Recorder:
    """State shared by the dispatch mode, the saved-tensor hooks and the
    autograd hooks during one training step."""

    def __init__(self, model, inputs, measure):
        self.measure = measure
        self.nodes = []            # forward nodes, execution order
        self.byid = {}
        self.keep = []             # strong refs: no address is reused
        self.value = {}            # id(tensor) -> value node id
        self.owner = {}            # storage key -> owning node id
        self.param_storages = set()
        self.tensor_of = {}        # id(tensor) -> tensor (to map grad_fn)
        self.gradfn_node = {}      # grad_fn -> forward node id
        self.packed = []           # pack handle -> (tensor, deps)
        self.unpacked = []         # handles unpacked by the last getattr
        self.module_stack = []
        self.in_backward = False
        self.bucket_flops = 0
        self.bucket_secs = 0.0
        self.k = 0
        self.n_const = 0
        for p in list(model.parameters()) + list(model.buffers()):
            st = _storage(p)
            if st:
                self.param_storages.add(st[0])
        self.input_ids = []
        for i, x in enumerate(inputs):
            nid = "input" if len(inputs) == 1 else "input%d" % i
            self._add(Node(nid, "input", self._new_bytes([x]), 0, [], "model input"))
            self._bind(x, nid, nid)
            self.input_ids.append(nid)

    def _add(self, n):
        self.nodes.append(n)
        self.byid[n.id] = n

    def _new_bytes(self, ts):
        seen, total = set(), 0
        for t in ts:
            st = _storage(t)
            if st and st[0] not in self.owner and st[0] not in seen:
                seen.add(st[0])
                total += st[1]
        return total

    def _bind(self, t, value_id, owner_id):
        st = _storage(t)
        if st and st[0] not in self.owner:
            self.owner[st[0]] = owner_id
        self.value[id(t)] = value_id
        self.keep.append(t)
        self.tensor_of[id(t)] = t

    def is_param(self, t):
        st = _storage(t)
        if st is None:
            return id(t) not in self.value
        return st[0] in self.param_storages and id(t) not in self.value

    def deps(self, t):
        """Nodes a reader of t depends on: its value node and its storage owner."""
        d = []
        v = self.value.get(id(t))
        if v is not None:
            d.append(v)
        st = _storage(t)
        if st and st[0] in self.owner:
            d.append(self.owner[st[0]])
        return list(dict.fromkeys(d))

    def ensure_known(self, t):
        """A tensor from outside the model that is not a parameter (a target,
        a constant) becomes an input node: resident from the start, like the
        batch."""
        if not self.deps(t):
            nid = "const%d" % self.n_const
            self.n_const += 1
            self._add(Node(nid, "input", self._new_bytes([t]), 0, [], "constant from outside the model"))
            self._bind(t, nid, nid)

    def map_grad_fn(self, t):
        gf = t.grad_fn
        v = self.value.get(id(t))
        if gf is not None and v is not None and gf not in self.gradfn_node:
            n = self.byid[v]
            # Secondary outputs share the primary's grad_fn.
            self.gradfn_node[gf] = n.id.split("#")[0]

    # Called from the dispatch mode for each forward operator.
    def forward_op(self, func, args, kwargs, outs, seconds):
        flat_in = [a for a in tree_flatten((args, kwargs))[0] if isinstance(a, torch.Tensor)]
        flat_out = [o for o in tree_flatten(outs)[0] if isinstance(o, torch.Tensor)]
        if not flat_out:
            return
        for a in flat_in:
            self.map_grad_fn(a)
        acts = [a for a in flat_in if not self.is_param(a)]
        for a in acts:
            self.ensure_known(a)
        if flat_in and not acts:
            # Reads only parameters: part of the parameters, left out.
            for o in flat_out:
                st = _storage(o)
                if st:
                    self.param_storages.add(st[0])
            return
        name = func._schema.name
        short = name.split("::")[-1]
        inputs = list(dict.fromkeys([d for a in acts for d in self.deps(a)]))
        if self.measure:
            cost = seconds * 1e6
        else:
            cost = 0 if is_view(func, args, kwargs, outs) else op_flops(name, args, outs)
        self.k += 1
        base = "f%d.%s" % (self.k, short)
        label = (self.module_stack[-1] + " " if self.module_stack and self.module_stack[-1] else "") + name
        # Outputs in new storages, in order; the first is the primary node.
        new = []
        seen = set()
        for o in flat_out:
            st = _storage(o)
            if st and st[0] not in self.owner and st[0] not in seen:
                seen.add(st[0])
                new.append((o, st))
        primary_mem = new[0][1][1] if new else 0
        self._add(Node(base, "forward", primary_mem, cost, inputs, label))
        self.byid[base].recompute = short not in RANDOM_OPS
        owners = {}
        for i, (o, st) in enumerate(new):
            nid = base if i == 0 else "%s#%d" % (base, i)
            if i > 0:
                self._add(Node(nid, "forward", st[1], 0, [base], label))
            owners[st[0]] = nid
            self.owner[st[0]] = nid
        for o in flat_out:
            st = _storage(o)
            vid = owners.get(st[0], base) if st else base
            self._bind(o, vid, self.owner.get(st[0], vid) if st else vid)

    # Saved-tensor hooks.
    def pack(self, t):
        self.map_grad_fn(t)
        if self.is_param(t):
            deps = []
        else:
            self.ensure_known(t)
            deps = self.deps(t)
        self.packed.append((t, deps))
        return len(self.packed) - 1

    def unpack(self, h):
        self.unpacked.append(h)
        return self.packed[h][0]


class _Mode(TorchDispatchMode or object):
    def __init__(self, rec):
        super().__init__()
        self.rec = rec

    def __torch_dispatch__(self, func, types, args=(), kwargs=None):
        kwargs = kwargs or {}
        rec = self.rec
        t0 = time.perf_counter()
        out = func(*args, **kwargs)
        t1 = time.perf_counter()
        if isinstance(out, (bool, int, float)) and str(func._schema.returns[0].type) == "Tensor":
            # torch 1.13 hands back a saved "wrapped number" (a Python
            # scalar made a tensor) as a plain number; autograd needs a tensor.
            src = [a for a in args if isinstance(a, torch.Tensor)]
            out = torch.tensor(out, dtype=src[0].dtype if src else None)
        if rec.in_backward:
            outs = out if isinstance(out, (tuple, list)) else (out,)
            rec.bucket_secs += t1 - t0
            if not is_view(func, args, kwargs, outs):
                rec.bucket_flops += op_flops(func._schema.name, args, outs)
            for o in tree_flatten(outs)[0]:
                if isinstance(o, torch.Tensor):
                    rec.keep.append(o)
        else:
            rec.forward_op(func, args, kwargs, out if isinstance(out, (tuple, list)) else (out,), t1 - t0)
        return out


# ------------------------------------------------------------- the export

def _module_hooks(model, rec):
    handles = []
    for name, m in model.named_modules():
        def pre(mod, inp, name=name):
            rec.module_stack.append(name)

        def post(mod, inp, out):
            rec.module_stack.pop()
        handles.append(m.register_forward_pre_hook(pre))
        handles.append(m.register_forward_hook(post))
    return handles


def _saved_handles(rec, fn):
    """Pack handles of every tensor autograd saved for fn."""
    hs = []
    names = [a for a in dir(fn) if a.startswith("_saved_")]
    if hasattr(fn, "saved_tensors"):
        names.append("saved_tensors")
    for a in names:
        rec.unpacked.clear()
        try:
            getattr(fn, a)
        except Exception:  # noqa: BLE001 - a few attributes refuse access
            continue
        hs.extend(rec.unpacked)
    rec.unpacked.clear()
    return hs


def export_step(model, inputs, loss_fn, measure=False, name="model", keep_graph=False):
    """Run one training step and return (graph dict, debug dict).

    debug holds what the tests compare with PyTorch: 'owner' (storage key ->
    node id), 'gradfn' (grad_fn -> backward node id), 'loss' (the loss
    tensor; with keep_graph the autograd graph is retained) and 'params'
    (storage keys of parameters and parameter-derived tensors).
    """
    model.train()
    inputs = tuple(inputs)
    if measure:  # warm-up: allocator and kernels
        out = model(*inputs)
        loss_fn(out).backward()
        model.zero_grad(set_to_none=True)
    rec = Recorder(model, inputs, measure)
    handles = _module_hooks(model, rec)
    mode = _Mode(rec)
    try:
        with torch.autograd.graph.saved_tensors_hooks(rec.pack, rec.unpack):
            with mode:
                out = model(*inputs)
                loss = loss_fn(out)
    finally:
        for h in handles:
            h.remove()
    rec.map_grad_fn(loss)
    for t in list(rec.tensor_of.values()):
        rec.map_grad_fn(t)
    loss_id = rec.value[id(loss)]
    rec.byid[loss_id].kind = "loss"

    # Walk the autograd graph from the loss (before backward frees it).
    order, seen, stack = [], set(), [loss.grad_fn]
    while stack:
        fn = stack.pop()
        if fn is None or fn in seen:
            continue
        seen.add(fn)
        order.append(fn)
        for nxt, _ in fn.next_functions:
            stack.append(nxt)
    included = {fn for fn in order if fn in rec.gradfn_node
                and rec.byid[rec.gradfn_node[fn]].kind in ("forward", "loss")}
    if loss.grad_fn not in included:
        raise RuntimeError("the loss's grad_fn %s is not mapped to an operator" % loss.grad_fn)
    lost = [fn for fn in order if fn not in included and type(fn).__name__ != "AccumulateGrad"
            and any(nxt in included for nxt, _ in fn.next_functions)]
    if lost:
        raise RuntimeError("autograd nodes between activations that map to no operator: %s"
                           % [type(fn).__name__ for fn in lost[:5]])
    saved = {fn: _saved_handles(rec, fn) for fn in included}

    # Backward: hooks record execution order, gradient storages and costs.
    events = []

    def hook_for(fn):
        def hook(grad_inputs, grad_outputs):
            events.append((fn, grad_inputs, grad_outputs, rec.bucket_flops, rec.bucket_secs))
            for g in list(grad_inputs) + list(grad_outputs):
                if isinstance(g, torch.Tensor):
                    rec.keep.append(g)
            rec.bucket_flops = 0
            rec.bucket_secs = 0.0
        return hook
    for fn in order:
        fn.register_hook(hook_for(fn))
    rec.in_backward = True
    rec.bucket_flops = 0
    rec.bucket_secs = 0.0
    try:
        with mode:
            loss.backward(retain_graph=keep_graph)
    finally:
        rec.in_backward = False

    bw_nodes, bw_id, grad_owner = [], {}, {}
    receives = {}
    for fn in order:
        for nxt, _ in fn.next_functions:
            if nxt in included and fn in included:
                receives.setdefault(nxt, []).append(fn)
    j = 0
    for fn, gin, gout, flops, secs in events:
        if fn not in included:
            continue
        j += 1
        fw = rec.byid[rec.gradfn_node[fn]]
        nid = "b%d.%s" % (j, type(fn).__name__)
        bw_id[fn] = nid
        inputs_ = []
        # Gradients received (and the owners of gradients they are views of).
        for src in receives.get(fn, []):
            if src in bw_id:
                inputs_.append(bw_id[src])
        for g in gout:
            if isinstance(g, torch.Tensor):
                st = _storage(g)
                if st and st[0] in grad_owner:
                    inputs_.append(grad_owner[st[0]])
        if fn is loss.grad_fn:
            inputs_.append(loss_id)  # the seed gradient
        for h in saved[fn]:
            inputs_.extend(rec.packed[h][1])
        # Activation gradients produced: new storages only.
        mem, mine = 0, set()
        for g, (nxt, _) in zip(gin, fn.next_functions):
            if not isinstance(g, torch.Tensor) or nxt not in included:
                continue
            st = _storage(g)
            if st is None:
                continue
            if st[0] not in grad_owner and st[0] not in rec.owner and st[0] not in mine:
                mine.add(st[0])
                mem += st[1]
                grad_owner[st[0]] = nid
        cost = secs * 1e6 if measure else flops
        label = "%s (%s)" % (type(fn).__name__, fw.label)
        bw_nodes.append(Node(nid, "backward", mem, cost, list(dict.fromkeys(inputs_)), label,
                             fw.id))
    missing = [fn for fn in included if fn not in bw_id]
    if missing:
        raise RuntimeError("autograd nodes that never ran: %s" % missing[:3])

    nodes = rec.nodes + bw_nodes
    used = {i for n in nodes for i in n.inputs}
    # Empty results nobody reads (aten::empty scratch of batch norm) change
    # nothing but the file's length.
    nodes = [n for n in nodes if n.id in used or n.mem or n.kind != "forward"]
    outputs = [n.id for n in bw_nodes if n.id not in used]
    params_bytes = sum(p.numel() * p.element_size() for p in model.parameters())
    buffers_bytes = sum(b.numel() * b.element_size() for b in model.buffers())
    graph = {
        "format": "remat-graph",
        "version": 1,
        "name": name,
        "cost_unit": "us" if measure else "flop",
        # Held outside the graph for the whole step: parameters, buffers and
        # (at most) a gradient per parameter, which this graph leaves out.
        "fixed_bytes": 2 * params_bytes + buffers_bytes,
        "source": {
            "exporter": "remat_torch.export v%d" % EXPORTER_VERSION,
            "torch": torch.__version__,
            "cost": "measured CPU time of the ATen operators of each node" if measure else
                    "estimated: 2 per multiply-add in convolutions and matrix products, "
                    "1 per element otherwise, 0 for views",
            "params_bytes": params_bytes,
            "buffers_bytes": buffers_bytes,
            "excluded": "parameters, parameter gradients, buffers, optimizer state",
        },
        "nodes": nodes,
        "outputs": outputs,
    }
    debug = {"owner": dict(rec.owner), "gradfn": bw_id, "loss": loss,
             "params": set(rec.param_storages), "inputs": rec.input_ids,
             "loss_id": loss_id}
    return graph, debug


def write_graph(graph, path):
    """Compact JSON, one node per line, written atomically (gzip for .gz)."""
    head = {k: v for k, v in graph.items() if k not in ("nodes", "outputs")}
    lines = []
    for n in graph["nodes"]:
        d = {"id": n.id, "kind": n.kind, "mem": int(n.mem)}
        if n.kind != "input":
            c = float(n.cost)
            d["cost"] = int(c) if c == int(c) and abs(c) < 2 ** 53 else round(c, 3)
        if n.inputs:
            d["inputs"] = n.inputs
        if n.grad_of:
            d["grad_of"] = n.grad_of
        if not n.recompute:
            d["recompute"] = False
        if n.label:
            d["label"] = n.label
        lines.append(json.dumps(d, separators=(",", ":")))
    text = json.dumps(head, separators=(",", ":"))[:-1]
    text += ',"nodes":[\n' + ",\n".join(lines) + "\n]"
    text += ',"outputs":' + json.dumps(graph["outputs"], separators=(",", ":")) + "}\n"
    write_text(text, path)


# ----------------------------------------------------------------- models

class GPT2Style(nn.Module if nn else object):
    """Decoder-only transformer in the GPT-2-small shape, from torch.nn
    modules: token + position embeddings, pre-LayerNorm blocks with causal
    self-attention (nn.TransformerEncoderLayer + a causal mask), GELU MLP,
    final LayerNorm, untied LM head."""

    def __init__(self, vocab=50257, seq=1024, d=768, heads=12, layers=12, device=None):
        super().__init__()
        self.tok = nn.Embedding(vocab, d, device=device)
        self.pos = nn.Embedding(seq, d, device=device)
        layer = nn.TransformerEncoderLayer(d, heads, 4 * d, dropout=0.0, activation="gelu",
                                           batch_first=True, norm_first=True, device=device)
        self.blocks = nn.TransformerEncoder(layer, layers, enable_nested_tensor=False)
        self.ln = nn.LayerNorm(d, device=device)
        self.head = nn.Linear(d, vocab, bias=False, device=device)
        self.seq = seq
        self._causal = {"is_causal": True} if "is_causal" in \
            inspect.signature(nn.TransformerEncoder.forward).parameters else {}

    def forward(self, idx):
        t = idx.shape[1]
        pos = torch.arange(t, device=idx.device)
        mask = torch.triu(torch.full((t, t), float("-inf"), device=idx.device), diagonal=1)
        h = self.tok(idx) + self.pos(pos)
        # torch 2.x compares a mask with the causal one (a read of its
        # values, which a trace cannot make) unless told it is causal.
        h = self.blocks(h, mask=mask, **self._causal)
        return self.head(self.ln(h))


class RMSNorm(nn.Module if nn else object):
    def __init__(self, d, eps=1e-5, device=None):
        super().__init__()
        self.weight = nn.Parameter(torch.ones(d, device=device))
        self.eps = eps

    def forward(self, x):
        return x * torch.rsqrt(x.pow(2).mean(-1, keepdim=True) + self.eps) * self.weight


class LlamaBlock(nn.Module if nn else object):
    """Pre-RMSNorm block: grouped-query causal attention with rotary
    position embeddings, then a SwiGLU feed-forward."""

    def __init__(self, d, heads, kv_heads, ffn, device=None):
        super().__init__()
        self.heads, self.kv_heads, self.hd = heads, kv_heads, d // heads
        self.norm1, self.norm2 = RMSNorm(d, device=device), RMSNorm(d, device=device)
        self.q = nn.Linear(d, d, bias=False, device=device)
        self.k = nn.Linear(d, kv_heads * self.hd, bias=False, device=device)
        self.v = nn.Linear(d, kv_heads * self.hd, bias=False, device=device)
        self.o = nn.Linear(d, d, bias=False, device=device)
        self.gate = nn.Linear(d, ffn, bias=False, device=device)
        self.up = nn.Linear(d, ffn, bias=False, device=device)
        self.down = nn.Linear(ffn, d, bias=False, device=device)

    @staticmethod
    def rotate(x, cos, sin):
        a, b = x.chunk(2, dim=-1)
        return x * cos + torch.cat((-b, a), dim=-1) * sin

    def forward(self, x, cos, sin, mask):
        bsz, t, d = x.shape
        h = self.norm1(x)
        q = self.q(h).view(bsz, t, self.heads, self.hd).transpose(1, 2)
        k = self.k(h).view(bsz, t, self.kv_heads, self.hd).transpose(1, 2)
        v = self.v(h).view(bsz, t, self.kv_heads, self.hd).transpose(1, 2)
        q, k = self.rotate(q, cos, sin), self.rotate(k, cos, sin)
        if self.kv_heads != self.heads:     # each key/value head serves heads/kv_heads queries
            r = self.heads // self.kv_heads
            k = k[:, :, None].expand(bsz, self.kv_heads, r, t, self.hd).reshape(
                bsz, self.heads, t, self.hd)
            v = v[:, :, None].expand(bsz, self.kv_heads, r, t, self.hd).reshape(
                bsz, self.heads, t, self.hd)
        att = (q @ k.transpose(-2, -1)) * self.hd ** -0.5 + mask
        y = torch.softmax(att.float(), dim=-1).to(q.dtype) @ v
        x = x + self.o(y.transpose(1, 2).reshape(bsz, t, d))
        h = self.norm2(x)
        return x + self.down(nn.functional.silu(self.gate(h)) * self.up(h))


class Llama(nn.Module if nn else object):
    """A Llama-style decoder (Touvron et al. 2023) written from the
    architecture's description, random weights: token embedding, blocks
    of RMSNorm, rotary attention (grouped-query when kv_heads < heads) and
    SwiGLU, a final RMSNorm and an untied output layer."""

    def __init__(self, vocab=32000, seq=2048, d=4096, layers=32, heads=32, kv_heads=32,
                 ffn=11008, device=None):
        super().__init__()
        self.tok = nn.Embedding(vocab, d, device=device)
        self.blocks = nn.ModuleList(LlamaBlock(d, heads, kv_heads, ffn, device=device)
                                    for _ in range(layers))
        self.norm = RMSNorm(d, device=device)
        self.head = nn.Linear(d, vocab, bias=False, device=device)
        hd = d // heads
        inv = 1.0 / (10000 ** (torch.arange(0, hd, 2, device=device).float() / hd))
        ang = torch.outer(torch.arange(seq, device=device).float(), inv)
        ang = torch.cat((ang, ang), dim=-1)
        self.register_buffer("cos", ang.cos(), persistent=False)
        self.register_buffer("sin", ang.sin(), persistent=False)

    def forward(self, idx):
        t = idx.shape[1]
        h = self.tok(idx)
        cos, sin = self.cos[:t].to(h.dtype), self.sin[:t].to(h.dtype)
        mask = torch.triu(torch.full((t, t), float("-inf"), device=idx.device,
                                     dtype=h.dtype), diagonal=1)
        for b in self.blocks:
            h = b(h, cos, sin, mask)
        return self.head(self.norm(h))


# Published shapes (no weights: nothing is downloaded).  GPT-2 (Radford et
# al. 2019): layers, d_model, heads; Llama: TinyLlama-1.1B's shape for
# llama-1b (grouped-query, 4 key/value heads), Llama-2-7B's for llama-7b.
LLMS = {
    "gpt2-medium": ("gpt2", dict(layers=24, d=1024, heads=16)),
    "gpt2-large": ("gpt2", dict(layers=36, d=1280, heads=20)),
    "gpt2-xl": ("gpt2", dict(layers=48, d=1600, heads=25)),
    "llama-1b": ("llama", dict(layers=22, d=2048, heads=32, kv_heads=4, ffn=5632)),
    "llama-7b": ("llama", dict(layers=32, d=4096, heads=32, kv_heads=32, ffn=11008)),
}


class UNet(nn.Module if nn else object):
    """The U-Net of Ronneberger et al. 2015 (padded convolutions, batch norm):
    four down levels, long skip connections by concatenation."""

    def __init__(self, cin=3, classes=2, base=64, depth=4):
        super().__init__()

        def block(a, b):
            return nn.Sequential(nn.Conv2d(a, b, 3, padding=1, bias=False), nn.BatchNorm2d(b),
                                 nn.ReLU(inplace=True), nn.Conv2d(b, b, 3, padding=1, bias=False),
                                 nn.BatchNorm2d(b), nn.ReLU(inplace=True))
        ch = [base * 2 ** i for i in range(depth + 1)]
        self.down = nn.ModuleList([block(cin if i == 0 else ch[i - 1], ch[i]) for i in range(depth)])
        self.pool = nn.MaxPool2d(2)
        self.mid = block(ch[depth - 1], ch[depth])
        self.up = nn.ModuleList([nn.ConvTranspose2d(ch[i + 1], ch[i], 2, stride=2)
                                 for i in reversed(range(depth))])
        self.dec = nn.ModuleList([block(2 * ch[i], ch[i]) for i in reversed(range(depth))])
        self.head = nn.Conv2d(base, classes, 1)

    def forward(self, x):
        skips = []
        for d in self.down:
            x = d(x)
            skips.append(x)
            x = self.pool(x)
        x = self.mid(x)
        for up, dec in zip(self.up, self.dec):
            x = up(x)
            x = dec(torch.cat([x, skips.pop()], 1))
        return self.head(x)


class LSTMUnrolled(nn.Module if nn else object):
    """Chen et al. 2016, s.5.3: a four-layer LSTM with 1024 hidden units
    unrolled over 64 steps, 50-dimensional inputs, softmax over 5000
    classes at every step; built from nn.LSTMCell so each step is explicit."""

    def __init__(self, din=50, hidden=1024, layers=4, classes=5000):
        super().__init__()
        self.cells = nn.ModuleList([nn.LSTMCell(din if i == 0 else hidden, hidden)
                                    for i in range(layers)])
        self.out = nn.Linear(hidden, classes)
        self.hidden = hidden

    def forward(self, x):  # x: (steps, batch, din)
        b = x.shape[1]
        state = [(torch.zeros(b, self.hidden), torch.zeros(b, self.hidden)) for _ in self.cells]
        logits = []
        for t in range(x.shape[0]):
            h = x[t]
            for i, cell in enumerate(self.cells):
                state[i] = cell(h, state[i])
                h = state[i][0]
            logits.append(self.out(h))
        return torch.stack(logits)


class TinyEncoder(nn.Module if nn else object):
    """A 2-layer Transformer encoder (post-LayerNorm, ReLU, no dropout) over
    a sequence of feature vectors, mean-pooled into a 10-class head."""

    def __init__(self, d=64, heads=4, ff=128, layers=2, classes=10):
        super().__init__()
        layer = nn.TransformerEncoderLayer(d, heads, ff, dropout=0.0, batch_first=True)
        self.enc = nn.TransformerEncoder(layer, layers, enable_nested_tensor=False)
        self.head = nn.Linear(d, classes)

    def forward(self, x):  # x: (batch, seq, d)
        return self.head(self.enc(x).mean(1))


def _ce(classes):
    def loss_fn(out, target):
        return nn.functional.cross_entropy(out.reshape(-1, classes), target.reshape(-1))
    return loss_fn


EXTRAS = ("gpt2-small", "unet", "lstm64", "tiny-encoder", "tiny-gpt") + tuple(LLMS)


def build(model_name, batch, input_shape, device=None):
    """(model, inputs, loss_fn, description) for a named model.  device:
    where the language models of LLMS are built ("meta" for --fake: no
    memory); the others are built on the CPU (see to_meta())."""
    g = torch.Generator().manual_seed(0)
    if model_name in LLMS:
        family, kw = LLMS[model_name]
        seq = input_shape[0] if input_shape else (1024 if family == "gpt2" else 2048)
        vocab = 50257 if family == "gpt2" else 32000
        model = GPT2Style(vocab=vocab, seq=seq, device=device, **kw) if family == "gpt2" \
            else Llama(vocab=vocab, seq=seq, device=device, **kw)
        idx = torch.randint(0, vocab, (batch, seq), generator=g).to(device or "cpu")
        tgt = torch.randint(0, vocab, (batch, seq), generator=g).to(device or "cpu")
        return model, (idx,), lambda out: _ce(vocab)(out, tgt), \
            {"model": "%s-style decoder (%s), published shape, random weights"
             % ("GPT-2" if family == "gpt2" else "Llama",
                ", ".join("%s %d" % kv for kv in kw.items())),
             "batch": batch, "input_shape": [seq]}
    if ":" in model_name:
        path, fn = model_name.rsplit(":", 1)
        if not os.path.isfile(path):
            raise SystemExit("%s: %s: no such file (MODEL is a torchvision model name, "
                             "%s or FILE.py:FUNCTION)" % (PROG, path, ", ".join(EXTRAS)))
        import importlib.util
        spec = importlib.util.spec_from_file_location("user_model", path)
        if spec is None or spec.loader is None:
            raise SystemExit("%s: %s: not a Python file" % (PROG, path))
        mod = importlib.util.module_from_spec(spec)
        spec.loader.exec_module(mod)
        if not callable(getattr(mod, fn, None)):
            raise SystemExit("%s: %s has no function '%s'" % (PROG, path, fn))
        model, inputs, loss_fn = getattr(mod, fn)(batch)
        return model, tuple(inputs), loss_fn, {"model": model_name, "batch": batch}
    if model_name == "gpt2-small":
        seq = input_shape[0] if input_shape else 1024
        model = GPT2Style(seq=seq)
        idx = torch.randint(0, 50257, (batch, seq), generator=g)
        tgt = torch.randint(0, 50257, (batch, seq), generator=g)
        return model, (idx,), lambda out: _ce(50257)(out, tgt), \
            {"model": "GPT-2-small-style decoder (12 layers, d_model 768, 12 heads)",
             "batch": batch, "input_shape": [seq]}
    if model_name == "tiny-gpt":
        seq = input_shape[0] if input_shape else 32
        model = GPT2Style(vocab=256, seq=seq, d=64, heads=4, layers=2)
        idx = torch.randint(0, 256, (batch, seq), generator=g)
        tgt = torch.randint(0, 256, (batch, seq), generator=g)
        return model, (idx,), lambda out: _ce(256)(out, tgt), \
            {"model": "GPT-style decoder (2 layers, d_model 64, 4 heads, vocabulary 256)",
             "batch": batch, "input_shape": [seq]}
    if model_name == "tiny-encoder":
        shape = input_shape or [32, 64]
        if len(shape) != 2:
            raise SystemExit("%s: tiny-encoder takes --input-shape SEQ,64" % PROG)
        model = TinyEncoder(d=shape[1])
        x = torch.randn(batch, *shape, generator=g)
        tgt = torch.randint(0, 10, (batch,), generator=g)
        return model, (x,), lambda out: nn.functional.cross_entropy(out, tgt), \
            {"model": "Transformer encoder (2 layers, d_model %d, 4 heads, feed-forward 128)"
             % shape[1], "batch": batch, "input_shape": shape}
    if model_name == "unet":
        shape = input_shape or [3, 256, 256]
        model = UNet(cin=shape[0])
        x = torch.randn(batch, *shape, generator=g)
        tgt = torch.randint(0, 2, (batch, shape[1], shape[2]), generator=g)
        return model, (x,), lambda out: nn.functional.cross_entropy(out, tgt), \
            {"model": "U-Net (Ronneberger et al. 2015, depth 4, 64 base channels, batch norm)",
             "batch": batch, "input_shape": shape}
    if model_name == "lstm64":
        shape = input_shape or [64, 50]
        model = LSTMUnrolled(din=shape[1])
        x = torch.randn(shape[0], batch, shape[1], generator=g)
        tgt = torch.randint(0, 5000, (shape[0], batch), generator=g)
        return model, (x,), lambda out: _ce(5000)(out, tgt), \
            {"model": "LSTM, 4 layers x 1024 hidden, unrolled over %d steps, 5000 classes" % shape[0],
             "batch": batch, "input_shape": shape}
    return _torchvision(model_name, batch, input_shape, g)


# The auxiliary classifiers' losses are added at GoogLeNet's weight (0.3,
# Szegedy et al. 2015, s.5); segmentation's auxiliary head at torchvision's
# reference training script's (0.5).
AUX_WEIGHT = {"classification": 0.3, "segmentation": 0.5}
# Families by torchvision.models submodule: the default input shape (without
# the batch) and the number of classes of the models' default heads.
FAMILIES = (("classification", None, [3, 224, 224], 1000),
            ("segmentation", "segmentation", [3, 224, 224], 21),
            ("video", "video", [3, 16, 112, 112], 400))
REFUSED_FAMILIES = {
    "detection": "a detection model's forward depends on the data (proposals, "
                 "non-maximum suppression) and needs targets in training",
    "optical_flow": "an optical-flow model takes two images and iterates",
    "quantization": "a quantized model is not trained by backpropagation"}


def _torchvision(model_name, batch, input_shape, g):
    """A torchvision model by name: classification (GoogLeNet's and
    Inception's auxiliary outputs in the loss), segmentation (a class per
    pixel) or video; random weights, nothing downloaded."""
    import torchvision
    import torchvision.models as M
    listed = getattr(M, "list_models", None)

    def names(sub):
        mod = getattr(M, sub) if sub else M
        if listed is not None:
            return listed(module=mod)
        return [k for k, v in vars(mod).items() if callable(v) and k[0].islower()
                and not k.startswith("get_")]
    for fam, sub in (("detection", "detection"), ("optical_flow", "optical_flow"),
                     ("quantization", "quantization")):
        if model_name in names(sub):
            raise SystemExit("%s: %s: not exported by name: %s; write a FILE.py:FUNCTION "
                             "(see --help) that builds it and its loss" %
                             (PROG, model_name, REFUSED_FAMILIES[fam]))
    for fam, sub, shape0, classes in FAMILIES:
        if model_name in names(sub):
            break
    else:
        raise SystemExit("%s: unknown model '%s' (a torchvision model name, %s or "
                         "FILE.py:FUNCTION)" % (PROG, model_name, ", ".join(EXTRAS)))
    ctor = getattr(getattr(M, sub) if sub else M, model_name)
    kw = {"weights": None}
    if fam == "segmentation":
        kw["weights_backbone"] = None
    if model_name in ("googlenet", "inception_v3"):
        kw["init_weights"] = True
        if model_name == "inception_v3":
            shape0 = [3, 299, 299]
    if model_name.startswith("mvit") or model_name == "s3d":
        shape0 = [3, 16, 224, 224]      # their published input (MViT's is fixed)
    model = ctor(**kw)
    shape = input_shape or shape0
    x = torch.randn(batch, *shape, generator=g)
    if fam == "segmentation":
        tgt = torch.randint(0, classes, (batch,) + tuple(shape[1:]), generator=g)
    else:
        tgt = torch.randint(0, classes, (batch,), generator=g)
    aux_w = AUX_WEIGHT.get(fam, 0.0)
    ce = nn.functional.cross_entropy

    def loss_fn(out):
        if isinstance(out, dict):         # segmentation: {"out", "aux"}
            loss = ce(out["out"], tgt)
            if out.get("aux") is not None:
                loss = loss + aux_w * ce(out["aux"], tgt)
            return loss
        if hasattr(out, "logits"):        # GoogLeNetOutputs, InceptionOutputs
            loss = ce(out.logits, tgt)
            for k in out._fields:
                v = getattr(out, k)
                if k.startswith("aux") and v is not None:
                    loss = loss + aux_w * ce(v, tgt)
            return loss
        return ce(out, tgt)
    desc = {"model": "torchvision.models.%s%s (weights=None)" %
            (sub + "." if sub else "", model_name),
            "torchvision": torchvision.__version__, "batch": batch, "input_shape": shape}
    if fam != "classification" or model_name in ("googlenet", "inception_v3"):
        desc["loss"] = ("cross entropy%s" % (" per pixel" if fam == "segmentation" else "")) + \
            (", auxiliary outputs' weighted %g" % aux_w if fam != "video" else "")
    return model, (x,), loss_fn, desc


# What a model's own forward or loss raises on an input it cannot take (a
# shape check, torch._assert on the image size, a batch norm given one value
# per channel): the exporters say it in one line.
MODEL_ERRORS = (AssertionError, IndexError, NotImplementedError, RuntimeError, TypeError,
                ValueError)


def _shape(text):
    try:
        dims = [int(x) for x in text.split(",")]
    except ValueError:
        dims = []
    if not dims or min(dims) < 1:
        raise argparse.ArgumentTypeError("expected positive integers separated by commas, "
                                         "such as 3,224,224 (got '%s')" % text)
    return dims


def main(argv=None, prog=PROG):
    """The command line; prog names it in messages."""
    if torch is None:
        print(no_torch_message(), file=sys.stderr)
        return 1
    ap = argparse.ArgumentParser(prog=prog, description=__doc__.split("\n\n")[0] + "\n\n"
                                 + __doc__.split("\n\n")[3],
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("model", help="a torchvision model name (resnet18, vit_b_16, ...), "
                    "%s, or FILE.py:FUNCTION (see above)" % ", ".join(EXTRAS))
    ap.add_argument("--batch", type=int, default=1, help="batch size (default 1)")
    ap.add_argument("--input-shape", type=_shape,
                    help="comma-separated, without the batch (e.g. 3,224,224)")
    ap.add_argument("--measure", action="store_true",
                    help="costs are measured CPU time (us) instead of estimated FLOPs")
    ap.add_argument("-o", "--output", default="-",
                    help="the graph file, written atomically (default: stdout)")
    ap.add_argument("--name", help="the graph's name (default MODEL-train-bBATCH)")
    ap.add_argument("--threads", type=int, default=None,
                    help="torch CPU threads (default: every core; 1 with --measure, "
                         "for stable timings)")
    ap.add_argument("--joint", action="store_true",
                    help="the joint forward+backward graph of ATen operators, executable "
                    "node by node (remat_torch/joint.py), and OUT.pt beside OUT.json")
    ap.add_argument("--fake", action="store_true",
                    help="trace on the meta device: no activation is allocated, no kernel "
                    "runs (models larger than this machine; implies --joint)")
    ap.add_argument("--dtype", choices=("fp32", "bf16", "fp16"), default="fp32",
                    help="the parameters' and inputs' floating-point type (default fp32)")
    ap.add_argument("-q", "--quiet", action="store_true",
                    help="print nothing but errors on stderr (without it: progress when "
                         "stderr is a terminal, and a summary line)")
    a = ap.parse_args(argv)
    if a.fake and a.measure:
        ap.error("--measure times the operators on real tensors; it cannot be combined "
                 "with --fake")
    a.joint = a.joint or a.fake
    torch.set_num_threads(a.threads if a.threads else
                          1 if a.measure else (os.cpu_count() or 1))
    torch.manual_seed(0)
    if a.batch < 1:
        ap.error("--batch must be at least 1")
    try:
        model, inputs, loss_fn, desc = build(a.model, a.batch, a.input_shape,
                                             device="meta" if a.fake else None)
    except RuntimeError as e:
        print("%s: %s: %s" % (prog, a.model, str(e).split("\n")[0]), file=sys.stderr)
        return 1
    if a.fake:
        model, inputs, loss_fn = to_meta(model, inputs, loss_fn)
        desc["fake"] = "traced on the meta device: sizes and FLOPs, nothing measured"
    if a.dtype != "fp32":
        dt = {"bf16": torch.bfloat16, "fp16": torch.float16}[a.dtype]
        model = model.to(dt)
        inputs = tuple(x.to(dt) if x.is_floating_point() else x for x in inputs)
        desc["dtype"] = a.dtype
    stem = os.path.splitext(os.path.basename(a.model.rsplit(":", 1)[0]))[0] if ":" in a.model \
        else a.model
    name = a.name or "%s-train-b%d" % (stem, a.batch)
    if a.joint:
        return _main_joint(a, prog, model, inputs, loss_fn, desc, name)
    if not a.quiet and sys.stderr.isatty():
        print("%s: running one training step of %s%s" % (prog, a.model, " (twice: --measure "
              "warms up first)" if a.measure else ""), file=sys.stderr)
    try:
        graph, _ = export_step(model, inputs, loss_fn, measure=a.measure, name=name)
    except MODEL_ERRORS as e:
        # The model's own error (an input too small for its kernels, a
        # shape mismatch): one line, as with --joint.
        print("%s: %s: %s" % (prog, a.model, str(e).strip().split("\n")[0]), file=sys.stderr)
        return 1
    graph["source"].update(desc)
    try:
        write_graph(graph, a.output)
    except OSError as e:
        print("%s: cannot write %s: %s" % (prog, a.output, e.strerror or e), file=sys.stderr)
        return 4    # as remat's own commands: the output cannot be written
    if a.quiet:
        return 0
    nf = sum(1 for n in graph["nodes"] if n.kind in ("forward", "loss"))
    nb = sum(1 for n in graph["nodes"] if n.kind == "backward")
    print("%s: %s: %d nodes (%d forward, %d backward), %.1f MiB of activations"
          % (prog, name, len(graph["nodes"]), nf, nb,
             sum(n.mem for n in graph["nodes"] if n.kind != "backward") / 2 ** 20),
          file=sys.stderr)
    return 0


def to_meta(model, inputs, loss_fn):
    """The model, the inputs and the tensors the loss function closes over
    (its targets), on the meta device (a model already there stays)."""
    model = model.to("meta")
    inputs = tuple(x.to("meta") for x in inputs)
    for cell in getattr(loss_fn, "__closure__", None) or ():
        if isinstance(cell.cell_contents, torch.Tensor):
            cell.cell_contents = cell.cell_contents.to("meta")
    return model, inputs, loss_fn


def _main_joint(a, prog, model, inputs, loss_fn, desc, name):
    from remat_torch import joint as JT
    show = not a.quiet and sys.stderr.isatty()
    t0 = time.time()

    def say(msg):
        if show:
            print("%s: [%5.1f s] %s" % (prog, time.time() - t0, msg), file=sys.stderr)
    try:
        J = JT.build_joint(model, inputs, lambda out: loss_fn(out), measure=a.measure,
                           progress=say)
    except JT.JointError as e:
        print("%s: %s: %s" % (prog, a.model, e), file=sys.stderr)
        return 1
    except MODEL_ERRORS as e:
        # The model's own error (a batch norm given one value per channel,
        # a shape mismatch), or, with --fake, an operator torch 1.13's meta
        # backend has no kernel for (convolution_backward): one line.
        msg = str(e).strip().split("\n")[0]
        if a.fake and "convolution_backward_overrideable" in msg:
            msg = ("torch %s's meta device has no kernel for convolution_backward (torch 2 "
                   "has one); export this model without --fake" % torch.__version__)
        print("%s: %s: %s%s" % (prog, a.model, "--fake: " if a.fake else "", msg),
              file=sys.stderr)
        return 1
    graph = JT.to_graph(J, name.replace("-train-", "-joint-"))
    graph["source"].update(desc)
    try:
        JT.write_graph(graph, a.output)
        if a.output != "-" and not a.fake:
            JT.save_tensors(J, JT.bind_model(J, model, inputs), JT.tensors_path(a.output))
    except OSError as e:
        print("%s: cannot write %s: %s" % (prog, a.output, e.strerror or e), file=sys.stderr)
        return 4    # as remat's own commands: the output cannot be written
    if a.quiet:
        return 0
    kinds = [n.kind for n in J.nodes]
    print("%s: %s: %d nodes (%d forward, %d backward), %.1f MiB of parameter gradients%s"
          % (prog, graph["name"], len(J.nodes), kinds.count("forward") + kinds.count("loss"),
             kinds.count("backward"), J.source["param_grads_bytes"] / 2 ** 20,
             "" if a.output == "-" or a.fake else "; tensors in " + JT.tensors_path(a.output)),
          file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main(prog="python3 -m remat_torch.export"))
