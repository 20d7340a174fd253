"""The joint forward+backward graph of a training step, as a remat-graph
that can be executed node by node (issue 13).

    /usr/bin/python3 -m remat_torch export MODEL --joint -o G.json [--measure]

writes G.json, a remat-graph (FORMATS.md s.1) whose nodes also carry the
ATen operators that compute them (the field "call", which remat's loader
ignores), and G.pt beside it with the parameters, buffers and batch it was
traced with, so that `python3 -m remat_torch run G.json SCHEDULE` can
execute any schedule of it.  In Python, build_joint() returns the same
program without files, bound to the live model.

How the joint graph is made
---------------------------
1. functorch's make_fx traces one training step, the function
   (params, buffers, batch) -> (loss, torch.autograd.grad(loss, params)),
   on real tensors: every ATen operator of the forward, of the loss and of
   the backward that autograd runs becomes an FX node.  The trace is traced
   again through functionalization (as AOTAutograd does), which rewrites
   in-place operators (relu_, add_, hardtanh_ ...) into out-of-place ones:
   an in-place update cannot be replayed under an arbitrary schedule (a
   reader of the old value scheduled after it, or a recomputation of the
   update, would see another version of the storage).
2. Nodes.  Every operator that allocates storage is a node; its `mem` is
   the bytes of the storages it allocates, measured on the CPU (or CUDA)
   tensors of a run.  The batch (model inputs, loss targets, tensor
   constants of the trace) are `input` nodes.  Parameters and buffers are
   not nodes: they are resident whatever the schedule does; the file
   records their bytes (source.params_bytes, source.buffers_bytes).
3. Views allocate nothing and are not nodes: a node that reads a view reads
   the node owning the view's storage, and the executor derives the view
   from that owner each time the reader runs.  This is export.py's model (a
   view is a size-0 node read alongside its storage owner) with the size-0
   node folded into its readers.  Views of parameters are not nodes either.
4. In-place operators left after functionalization: one writing into a
   fresh tensor that nothing else reads (dropout's bernoulli_ filling an
   empty_like) is fused into the node that allocated that tensor; one
   updating a parameter or a buffer (batch norm's running statistics, the
   copy_ into num_batches_tracked) is a side effect applied on the node's
   first computation in a step (a recomputation writes into a scratch copy,
   and every reader sees the buffer as it was when the step began); any
   other is refused, naming the node and the operator.  Likewise an
   out-of-place operator with an in-place form whose first argument is a
   fresh tensor (zeros, empty, clone: FRESH_OPS) that nothing else reads
   runs in place on it, in the node that allocated it, as eager's in-place
   form does (autograd's backward of x[idx]: new_zeros, then index_put_;
   functionalized, the zeros and index_put's result were both held).
5. An operator with several outputs (native_batch_norm: output, mean,
   invstd; convolution_backward: three gradients) is one node holding the
   outputs something reads (`mem`: their bytes); outputs nobody reads are
   dropped as soon as it has run (`dropped`: their bytes).  Because the
   simulator frees a node as a whole, an output still read after the last
   read of the node's largest output (batch norm's mean and invstd, read by
   its backward; a weight gradient, kept to the end) is taken over by a node
   ID#i, so the large output is not kept alive as long as the small one:
   moved (aten.detach, the same storage: the allocator holds it once, the
   simulator counts it in both nodes while both are resident) when nothing
   else holds its storage, copied (aten.clone) otherwise.  An operator that
   eager runs as one kernel although it has a composite decomposition
   (silu_backward, mish_backward) stays one node.
6. Parameter gradients are outputs of the graph, resident from the moment
   they are computed to the end of the step (issue 17): a budget covers the
   batch, the activations, the activation gradients and the parameter
   gradients; the device footprint is the budget plus source.params_bytes
   and source.buffers_bytes.  The input nodes are outputs as well: the
   caller holds the batch through the step, so its bytes never come back.
7. Kinds: the node computing the loss is `loss`; the nodes computed from
   it (the backward) are `backward`; the others are `forward`.  Nodes are
   written in the trace's order, which is topological: the no-remat peak
   is that of PyTorch's own order with every value freed after its last use.
8. Random operators (bernoulli_, native_dropout ...) are replayable: each
   random node runs under its own seed, derived from one seed per step and
   the node's position, so a recomputation draws the same mask.
9. Workspace: what a node holds while it runs beyond the outputs it
   keeps.  Each node's run is measured on the allocator (remat_torch/
   meter.py): `workspace` is the most bytes the allocator held inside the
   node's operators above what it held before, less `mem`, and at least the
   bytes of the outputs it drops (`dropped`, written when it differs).  The
   simulator's peak then bounds the allocator's, not only the tensors the
   executor holds.
10. Cost: estimated FLOPs as in export.py (2 per multiply-add in
   convolutions and matrix products, 1 per element otherwise; a copy-out
   node costs its elements), or with --measure the median time in
   microseconds of each node run alone (CPU, or CUDA synchronized).
"""
import copy
import dataclasses
import functools
import json
import math
import operator
import os
import sys
import threading
import time

from remat_torch import read_text, replacing, storage_key, write_text

try:
    import torch
    from torch.utils._pytree import tree_flatten
except ImportError:  # the commands say how to install it
    torch = tree_flatten = None

JOINT_FORMAT = "remat-torch-joint"
JOINT_VERSION = 1

# Operators whose result depends on the random number generator.
# The in-place fills trace as their functional forms (empty_like(h).uniform_()
# as aten.uniform), so both are listed (an outside review found uniform,
# exponential and normal_functional recomputed with fresh noise).
RANDOM_OPS = {"bernoulli", "bernoulli_", "native_dropout", "rand", "rand_like", "randn",
              "randn_like", "randint", "randint_like", "randperm", "normal", "normal_",
              "normal_functional", "uniform", "uniform_", "exponential", "exponential_",
              "geometric", "geometric_", "cauchy", "cauchy_", "log_normal", "log_normal_",
              "multinomial", "random", "random_", "rrelu_with_noise", "rrelu_with_noise_",
              "poisson", "binomial", "_standard_gamma", "_sample_dirichlet", "_fused_dropout",
              "native_dropout_", "dropout", "feature_dropout", "alpha_dropout",
              "feature_alpha_dropout"}

# Operators that only re-wrap their argument: under no_grad their input
# stands for them.
ELIDED = {"aten.detach.default", "aten.alias.default", "aten.lift_fresh.default"}


class JointError(Exception):
    """A model or graph that cannot be exported or replayed; the message
    names the node and the operator."""


# ------------------------------------------------------------ helpers

def value_storages(v):
    """{storage ptr: nbytes} of the tensors in a node value."""
    out = {}
    for t in (v if isinstance(v, (tuple, list)) else (v,)):
        if isinstance(t, torch.Tensor):
            k = storage_key(t)
            if k:
                out[k[0]] = k[1]
    return out


def resolve_op(name):
    """The OpOverload called `name` ('aten.add.Tensor'), or None."""
    parts = name.split(".")
    if len(parts) != 3:
        return None
    try:
        return getattr(getattr(getattr(torch.ops, parts[0]), parts[1]), parts[2])
    except (AttributeError, RuntimeError):
        return None


# Operators whose kernel returns what their backward reads only with
# autograd's grad mode on: oneDNN's LSTM layer (torch 2 on the CPU) makes
# its workspace then, and an undefined tensor under no_grad, where the
# executors run.  They run with grad mode on, on detached arguments
# (nothing recorded, nothing held by a graph).
GRAD_MODE_OPS = frozenset(("aten.mkldnn_rnn_layer.default",))


def in_grad_mode(op):
    """op, called with grad mode on and its tensor arguments detached (in
    lists too)."""
    def plain(a):
        if isinstance(a, torch.Tensor):
            return a.detach()
        if isinstance(a, (list, tuple)):
            return type(a)(plain(b) for b in a)
        return a

    def call(*args, **kwargs):
        with torch.enable_grad():
            return op(*[plain(a) for a in args], **{k: plain(a) for k, a in kwargs.items()})
    return call


def callable_of(name, op):
    """What the executors call for the operator `name` (GRAD_MODE_OPS)."""
    return in_grad_mode(op) if name in GRAD_MODE_OPS else op


# Operators that update arguments their schema does not mark as written
# (torch 1.13): batch norm's running statistics, in training mode.  op ->
# (index of the training flag, indices written).
HIDDEN_WRITES = {"aten.native_batch_norm.default": (5, (3, 4)),
                 "aten.cudnn_batch_norm.default": (5, (3, 4)),
                 "aten.miopen_batch_norm.default": (5, (3, 4))}

_written_cache = {}


def written_args(op, args=None):
    """[(index, name)] of the arguments the operator writes to.  Given the
    call's arguments (FX's or the graph's), a batch norm in eval mode
    (training False) writes nothing: a frozen batch norm's statistics are
    only read (taken as written, they were copied at the step's start and
    the copies held, as if the step changed them)."""
    if op is None:      # GRAD_OUTPUT_OP
        return []
    w = _written_cache.get(op)
    if w is None:
        sch = op._schema.arguments
        flag, hidden = HIDDEN_WRITES.get(str(op), (None, ()))
        schema_only = [(i, a.name) for i, a in enumerate(sch)
                       if a.alias_info is not None and a.alias_info.is_write]
        every = sorted(set(schema_only) | {(i, sch[i].name) for i in hidden})
        w = _written_cache[op] = (every, schema_only, flag)
    every, schema_only, flag = w
    if flag is not None and args is not None and len(args) > flag and args[flag] is False:
        return schema_only
    return every


# Operators whose result is a fresh tensor: an operator updating it that
# functionalization made out of place (index_put for index_put_) is run in
# place on it when nothing else reads it (_in_place_on_fresh).
FRESH_OPS = frozenset(("new_zeros", "zeros", "zeros_like", "new_empty", "empty_like", "empty",
                       "new_empty_strided", "empty_strided", "new_full", "full", "full_like",
                       "new_ones", "ones", "ones_like", "clone"))


@functools.lru_cache(maxsize=None)
def in_place_variant(name):
    """'aten.X_.O' for the functional operator 'aten.X.O' when it exists with
    the same arguments (aten.index_put.default: aten.index_put_.default),
    else None."""
    parts = name.split(".")
    if len(parts) != 3 or parts[1].endswith("_"):
        return None
    ip_name = "%s.%s_.%s" % tuple(parts)
    op, ip = resolve_op(name), resolve_op(ip_name)
    if op is None or ip is None:
        return None
    names = lambda o: [a.name for a in o._schema.arguments]  # noqa: E731
    if names(op) != names(ip) or not written_args(ip)[:1] == [(0, "self")]:
        return None
    return ip_name


def encode_const(x, where):
    """JSON for a non-tensor argument of an operator."""
    if x is None or isinstance(x, (bool, int, str)):
        return x
    if isinstance(x, float):
        return x if math.isfinite(x) else {"float": repr(x)}
    if isinstance(x, (list, tuple)):
        return [encode_const(y, where) for y in x]
    if isinstance(x, torch.dtype):
        return {"dtype": str(x).replace("torch.", "")}
    if isinstance(x, torch.device):
        return {"device": str(x)}
    if isinstance(x, torch.layout):
        return {"layout": str(x).replace("torch.", "")}
    if isinstance(x, torch.memory_format):
        return {"memory_format": str(x).replace("torch.", "")}
    raise JointError("%s: an argument of type %s cannot be written to the graph"
                     % (where, type(x).__name__))


def decode_const(x):
    if isinstance(x, list):
        return [decode_const(y) for y in x]
    if isinstance(x, dict):
        if "float" in x:
            return float(x["float"])
        if "dtype" in x:
            return getattr(torch, x["dtype"])
        if "device" in x:
            return torch.device(x["device"])
        if "layout" in x:
            return getattr(torch, x["layout"])
        if "memory_format" in x:
            return getattr(torch, x["memory_format"])
    return x


def ref_nodes(r, out):
    """Append the node ids a reference reads (its storage owners) to out."""
    if isinstance(r, dict):
        if "node" in r:
            out.append(r["node"])
        elif "view" in r:
            ref_nodes(r["args"], out)
            ref_nodes(list(r.get("kwargs", {}).values()), out)
    elif isinstance(r, list):
        for a in r:
            ref_nodes(a, out)
    return out


def _dtype_name(t):
    return str(t.dtype).replace("torch.", "")


# ------------------------------------------------------------- tracing

# Models traced on the meta device (fake=True): id(model) -> (parameters,
# buffers) as meta tensors of the same shapes, strides and dtypes; and the
# device the graph's operators will run on (a trace makes no tensor
# constant then: its value would be unknown).
_TWINS = {}
_DEVICE_FOR_META = [None]


def model_tensors(model):
    """({name: parameter}, {name: buffer}) the exporter reads: the model's,
    or their meta twins while meta_twin(model) is active."""
    t = _TWINS.get(id(model))
    if t is not None:
        return t
    return dict(model.named_parameters()), dict(model.named_buffers())


def _meta_like(t):
    return torch.empty_strided(tuple(t.shape), tuple(t.stride()), dtype=t.dtype,
                               device="meta").requires_grad_(t.requires_grad)


class meta_twin:
    """While active, the exporter traces `model` on meta tensors: no
    activation is allocated and no kernel runs (a model that does not fit
    without a plan can be planned); the graph's operators are written for
    `device`, where they will run."""

    def __init__(self, model, device):
        self.model, self.device = model, torch.device(device)

    def __enter__(self):
        pd = {n: _meta_like(p) for n, p in self.model.named_parameters()}
        bd = {n: _meta_like(b) for n, b in self.model.named_buffers()}
        _TWINS[id(self.model)] = (pd, bd)
        self._saved = _DEVICE_FOR_META[0]
        _DEVICE_FOR_META[0] = self.device
        return self

    def __exit__(self, *exc):
        _TWINS.pop(id(self.model), None)
        _DEVICE_FOR_META[0] = self._saved
        return False


def _graph_len_now():
    from torch.utils._python_dispatch import _get_current_dispatch_mode
    mode = _get_current_dispatch_mode()
    tracer = getattr(mode, "tracer", None)
    return len(tracer.graph.nodes) if tracer is not None else None


# An operator with a kernel of its own for the device and a
# CompositeImplicitAutograd one too (silu_backward, mish_backward) runs as one
# kernel in eager PyTorch, but make_fx and functionalization both take the
# composite: silu_backward became seven nodes (sigmoid, a tensor of ones,
# sub, three muls, an add), each with an output of the input's size, and the
# usual loop of EfficientNet-B0 held 0.14% more than eager.  The trace keeps
# such an operator whole when its schema is functional (no mutation, no
# alias): make_fx records it as it is, and the replay through functionalize
# calls a stand-in operator (namespace remat_whole, the same schema, no
# composite kernel), renamed back afterwards.
_WHOLE_LIB = None
_STAND_INS = {}


@functools.lru_cache(maxsize=None)
def _kept_whole(op):
    """Whether eager PyTorch runs op as one kernel although it has a
    composite decomposition, and the trace may keep it whole (asked of the
    dispatcher once per operator: every traced call asks)."""
    if not isinstance(op, torch._ops.OpOverload):
        return False
    name = op.name()
    DK = torch._C.DispatchKey
    try:
        if not torch._C._dispatch_has_kernel_for_dispatch_key(name, DK.CompositeImplicitAutograd):
            return False
        if not any(torch._C._dispatch_has_kernel_for_dispatch_key(name, k)
                   for k in (DK.CPU, DK.CUDA)):
            return False
    except RuntimeError:
        return False
    sch = op._schema
    return all(a.alias_info is None for a in list(sch.arguments) + list(sch.returns))


def _stand_in(op):
    """The remat_whole:: operator standing in for op during functionalization."""
    global _WHOLE_LIB
    if op not in _STAND_INS:
        if _WHOLE_LIB is None:
            _WHOLE_LIB = torch.library.Library("remat_whole", "DEF")
        base = op._schema.name.split("::", 1)[1]
        name = base if op._overloadname == "default" else base + "_" + op._overloadname
        _WHOLE_LIB.define(name + "(" + str(op._schema).split("(", 1)[1])
        _WHOLE_LIB.impl(name, lambda *a, **k: op(*a, **k), "CompositeExplicitAutograd")
        stand_in = getattr(torch.ops.remat_whole, name).default

        def below_autograd(*a, **k):
            # the meta device (export --fake) has no autograd fallthrough
            guards = [torch._C._AutoDispatchBelowAutograd()]   # held for the call
            try:
                return stand_in(*a, **k)
            finally:
                guards.clear()
        _WHOLE_LIB.impl(name, below_autograd, "AutogradMeta")
        _STAND_INS[op] = stand_in
    return _STAND_INS[op]


# Operators whose output's shape depends on the values of their input.
_DATA_SHAPED = frozenset(("nonzero", "nonzero_numpy", "argwhere", "masked_select", "unique",
                          "_unique", "_unique2", "unique_dim", "unique_consecutive",
                          "repeat_interleave", "_local_scalar_dense"))


def _from_placeholder(n):
    """Whether FX node n is computed from a placeholder (an input,
    parameter or buffer of the trace), not from constants alone."""
    seen, stack = set(), [n]
    while stack:
        m = stack.pop()
        if m.op == "placeholder":
            return True
        for d in m.all_input_nodes:
            if d not in seen:
                seen.add(d)
                stack.append(d)
    return False


def _data_shaped(n):
    """What the FX node computes, when the shape of its output depends on
    tensor values (nonzero, masked_select, indexing with a boolean mask);
    else None."""
    if n.op != "call_function":
        return None
    name = str(getattr(n.target, "__name__", n.target))
    base = name.split(".")[0]
    if base in _DATA_SHAPED:
        if base == "repeat_interleave":
            # The repeats: a tensor argument (the first of the .Tensor
            # overload, the second of .self_Tensor).  Made from the trace's
            # inputs (a batch of counts), the shape depends on its values;
            # made from constants (a number of repeats traces to
            # full(3).expand(n)), it is fixed.
            reps = [a for a in n.args[:2] if isinstance(a, torch.fx.Node)]
            reps = reps[:1] if name.endswith(".Tensor") else reps[1:]
            if not any(_from_placeholder(a) for a in reps):
                return None
        return "aten.%s" % base
    if base == "index" and len(n.args) > 1:
        for ix in n.args[1] or ():
            v = ix.meta.get("val", ix.meta.get("tensor_meta")) if isinstance(ix, torch.fx.Node) \
                else None
            if getattr(v, "dtype", None) in (torch.bool, torch.uint8):
                return "an index with a boolean mask (x[mask])"
    return None


# While a model is traced: a wrapped module inside it (remat_torch.wrap)
# then runs its model directly, so that the outer plan covers it.
TRACING = [0]


def _refuse_untraceable(e):
    """What the trace cannot hold, refused in the user's terms rather than
    PyTorch's internal error (an outside review found both): complex
    tensors (torch.fft, stft, a complex scalar), a torch.Generator of the
    model's own."""
    msg = str(e)
    if "complex" in msg.lower() and ("slice_scatter" in msg or "_conj" in msg or
                                     "complex dtype" in msg or "type 'complex'" in msg):
        raise JointError("the model computes with complex numbers (torch.fft, torch.stft, a "
                         "complex scalar), which remat_torch cannot trace (PyTorch: %s); keep "
                         "that part outside what is planned" % msg.splitlines()[0]) from None
    if "Checkpointing is not compatible with .grad()" in msg:
        raise JointError("the model uses torch.utils.checkpoint in its reentrant form (PyTorch "
                         "1.13's default), which cannot be traced for a plan; pass "
                         "use_reentrant=False (the plan then decides what is recomputed), or "
                         "leave the checkpoint out: remat plans the recomputation") from None
    if "_C.Generator" in msg:
        raise JointError("the model draws from a torch.Generator of its own, which "
                         "remat_torch cannot replay (it replays the global generator's "
                         "state); draw from the global generator (torch.manual_seed) "
                         "instead") from None


def _refuse_param_write(e):
    """A parameter written in place while the model runs (autograd refuses
    it on the leaves a trace passes): refused, said in the user's terms."""
    _refuse_untraceable(e)
    if "leaf Variable that requires grad is being used in an in-place" in str(e):
        raise JointError("the model writes into one of its parameters in place while it runs "
                         "(nn.Embedding(max_norm=...), weight.data.clamp_()); a plan cannot "
                         "replay that: change the parameters outside the forward (under "
                         "torch.no_grad(), before the call)") from None


def functional_call(model, state, args, kwargs=None):
    """torch.nn.utils.stateless.functional_call, and recurrent layers
    (nn.LSTM, nn.GRU, nn.RNN) read the tensors given: their forward reads
    the list _flat_weights, which holds the module's own parameters, not
    the ones functional_call swaps in.  A wrapped module inside runs its
    model directly (TRACING)."""
    call = getattr(getattr(torch, "func", None), "functional_call", None)
    if call is None:       # torch 1.13 (torch 2 deprecates this one)
        from torch.nn.utils.stateless import functional_call as call
    swapped = []
    TRACING[0] += 1
    try:
        for prefix, m in model.named_modules():
            names = getattr(m, "_flat_weights_names", None)
            if isinstance(m, torch.nn.RNNBase) and names is not None:
                key = (prefix + ".") if prefix else ""
                flat = m.__dict__.get("_flat_weights")
                # torch 2 also keeps weak references to them, made anew when
                # functional_call sets a weight (left pointing at the traced
                # tensors): both put back as they were.
                swapped.append((m, {k: m.__dict__[k] for k in RNN_FLAT if k in m.__dict__}))
                m.__dict__["_flat_weights"] = [state.get(key + n, w) for n, w in
                                               zip(names, flat or [None] * len(names))]
        before = dict(state)
        moved = []

        def look(mod, a, out):
            # Inside the call, what each name reads now: another tensor when
            # the forward assigned one (self.ema = 0.9 * self.ema + ...),
            # which the call's end would drop.
            for key, t in before.items():
                owner, _, leaf = key.rpartition(".")
                try:
                    now = getattr(model.get_submodule(owner) if owner else model, leaf)
                except AttributeError:
                    continue
                if now is not t:
                    moved.append(key)
            return out
        hook = model.register_forward_hook(look)
        try:
            out = call(model, state, args, kwargs)
        finally:
            hook.remove()
        if moved:
            raise JointError("the model's forward assigns a new tensor to its %s '%s' "
                             "(self.%s = ...); a plan cannot carry the new value to the "
                             "next call: update it in place (self.%s.mul_(...).add_(...), "
                             "or self.%s.copy_(...))" % (
                                 "buffer" if moved[0] not in dict(model.named_parameters())
                                 else "parameter", moved[0], moved[0].rpartition(".")[2],
                                 moved[0].rpartition(".")[2], moved[0].rpartition(".")[2]))
        return out
    finally:
        TRACING[0] -= 1
        for m, kept in swapped:
            for k in RNN_FLAT:
                if k in kept:
                    m.__dict__[k] = kept[k]
                else:
                    m.__dict__.pop(k, None)


RNN_FLAT = ("_flat_weights", "_flat_weight_refs")


class _NoHostReads:
    """While the user's step is traced, reading a tensor's values into
    Python (.tolist(), .numpy(), numpy.asarray) is refused: no operator of
    the trace records it, so the trace would hold the first batch's values
    for every later batch (an outside review: variable lengths read with
    .tolist() gave the first call's loss and gradients).  .item() and
    bool() are refused by the tracer itself.  Only in the tracing thread:
    torch.Tensor's methods are patched while any thread traces (counted,
    so that overlapping traces put the originals back last), and refuse
    only where a trace runs."""
    METHODS = ("tolist", "numpy")
    _lock = threading.Lock()
    _active = [0, {}]           # traces running, the original methods
    _here = threading.local()

    def __enter__(self):
        cls = _NoHostReads
        with cls._lock:
            if cls._active[0] == 0:
                cls._active[1] = {k: torch.Tensor.__dict__.get(k) for k in cls.METHODS}
                for k in cls.METHODS:
                    setattr(torch.Tensor, k, cls._guard(k, getattr(torch.Tensor, k)))
            cls._active[0] += 1
        cls._here.depth = getattr(cls._here, "depth", 0) + 1
        return self

    def __exit__(self, *exc):
        cls = _NoHostReads
        cls._here.depth -= 1
        with cls._lock:
            cls._active[0] -= 1
            if cls._active[0] == 0:
                for k, v in cls._active[1].items():
                    if v is None:
                        delattr(torch.Tensor, k)
                    else:
                        setattr(torch.Tensor, k, v)
        return False

    @staticmethod
    def _guard(name, original):
        def read(self, *a, **k):
            if getattr(_NoHostReads._here, "depth", 0) > 0:
                raise JointError("the model reads a tensor's values into Python while it runs "
                                 "(.%s()), which no operator of the trace records, so one "
                                 "trace cannot stand for every batch (later batches would get "
                                 "the first one's values); compute with tensor operators, or "
                                 "keep that part outside what is planned" % name)
            return original(self, *a, **k)
        return read


class _NoSavedTensorHooks:
    """While the user's step is traced, saved-tensor hooks are not installed:
    torch.utils.checkpoint(use_reentrant=False) and autograd.graph.save_on_cpu
    become plain calls (the values and gradients are the same; the plan
    decides what is kept and what is recomputed).  Installed, their unpack
    runs the checkpointed function again in the backward's trace, outside
    the parameters the trace swaps in."""

    def __enter__(self):
        a = torch._C._autograd
        self.saved = (getattr(a, "_push_saved_tensors_default_hooks", None),
                      getattr(a, "_pop_saved_tensors_default_hooks", None))
        if None not in self.saved:
            a._push_saved_tensors_default_hooks = lambda pack, unpack: None
            a._pop_saved_tensors_default_hooks = lambda: None
        return self

    def __exit__(self, *exc):
        if None not in self.saved:
            a = torch._C._autograd
            a._push_saved_tensors_default_hooks, a._pop_saved_tensors_default_hooks = self.saved
        return False


class _KeepWhole:
    """While active, make_fx records the operators _kept_whole() accepts
    as they are instead of their composite decomposition."""

    def __enter__(self):
        self._orig = orig = torch._ops.OpOverload.decompose

        def decompose(op, *args, **kwargs):
            if _kept_whole(op):
                return NotImplemented
            return orig(op, *args, **kwargs)
        torch._ops.OpOverload.decompose = decompose
        return self

    def __exit__(self, *exc):
        torch._ops.OpOverload.decompose = self._orig
        return False


# torch 2.4 made autocast's state per device type (is_autocast_enabled(dev),
# get_autocast_dtype(dev)) and deprecated the per-device functions torch
# 1.13 has (is_autocast_cpu_enabled ...), which warn there.
AMP_DEVICES = ("cuda", "cpu")


def _amp_get(dev):
    """(enabled, dtype) of autocast on device type dev."""
    if hasattr(torch, "get_autocast_dtype"):
        return torch.is_autocast_enabled(dev), torch.get_autocast_dtype(dev)
    if dev == "cuda":
        return torch.is_autocast_enabled(), torch.get_autocast_gpu_dtype()
    return torch.is_autocast_cpu_enabled(), torch.get_autocast_cpu_dtype()


def _amp_set(dev, enabled):
    if hasattr(torch, "get_autocast_dtype"):
        torch.set_autocast_enabled(dev, enabled)
    elif dev == "cuda":
        torch.set_autocast_enabled(enabled)
    else:
        torch.set_autocast_cpu_enabled(enabled)


class no_autocast:
    """Autocast off on every device type while active (the replay of a
    traced program: its casts are operators of the graph already)."""

    def __enter__(self):
        self._saved = [_amp_get(d)[0] for d in AMP_DEVICES]
        for d in AMP_DEVICES:
            _amp_set(d, False)
        return self

    def __exit__(self, *exc):
        for d, on in zip(AMP_DEVICES, self._saved):
            _amp_set(d, on)
        return False


def autocast_state():
    """What autocast does now, as a hashable value (part of a plan's
    signature: a trace under autocast has its casts in it)."""
    return tuple(x for d in AMP_DEVICES for x in _amp_get(d))


def trace_fx(model, inputs, loss_fn, targets=(), call=None, in_grad=None):
    """Trace one training step with make_fx, then again through
    functionalization.

    Returns (gm, boundary, pnames, bnames): gm takes (params, buffers,
    inputs, targets) and returns (loss, grads); boundary is the name of its
    first backward node (None if unknown); pnames and bnames name the
    parameters and buffers in placeholder order.  The model, its buffers and
    the global random state are left as they were.

    With loss_fn None (a vjp graph, wrap()): the model is called as
    model(*args, **kwargs) with (args, kwargs) = call(inputs), targets are
    the gradients of its differentiable tensor outputs, and gm returns
    (outputs, parameter gradients, gradients of the inputs in_grad marks).
    Autocast, if on, applies to the forward as it does in eager PyTorch;
    the backward is traced with it off (as loss.backward() outside the
    autocast block runs it).
    """
    from torch.fx.experimental.proxy_tensor import make_fx
    functionalize = getattr(getattr(torch, "func", None), "functionalize", None)
    if functionalize is None:       # torch 1.13 (torch 2 has the functorch package as a shim)
        from functorch.experimental import functionalize

    pdict, bdict = model_tensors(model)
    pnames = list(pdict)
    trained = [pdict[n].requires_grad for n in pnames]
    bnames = list(bdict)
    palias, balias = tensor_aliases(model, "_parameters"), tensor_aliases(model, "_buffers")
    in_grad = list(in_grad or [False] * len(inputs))
    X = [x.detach().requires_grad_(g) for x, g in zip(inputs, in_grad)]
    T = [t.detach() if isinstance(t, torch.Tensor) else t for t in targets]
    mark = {}

    def state_of(params, buffers):
        # A tensor registered under several names (tied weights, a module
        # registered twice) is passed under every name: each read of it is
        # a read of the one traced tensor, and its gradient sums them all.
        state = {}
        for names, alias, values in ((pnames, palias, params), (bnames, balias, buffers)):
            for nm, v in zip(names, values):
                for a in [nm] + alias.get(nm, []):
                    state[a] = v
        return state

    def step(params, buffers, xs, ts):
        state = state_of(params, buffers)
        if loss_fn is None:
            args, kwargs = call(xs)
            out = functional_call(model, state, tuple(args), kwargs)
            outs = [o for o in tree_flatten(out)[0] if isinstance(o, torch.Tensor)]
            diff = [o for o in outs if o.requires_grad]
            if len(diff) != len(ts):
                raise JointError("the model has %d differentiable outputs in the trace, %d "
                                 "before it" % (len(diff), len(ts)))
            mark.setdefault("n", _graph_len_now())
            wrt = [p for p, t in zip(params, trained) if t] + \
                [x for x, g in zip(xs, in_grad) if g]
            with no_autocast():
                grads = iter(torch.autograd.grad(diff, wrt, grad_outputs=list(ts),
                                                 allow_unused=True) if diff and wrt else ())
            pg = [next(grads) if t else None for t in trained]
            return outs, pg, [next(grads) for g in in_grad if g]
        out = functional_call(model, state, tuple(xs))
        loss = loss_fn(out, *ts)
        if not isinstance(loss, torch.Tensor) or loss.numel() != 1:
            raise JointError("the loss function must return a tensor of one element")
        mark.setdefault("n", _graph_len_now())
        grads = iter(torch.autograd.grad(loss, [p for p, t in zip(params, trained) if t],
                                         allow_unused=True))
        return loss, [next(grads) if t else None for t in trained]

    def fresh():
        return ([pdict[n].detach().clone().requires_grad_(t) for n, t in zip(pnames, trained)],
                [bdict[n].detach().clone() for n in bnames])

    for nm, mod in model.named_modules():
        if isinstance(mod, (torch.nn.Embedding, torch.nn.EmbeddingBag)) and mod.sparse:
            raise JointError("%s: an embedding with sparse=True makes a sparse gradient, "
                             "which remat cannot plan; use sparse=False" % (nm or "the model"))
    P, B = fresh()
    with torch.random.fork_rng(devices=_devices_of(P + X)), _KeepWhole(), \
            _NoSavedTensorHooks(), _NoHostReads():
        try:
            gm1 = make_fx(step)(P, B, X, T)
        except NotImplementedError as e:
            _refuse_untraceable(e)
            raise
        except RuntimeError as e:
            _refuse_param_write(e)
            if "tracing tensor" not in str(e):
                raise
            raise JointError("the model (or a module in it: F.one_hot, a batch norm with "
                             "momentum=None, in torch 2 an nn.TransformerEncoder or "
                             "TransformerDecoder given a mask but not is_causal) reads a "
                             "tensor's value while it runs (.item(), bool(), an if on a "
                             "tensor: data-dependent control flow), so one trace cannot stand "
                             "for every batch; keep that part outside what is planned") from None
    nodes1 = list(gm1.graph.nodes)
    for n in nodes1:
        why = _data_shaped(n)
        if why:
            raise JointError("the model computes %s, whose shape depends on the values of a "
                             "tensor, so one trace cannot stand for every batch (a later batch "
                             "would get the first one's shapes); keep that part outside what is "
                             "planned, or use a fixed-shape form (torch.where, masked_fill, a "
                             "weighted mean)%s" % (why, " (F.cross_entropy with label_smoothing "
                                                   "computes one in PyTorch 1.13: compute that "
                                                   "loss outside the wrapped module)"
                                                   if why == "aten.masked_select" else ""))
    first_bw = nodes1[mark["n"]].name if mark.get("n") is not None and mark["n"] < len(nodes1) \
        else None
    mark2 = {}

    class Marking(torch.fx.Interpreter):
        def run_node(self, n):
            if n.name == first_bw and "n" not in mark2:
                mark2["n"] = _graph_len_now()
            return super().run_node(n)

        def call_function(self, target, args, kwargs):
            if _kept_whole(target):
                target = _stand_in(target)
            return super().call_function(target, args, kwargs)

    def replay(params, buffers, xs, ts):
        return Marking(gm1).run(params, buffers, xs, ts)

    P, B = fresh()
    X = [x.detach().requires_grad_(g) for x, g in zip(inputs, in_grad)]
    with torch.random.fork_rng(devices=_devices_of(P + X)), no_autocast():
        try:
            gm = make_fx(functionalize(replay))(P, B, X, T)
        except NotImplementedError as e:
            _refuse_untraceable(e)
            raise
        except ValueError as e:
            if "Cannot assign non-leaf Tensor to parameter" not in str(e):
                raise
            raise JointError("the model writes into one of its parameters in place while it "
                             "runs (an EMA teacher updated from the student inside the "
                             "forward); a plan cannot replay that: update it outside the "
                             "forward (under torch.no_grad(), before or after the call)") from None
        except RuntimeError as e:
            _refuse_param_write(e)
            # What the first trace ran, functionalization may not (torch
            # 1.13: an in-place write into a select or diagonal view of a
            # tensor whose backward runs through CopySlices; an outside
            # review found three): a refusal, not PyTorch's traceback.
            raise JointError("PyTorch %s cannot functionalize this model's step (%s); remat "
                             "traces through functionalization, so it cannot plan it: the "
                             "cause is usually an in-place write into a view (buf[:, 1] = h, "
                             "x.diagonal().zero_()); write out of place instead (torch.stack, "
                             "torch.cat, torch.where, index_put)"
                             % (torch.__version__, str(e).strip().splitlines()[0][:200])) from None
    original = {v: k for k, v in _STAND_INS.items()}
    if any(n.target in original for n in gm.graph.nodes if n.op == "call_function"):
        for n in gm.graph.nodes:
            if n.op == "call_function" and n.target in original:
                n.target = original[n.target]
        gm.recompile()
    nodes = list(gm.graph.nodes)
    boundary = nodes[mark2["n"]].name if mark2.get("n") is not None and mark2["n"] < len(nodes) \
        else None
    return gm, boundary, pnames, bnames


def tensor_aliases(model, table):
    """{name: [other names]} for the tensors of a module table
    ("_parameters" or "_buffers") registered under more than one name: the
    name is the one named_parameters()/named_buffers() gives (the first),
    the others are the names it has elsewhere (a tied weight such as
    head.weight = tok.weight, or every name of a module registered twice)."""
    names = {}
    for mname, mod in model.named_modules(remove_duplicate=False):
        for tname, t in getattr(mod, table).items():
            if t is not None:
                full = mname + "." + tname if mname else tname
                names.setdefault(id(t), [])
                if full not in names[id(t)]:
                    names[id(t)].append(full)
    return {ns[0]: ns[1:] for ns in names.values() if len(ns) > 1}


def _where_held(model, t):
    """Where a module keeps tensor t other than as a registered parameter
    or buffer ("blocks.0.cache[1]"), or None."""
    for mname, mod in model.named_modules():
        for attr, v in vars(mod).items():
            if attr.startswith("_"):
                continue
            items = v.items() if isinstance(v, dict) else \
                enumerate(v) if isinstance(v, (list, tuple)) else [(None, v)]
            for k, x in items:
                if x is t:
                    return "%s%s%s" % (mname + "." if mname else "", attr,
                                       "" if k is None else "[%r]" % (k,))
    return None


def _devices_of(ts):
    """The CUDA devices (indices) of the tensors in ts, and of the devices
    named there (a factory operator, rand(..., device="cuda"), has only
    that): whose generators a random operator may draw from."""
    ds = []
    for t in ts:
        d = t.device if isinstance(t, torch.Tensor) else t if isinstance(t, torch.device) \
            else None
        if d is not None and d.type == "cuda":
            i = d.index if d.index is not None else torch.cuda.current_device()
            if i not in ds:
                ds.append(i)
    return ds


def train_mode(model):
    """A training step's modes: a model left in eval mode is put in train
    mode (all of it); a model in train mode is left as it is, so that a
    submodule the user put in eval mode (a frozen batch norm) stays so, as
    in the user's own loss.backward()."""
    if not model.training:
        model.train()


class modes_kept:
    """Every submodule's train/eval flag restored on exit (model.train(b)
    would set them all alike, undoing a user's eval() on a submodule)."""

    def __init__(self, model):
        self.flags = [(m, m.training) for m in model.modules()]

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        for m, t in self.flags:
            m.training = t
        return False


# --------------------------------------------------------------- the IR

class JNode:
    """A node of the joint graph and its program: `calls`, a list of
    {"op", "args", "kwargs"}; the node's value is the last call's result
    (for several outputs, `keep` lists those it holds)."""
    __slots__ = ("id", "kind", "mem", "workspace", "dropped", "cost", "inputs", "calls",
                 "label", "random", "n_out", "keep", "after", "once")

    def __init__(self, nid, kind, calls, label):
        self.id, self.kind, self.calls, self.label = nid, kind, calls, label
        self.mem = self.workspace = 0
        self.dropped = None   # bytes of the outputs dropped at once (None: = workspace)
        self.cost = 0.0
        self.inputs = []
        self.random = False
        self.n_out = None     # several outputs: how many
        self.keep = None      # several outputs: indices held
        self.after = ()       # nodes it must come after without reading them
        self.once = False     # "recompute": false (computed once, then held)


class Joint:
    """The joint program: nodes in execution order, the references to the
    loss and to each parameter's gradient, and what binds it to a model."""

    def __init__(self):
        self.nodes = []
        self.byid = {}
        self.params = []        # [(name, shape, dtype)]
        self.buffers = []
        self.inputs = []        # input node ids: model inputs, targets, constants
        self.n_model_inputs = 0
        self.n_targets = 0
        self.consts = {}        # constant input id -> tensor
        self.loss = None        # reference
        self.grads = []         # reference or None, per parameter
        self.side_effects = []  # nodes that only update parameters or buffers
        self.epilogue = []      # such nodes computed from parameters and buffers alone
        self.mutated = []       # parameters and buffers the step writes
        self.outputs = []
        self.source = {}
        # A module's forward and backward (wrap(), vjp graphs): no loss;
        # outs are the model's tensor outputs, gouts the nodes standing for
        # their gradients (given by autograd when the backward runs; each
        # comes after every output), input_grads the gradients of the
        # inputs that require grad.
        self.outs = []
        self.gouts = []
        self.input_grads = []

    def result_refs(self):
        """References to what a run returns: the loss or the outputs, the
        gradients."""
        return ([self.loss] if self.loss is not None else []) + list(self.outs) + \
            [g for g in self.grads + self.input_grads if g is not None]

    def add(self, n):
        self.nodes.append(n)
        self.byid[n.id] = n
        return n

    def reindex(self):
        self.byid = {n.id: n for n in self.nodes}

    @property
    def random_nodes(self):
        return [n.id for n in self.nodes if n.random]


def _run_on(J, device):
    """A graph traced on the meta device, written for `device`: every
    operator argument naming the meta device (arange(..., device=...))
    names device instead."""
    want = {"device": str(torch.device(device))}

    def fix(r):
        if isinstance(r, list):
            return [fix(a) for a in r]
        if isinstance(r, dict):
            if r == {"device": "meta"}:
                return dict(want)
            if "view" in r:
                r = dict(r)
                r["args"] = fix(r["args"])
                if "kwargs" in r:
                    r["kwargs"] = {k: fix(a) for k, a in r["kwargs"].items()}
        return r
    for n in J.nodes + J.epilogue:
        for c in n.calls:
            c["args"] = fix(c["args"])
            c["kwargs"] = {k: fix(a) for k, a in c["kwargs"].items()}
    J.source["fake"] = "traced on the meta device (no memory, no kernels); workspaces not " \
                       "measured"
    return J


def _refuse_fake(measure):
    """What a trace on the meta device cannot do, refused by name."""
    if measure:
        raise JointError("measure times the operators on real tensors; it cannot be "
                         "combined with fake")
    if any(autocast_state()[i] for i in (0, 2)):
        raise JointError("fake: autocast makes no casts on the meta device, so the trace "
                         "would miss them; plan under autocast without fake")


def _to_meta(ts):
    return tuple(t.detach().to("meta").requires_grad_(t.requires_grad)
                 if isinstance(t, torch.Tensor) else t for t in ts)


def _device_of(model, tensors):
    for t in list(tensors) + list(model.parameters()):
        if isinstance(t, torch.Tensor):
            return t.device
    return torch.device("cpu")


def _plain_attrs(model):
    """Each module's plain attributes (wrapped.module_attrs) and the
    module-level variables the forwards read (wrapped.forward_globals),
    frozen as wrap's signature freezes them, with a copy of each to put
    back: {(id(module), name) or (globals' id, name): (the module's
    __dict__ or the globals, frozen, copy)}."""
    from remat_torch.wrapped import _frozen, forward_globals, module_attrs
    reg = {id(t) for t in list(model.parameters()) + list(model.buffers())}

    def kept(v):
        return copy.copy(v) if isinstance(v, (list, dict, set)) else v
    out = {(id(m), k): (m.__dict__, _frozen(v, reg), kept(v))
           for _, m, k, v in module_attrs(model)}
    raw = []
    forward_globals(model.modules(), reg, raw)
    for g, k, v in raw:
        out[(id(g), k)] = (g, _frozen(v, reg), kept(v))
    return out


def _random_states():
    """Python's and numpy's global generators (numpy only if imported)."""
    import random
    st = [("Python's random", random.getstate(), random.setstate)]
    np = sys.modules.get("numpy")
    if np is not None:
        st.append(("numpy.random", np.random.get_state(), np.random.set_state))
    return st


def _same_random(a, b):
    for (name, x, _), (_, y, _) in zip(a, b):
        if name == "numpy.random":
            if x[0] != y[0] or x[2:] != y[2:] or not (x[1] == y[1]).all():
                return name
        elif x != y:
            return name
    return None


def _guarded(model, build):
    """build() traces model; what the Python forward does besides the
    tensors a trace records must not happen there (an outside review found
    both): drawing from Python's or numpy's generator (LayerDrop's
    random.random(), decided once and replayed by every call) is refused;
    changing the modules' plain attributes is refused too (a counter, a
    log: a plan replays the traced operators, not the forward, so it would
    not change per call), unless a second trace leaves them as the first
    left them (a cache filled once, as one eager call would).  Refused,
    the attributes and generators are put back."""
    before, rs = _plain_attrs(model), _random_states()

    def changed(a, b):
        return [k for k in a if k not in b or b[k][1] != a[k][1]] + \
            [k for k in b if k not in a]

    def put_back():
        now = _plain_attrs(model)
        for k in changed(before, now):
            if k in before:
                before[k][0][k[1]] = before[k][2]
            else:
                del now[k][0][k[1]]
        for _, st, setter in rs:
            setter(st)
    def refuse_random():
        moved = _same_random(rs, _random_states())
        if moved:
            raise JointError("the model's forward draws from %s (random.random(), "
                             "np.random: LayerDrop, a random choice of path); a trace would "
                             "fix that draw for every call: draw from torch's generator "
                             "(torch.rand) instead" % moved)
    try:
        try:
            out = build()
        except Exception:
            refuse_random()     # what went wrong may follow from the draws
            raise
        refuse_random()
        mid = _plain_attrs(model)
        if changed(before, mid):
            out = build()
            again = changed(mid, _plain_attrs(model))
            if again:
                d = (mid.get(again[0]) or before[again[0]])[0]
                owner = next((m for m in model.modules() if m.__dict__ is d), None)
                if owner is None:
                    raise JointError("the model's forward changes the module-level variable "
                                     "'%s' on every call (a counter, a list it appends to); "
                                     "a plan replays the traced operators, not the Python "
                                     "forward, so that change would not happen on each "
                                     "call: keep such state outside the forward"
                                     % again[0][1])
                m = owner
                raise JointError("the forward of %s changes its attribute '%s' on every "
                                 "call (a counter, a list it appends to); a plan replays "
                                 "the traced operators, not the Python forward, so that "
                                 "change would not happen on each call: keep such state "
                                 "outside the module's forward, or in a buffer updated in "
                                 "place" % (type(m).__name__, again[0][1]))
        return out
    except BaseException:
        put_back()
        raise


def build_joint(model, inputs, loss_fn, targets=(), measure=False, progress=None, fake=False):
    """Trace the training step of `model` on `inputs` (loss_fn(output,
    *targets) -> scalar) and build its Joint (see the module docstring).
    The model's parameters and buffers are not changed.  fake: trace on
    meta twins of the parameters, buffers and batch (meta_twin): nothing
    allocated or run, no workspace measured; the graph is written for the
    batch's device."""
    if fake:
        _refuse_fake(measure)
        dev = _device_of(model, list(inputs) + list(targets))
        with meta_twin(model, dev):
            J = build_joint(model, _to_meta(inputs), loss_fn, _to_meta(targets),
                            progress=progress)
        return _run_on(J, dev)
    return _guarded(model, lambda: _build_joint(model, inputs, loss_fn, targets, measure,
                                                progress))


def _build_joint(model, inputs, loss_fn, targets, measure, progress):
    say = progress or (lambda msg: None)
    inputs, targets = tuple(inputs), tuple(targets)
    check_batch(inputs, targets)
    with modes_kept(model):
        train_mode(model)
        say("tracing one training step (make_fx, then functionalization)")
        gm, boundary, pnames, bnames = trace_fx(model, inputs, loss_fn, targets)
        say("building the graph from %d FX nodes" % len(gm.graph.nodes))
        J = _from_fx(gm, boundary, model, inputs, targets, pnames, bnames)
        _finish(J, model, inputs, targets, measure, say)
    return J


def build_vjp(model, args, kwargs=None, measure=False, progress=None, fake=False):
    """The joint graph of a module's forward and backward (wrap()): the
    model called as model(*args, **kwargs), its differentiable tensor
    outputs' gradients as nodes after every output (Joint.gouts), and the
    gradients of its trained parameters and of the input tensors that
    require grad as outputs.  Returns (J, layout): layout describes the
    outputs (see OutputLayout).  The model's parameters, buffers and the
    global random state are not changed."""
    kwargs = dict(kwargs or {})
    if fake:
        from torch.utils._pytree import tree_map
        _refuse_fake(measure)
        dev = _device_of(model, tree_flatten((tuple(args), kwargs))[0])
        meta = lambda t: _to_meta((t,))[0] if isinstance(t, torch.Tensor) else t  # noqa: E731
        with meta_twin(model, dev):
            J, layout = build_vjp(model, tree_map(meta, tuple(args)), tree_map(meta, kwargs),
                                  progress=progress)
        layout.grad_specs = [(sh, st, dt, dev) for sh, st, dt, _ in layout.grad_specs]
        return _run_on(J, dev), layout
    return _guarded(model, lambda: _build_vjp(model, args, kwargs, measure, progress))


def _build_vjp(model, args, kwargs, measure, progress):
    from torch.utils._pytree import tree_unflatten
    say = progress or (lambda msg: None)
    leaves, spec = tree_flatten((tuple(args), kwargs))
    refuse_hidden_tensors(leaves, "an argument of the model")
    pos = [i for i, x in enumerate(leaves) if isinstance(x, torch.Tensor)]
    xs = [leaves[i] for i in pos]
    in_grad = [bool(x.requires_grad) for x in xs]

    def call(ts):
        ls = list(leaves)
        for i, t in zip(pos, ts):
            ls[i] = t
        return tree_unflatten(ls, spec)

    # The module is traced in the modes it is in (a submodule the user put
    # in eval mode, a frozen batch norm, stays so): wrap() plans only when
    # the module itself is training.
    with modes_kept(model):
        # The outputs (which, their layout), from one forward on copies.
        pd, bd = model_tensors(model)
        state = {n: p.detach().clone().requires_grad_(p.requires_grad) for n, p in pd.items()}
        state.update({n: b.detach().clone() for n, b in bd.items()})
        for names in (tensor_aliases(model, "_parameters"), tensor_aliases(model, "_buffers")):
            for nm, others in names.items():
                for a in others:
                    state[a] = state[nm]
        a0, k0 = call([x.detach().requires_grad_(g) for x, g in zip(xs, in_grad)])
        with torch.random.fork_rng(devices=_devices_of(xs + list(pd.values()))), \
                torch.enable_grad():
            try:
                out = functional_call(model, state, tuple(a0), k0)
            except RuntimeError as e:
                _refuse_param_write(e)
                raise
        layout = OutputLayout(out)
        del state, out
        gouts = [torch.empty_strided(sh, st, dtype=dt, device=dv).fill_(1)
                 for sh, st, dt, dv in layout.grad_specs]
        say("tracing the module's forward and backward (make_fx, then functionalization)")
        gm, boundary, pnames, bnames = trace_fx(model, xs, None, gouts, call=call,
                                                in_grad=in_grad)
        say("building the graph from %d FX nodes" % len(gm.graph.nodes))
        X = [x.detach().requires_grad_(g) for x, g in zip(xs, in_grad)]
        J = _from_fx(gm, boundary, model, X, gouts, pnames, bnames, n_outs=layout.n_tensors)
        _finish(J, model, X, gouts, measure, say)
    return J, layout


def _hidden_tensor(v, depth=0):
    """Where a tensor sits inside v that tree_flatten does not see into (a
    dataclass's field, an object's attribute, an item of a dict subclass):
    a path such as ".scores", or None."""
    if isinstance(v, torch.Tensor):
        return ""
    if depth > 3 or isinstance(v, (str, bytes, int, float, complex, bool, type, torch.nn.Module,
                                   torch.dtype, torch.device)) or v is None or callable(v):
        return None
    if dataclasses.is_dataclass(v):
        items = [("." + f.name, getattr(v, f.name, None)) for f in dataclasses.fields(v)]
    elif isinstance(v, dict):
        items = [("[%r]" % (k,), x) for k, x in list(v.items())[:256]]
    elif isinstance(v, (list, tuple, set, frozenset)):
        items = [("[%d]" % i, x) for i, x in enumerate(list(v)[:256])]
    elif hasattr(v, "__dict__"):
        items = [("." + k, x) for k, x in list(vars(v).items())[:256]]
    else:
        return None
    for name, x in items:
        p = _hidden_tensor(x, depth + 1)
        if p is not None:
            return name + p
    return None


def refuse_hidden_tensors(leaves, what):
    """A tensor inside an object tree_flatten keeps whole would be fixed
    into the trace as a constant (the first call's values, every call):
    refused, named."""
    for x in leaves:
        if isinstance(x, torch.Tensor):
            continue
        p = _hidden_tensor(x)
        if p is not None:
            raise JointError("%s: an object of type %s holds a tensor (%s%s) that remat "
                             "cannot see into; use tuples, lists, dicts or namedtuples of tensors "
                             "(a dict subclass: a plain dict; a dataclass: its fields as a "
                             "tuple or dict)" % (what, type(x).__name__, type(x).__name__, p))


class OutputLayout:
    """What a model returns, for wrap(): the pytree spec, the non-tensor
    leaves, which leaves are tensors, which of those are differentiable
    (one Joint.gouts node each, in order) and the layout the gradient of
    each is traced with (shape, strides, dtype, device)."""

    def __init__(self, out):
        leaves, self.spec = tree_flatten(out)
        refuse_hidden_tensors(leaves, "the model's output")
        self.leaves = [None if isinstance(x, torch.Tensor) else x for x in leaves]
        self.tensor_at = [i for i, x in enumerate(leaves) if isinstance(x, torch.Tensor)]
        self.n_tensors = len(self.tensor_at)
        ts = [leaves[i] for i in self.tensor_at]
        self.diff = [k for k, t in enumerate(ts) if t.requires_grad]
        self.grad_specs = []
        for k in self.diff:
            g = torch.empty_like(ts[k])      # the layout autograd's gradient would likely have
            self.grad_specs.append((tuple(g.shape), tuple(g.stride()), g.dtype, g.device))

    def rebuild(self, tensors):
        from torch.utils._pytree import tree_unflatten
        ls = list(self.leaves)
        for i, t in zip(self.tensor_at, tensors):
            ls[i] = t
        return tree_unflatten(ls, self.spec)


def check_batch(inputs, targets=()):
    """A batch tensor that requires grad would get a gradient from eager
    PyTorch (x.grad) that the plan never computes: refused, named."""
    for kind, ts in (("model input", inputs), ("loss target", targets)):
        for i, t in enumerate(ts):
            if isinstance(t, torch.Tensor) and t.requires_grad:
                raise JointError("%s %d requires grad: the plan computes the parameters' "
                                 "gradients only (pass it detached, or make it a parameter)"
                                 % (kind, i))


def _from_fx(gm, boundary, model, inputs, targets, pnames, bnames, n_outs=None):
    """FX graph -> Joint nodes (before multi-output copies and sizes).
    n_outs: a vjp graph (trace_fx with loss_fn None) whose model has that
    many tensor outputs; targets are then the outputs' gradients."""
    J = Joint()
    vjp = n_outs is not None
    gout_nodes = []
    pdict, bdict = model_tensors(model)
    J.params = [(n, list(pdict[n].shape), _dtype_name(pdict[n])) for n in pnames]
    J.buffers = [(n, list(bdict[n].shape), _dtype_name(bdict[n])) for n in bnames]
    np_, nb = len(pnames), len(bnames)
    batch = list(inputs) + list(targets)
    J.n_model_inputs, J.n_targets = len(inputs), 0 if vjp else len(targets)

    val, ref = {}, {}
    ext = {}            # storage ptr -> parameter/buffer name
    owner = {}          # storage ptr -> node id
    arg_num = {}        # input node id -> its number among model inputs or targets
    mutated = []
    wrote = set()       # parameters and buffers written so far, in the model's order
    phase_bw = False
    k = 0
    placeholders = [n for n in gm.graph.nodes if n.op == "placeholder"]
    if len(placeholders) != np_ + nb + len(batch):
        raise JointError("the traced step has %d inputs, expected %d"
                         % (len(placeholders), np_ + nb + len(batch)))
    # Buffers are cloned: this run must not update the model's statistics.
    bclone = {n: bdict[n].detach().clone() for n in bnames}
    for i, ph in enumerate(placeholders):
        if i < np_:
            t = pdict[pnames[i]].detach()
            val[ph], ref[ph] = t, {"param": pnames[i]}
        elif i < np_ + nb:
            t = bclone[bnames[i - np_]]
            val[ph], ref[ph] = t, {"buffer": bnames[i - np_]}
        if i < np_ + nb:
            st = storage_key(t)
            if st:
                ext[st[0]] = ref[ph].get("param") or ref[ph].get("buffer")
            continue
        j = i - np_ - nb
        t = batch[j]
        if not isinstance(t, torch.Tensor):
            raise JointError("input %d of the step is not a tensor" % j)
        if j < len(inputs):
            nid = "input" if len(inputs) == 1 else "input%d" % j
            label = "model input"
            arg_num[nid] = j
        elif vjp:
            # The gradient of output j: given when the backward starts, so a
            # node after every output (not an input resident from the start).
            nid = "gout%d" % (j - len(inputs))
            g = JNode(nid, "backward", [{"op": GRAD_OUTPUT_OP, "args": [j - len(inputs)],
                                         "kwargs": {}}], "gradient of output %d"
                      % (j - len(inputs)))
            gout_nodes.append(g)
            val[ph], ref[ph] = t, {"node": nid}
            st = storage_key(t)
            if st:
                owner[st[0]] = nid
            continue
        else:
            nid = "target" if len(targets) == 1 else "target%d" % (j - len(inputs))
            label = "loss target"
            arg_num[nid] = j - len(inputs)
        n = J.add(JNode(nid, "input", [], label))
        J.inputs.append(nid)
        val[ph], ref[ph] = t, {"node": nid}
        st = storage_key(t)
        if st:
            if st[0] in owner or st[0] in ext:
                raise JointError("input %s shares its storage with another input or a "
                                 "parameter; pass separate tensors" % nid)
            owner[st[0]] = nid

    n_const = 0
    out_fx = None
    # The replay draws random numbers: the caller's generator is left as it was.
    with torch.no_grad(), torch.random.fork_rng(
            devices=_devices_of(list(pdict.values()) + [t for t in batch
                                                        if isinstance(t, torch.Tensor)])):
        for fx in gm.graph.nodes:
            if fx.op == "placeholder":
                continue
            if fx.name == boundary:
                phase_bw = True
            if fx.op == "output":
                out_fx = fx.args[0]
                break
            if fx.op == "get_attr":
                t = getattr(gm, fx.target)
                st = storage_key(t)
                if isinstance(t, torch.Tensor) and t.requires_grad:
                    # A tensor that wants a gradient, read other than as a
                    # registered parameter: functional_call did not replace
                    # it, so autograd.grad never sees this read.
                    held = _where_held(model, t)
                    pname = ext.get(st[0]) if st else None
                    if pname is not None and pname in pdict:
                        what = "parameter %s is also read as %s" % (
                            pname, held or "a tensor the model does not register")
                    else:
                        what = "a tensor that requires grad (%s, shape %s) is read%s, but it is " \
                               "not a parameter of the model" % (
                                   _dtype_name(t), list(t.shape), " as " + held if held else "")
                    raise JointError("%s; its gradient cannot be exported (register it with "
                                     "nn.Parameter or read it through the module that owns it; "
                                     "a forward that reads a parameter's .data, as an EMA "
                                     "teacher updated from the student inside it does, reads it "
                                     "so: make that update outside the forward)" % what)
                if st and (st[0] in owner or st[0] in ext):
                    val[fx] = t
                    ref[fx] = {"node": owner[st[0]]} if st[0] in owner else \
                        ({"param": ext[st[0]]} if ext[st[0]] in pdict else {"buffer": ext[st[0]]})
                    continue
                if _DEVICE_FOR_META[0] is not None and t.device.type == "meta":
                    raise JointError("the model makes a tensor constant (%s, shape %s) while it "
                                     "runs; a trace on the meta device cannot know its value "
                                     "(trace without fake)" % (fx.target, list(t.shape)))
                nid = "const%d" % n_const
                n_const += 1
                J.add(JNode(nid, "input", [], "tensor constant of the trace"))
                J.consts[nid] = t
                val[fx], ref[fx] = t, {"node": nid}
                if st:
                    owner[st[0]] = nid
                continue
            if fx.op != "call_function":
                raise JointError("FX node %s: %s nodes cannot be replayed" % (fx.name, fx.op))
            if fx.target is operator.getitem:
                base, idx = fx.args
                val[fx] = val[base][idx]
                r = dict(ref[base])
                if "index" in r:
                    raise JointError("FX node %s: an item of an item" % fx.name)
                r["index"] = idx
                ref[fx] = r
                continue
            op = fx.target
            name = str(op)
            if not hasattr(op, "_schema") or resolve_op(name) is not op:
                raise JointError("FX node %s: %s is not an ATen operator and cannot be replayed"
                                 % (fx.name, name))
            if name in ELIDED:
                val[fx], ref[fx] = val[fx.args[0]], ref[fx.args[0]]
                continue
            where = "FX node %s (%s)" % (fx.name, name)
            args = torch.fx.node.map_arg(fx.args, lambda a: val[a])
            kwargs = torch.fx.node.map_arg(fx.kwargs, lambda a: val[a])
            for a, v in zip(op._schema.arguments, args):
                if v is None and str(a.type) == "Tensor":
                    raise JointError("%s: its argument %s is an undefined tensor in the "
                                     "trace, which remat cannot replay with torch %s: keep "
                                     "that part outside what is planned"
                                     % (where, a.name, torch.__version__))
            out = callable_of(name, op)(*args, **kwargs)
            val[fx] = out
            flat_in = [a for a in tree_flatten((args, kwargs))[0] if isinstance(a, torch.Tensor)]
            flat_out = [o for o in tree_flatten(out)[0] if isinstance(o, torch.Tensor)]
            in_keys = {storage_key(a)[0] for a in flat_in if storage_key(a)}
            out_keys = [storage_key(o) for o in flat_out]
            known = lambda p: p in in_keys or p in owner or p in ext  # noqa: E731
            new = [kk for kk in out_keys if kk is not None and not known(kk[0])]
            aliased = [kk for kk in out_keys if kk is not None and known(kk[0])]

            def enc(a):
                if isinstance(a, torch.fx.Node):
                    return ref[a]
                if isinstance(a, (list, tuple)) and any(isinstance(b, torch.fx.Node) for b in a):
                    return [enc(b) for b in a]
                return encode_const(a, where)
            eargs = [enc(a) for a in fx.args]
            ekwargs = {kk: enc(a) for kk, a in fx.kwargs.items()}
            short = name.split(".")[1]
            kind = "backward" if phase_bw else "forward"

            if short == "rrelu_with_noise" and (fx.args[4] if len(fx.args) > 4 else
                                                fx.kwargs.get("training", False)):
                raise JointError("%s: nn.RReLU in training mode writes its random slopes "
                                 "into a tensor its backward reads, which remat cannot "
                                 "replay under rematerialization; use LeakyReLU or PReLU, "
                                 "or keep it outside what is planned" % where)
            writes = [(i, nm) for i, nm in written_args(op, fx.args)
                      if (fx.args[i] if i < len(fx.args) else fx.kwargs.get(nm)) is not None]
            if wrote:
                # Readers of a written buffer see the value it had when the
                # step began (Runner): a read after the write in the model's
                # own order would see the old value.
                skip = {i for i, _ in writes} | set(_unread({"op": name, "args": eargs}))
                late = _names_read([a for i, a in enumerate(eargs) if i not in skip] +
                                   [a for kk, a in ekwargs.items()
                                    if kk not in {nm for _, nm in writes}], wrote)
                if late:
                    raise JointError("%s reads %s after the model updated it in place in the "
                                     "same call (a batch norm's running statistics read after "
                                     "it in training); remat "
                                     "cannot replay reads after the update: read it before, "
                                     "or keep that part outside what is planned"
                                     % (where, sorted(late)[0]))
            if writes:
                targets_w = [fx.args[i] if i < len(fx.args) else fx.kwargs.get(nm)
                             for i, nm in writes]
                refs_w = [ref.get(t) if isinstance(t, torch.fx.Node) else None for t in targets_w]
                ext_w = [r.get("param") or r.get("buffer") for r in refs_w
                         if r is not None and ("param" in r or "buffer" in r)]
                if len(ext_w) == len(writes):
                    mutated.extend(ext_w)
                    # (batch norm in eval mode writes nothing)
                    if not (short == "native_batch_norm" and len(fx.args) > 5 and
                            fx.args[5] is False):
                        wrote.update(ext_w)
                    if not new:
                        # Only updates parameters/buffers (copy_ into a buffer).
                        k += 1
                        n = J.add(JNode("%s%d.%s" % (kind[0], k, short), kind,
                                        [{"op": name, "args": eargs, "kwargs": ekwargs}],
                                        "%s: updates %s" % (name, ", ".join(ext_w))))
                        J.side_effects.append(n.id)
                        ref[fx] = {"node": n.id}
                        continue
                    # else: allocates, and updates buffers on the side.
                elif len(writes) == 1 and refs_w[0] is not None and "node" in refs_w[0] \
                        and "index" not in refs_w[0] and refs_w[0]["node"] in J.byid \
                        and J.byid[refs_w[0]["node"]].kind != "input" \
                        and J.byid[refs_w[0]["node"]].n_out is None \
                        and all(u is fx for u in targets_w[0].users) \
                        and not new and len(aliased) == 1 \
                        and owner.get(aliased[0][0]) == refs_w[0]["node"]:
                    # Writes into a fresh tensor nothing else reads: fused.
                    prod = J.byid[refs_w[0]["node"]]
                    _fuse_into(J, prod, {"op": name, "args": [{"prev": len(prod.calls) - 1}
                                                              if a is targets_w[0] else enc(a)
                                                              for a in fx.args],
                                         "kwargs": ekwargs})
                    prod.random = prod.random or short in RANDOM_OPS
                    ref[fx] = {"node": prod.id}
                    continue
                else:
                    # Name the tensor written when it is one of the step's inputs.
                    keys = [storage_key(val[t]) for t in targets_w
                            if isinstance(t, torch.fx.Node) and isinstance(val.get(t), torch.Tensor)]
                    into = [owner.get(kk[0]) for kk in keys if kk is not None]
                    into = [i for i in into if i in J.byid and J.byid[i].kind == "input"]
                    if into:
                        num = arg_num[into[0]]
                        raise JointError("%s writes in place into the %s %d (graph node %s): "
                                         "remat cannot replay a write into the caller's "
                                         "tensor; write into a copy in the forward (x = "
                                         "x.clone() first, or an out-of-place operator)"
                                         % (where, J.byid[into[0]].label, num, into[0]))
                    raise JointError("%s writes in place into an activation read elsewhere; "
                                     "it cannot be replayed under rematerialization%s" % (
                                         where, " (nn.InstanceNorm with track_running_stats="
                                         "True does this: its running statistics are copies "
                                         "made in the forward; use track_running_stats=False, "
                                         "or nn.GroupNorm)" if short == "native_batch_norm"
                                         else ""))
            if not new and not writes:
                # A view (or a value without storage): no node.
                r = {"view": name, "args": eargs}
                if ekwargs:
                    r["kwargs"] = ekwargs
                ref[fx] = r
                continue
            if aliased:
                raise JointError("%s returns both new tensors and views of other tensors; "
                                 "the memory model cannot express it" % where)
            prod = _in_place_on_fresh(J, fx, name, out, val, ref)
            if prod is not None:
                # Eager updates the fresh tensor in place (autograd's
                # backward of x[idx]: new_zeros, then index_put_ with
                # accumulate); functionalized, both would be held at once.
                _fuse_into(J, prod, {"op": in_place_variant(name),
                                     "args": [{"prev": len(prod.calls) - 1}] +
                                     [enc(a) for a in fx.args[1:]], "kwargs": ekwargs})
                prod.random = prod.random or short in RANDOM_OPS
                for kk in new:
                    owner[kk[0]] = prod.id
                ref[fx] = {"node": prod.id}
                continue
            k += 1
            n = J.add(JNode("%s%d.%s" % (kind[0], k, short), kind,
                            [{"op": name, "args": eargs, "kwargs": ekwargs}], name))
            n.random = short in RANDOM_OPS
            if isinstance(out, (tuple, list)):
                n.n_out = len(out)
            for kk in new:
                owner.setdefault(kk[0], n.id)
            ref[fx] = {"node": n.id}
    if out_fx is None:
        raise JointError("the traced step has no output")
    # flattened: the loss (or the n_outs outputs), one gradient per
    # parameter (and per input that requires grad)
    out_fx = list(out_fx)
    head = 1 if not vjp else n_outs
    n_in_grad = sum(1 for x in inputs if x.requires_grad) if vjp else 0
    if len(out_fx) != head + np_ + n_in_grad:
        raise JointError("the traced step returns %d values, expected %d"
                         % (len(out_fx), head + np_ + n_in_grad))
    grad_ref = lambda g: ref[g] if isinstance(g, torch.fx.Node) else None  # noqa: E731
    late = _names_read([ref[o] for o in out_fx[:head] if isinstance(o, torch.fx.Node)], wrote)
    if late:
        # Returned, it would be the value from before the update (the
        # Runner's reads see the step's start): an outside review found
        # wrap() returning the last call's running_mean.
        raise JointError("the model returns %s, which it updated in place in the same call "
                         "(a batch norm's running statistics in training); remat cannot "
                         "return the updated value: read it from the module after the call "
                         "(model.bn.running_mean), or keep that part outside what is planned"
                         % sorted(late)[0])
    if vjp:
        J.outs = [ref[o] for o in out_fx[:n_outs]]
        J.input_grads = [grad_ref(g) for g in out_fx[head + np_:]]
        J.gouts = [g.id for g in gout_nodes]
        after = [nid for r in J.outs for nid in ref_nodes(r, [])]
        gid = set(J.gouts)
        first = next((i for i, n in enumerate(J.nodes)
                      if any(nid in gid for c in n.calls for nid in
                             ref_nodes([c["args"], list(c["kwargs"].values())], []))),
                     len(J.nodes))
        for g in gout_nodes:
            g.after = list(dict.fromkeys(after))
        J.nodes[first:first] = gout_nodes
        J.reindex()
    else:
        J.loss = ref[out_fx[0]]
    J.grads = [grad_ref(g) for g in out_fx[head:head + np_]]
    J.mutated = list(dict.fromkeys(mutated))
    return J


def _fuse_into(J, prod, call):
    """Append call (an in-place write into prod's fresh tensor) to prod's
    program.  When the call reads a node made after prod (an index, the
    values written: an outside review found the graph out of order, a
    KeyError in the trace), prod moves after every node made so far: nothing
    reads it yet but this call, and a random write then draws where the
    model draws."""
    later = set()
    for n in reversed(J.nodes):     # (the fresh tensor is usually recent)
        if n is prod:
            break
        later.add(n.id)
    if later and not later.isdisjoint(ref_nodes([call["args"], list(call["kwargs"].values())],
                                                [])):
        J.nodes.remove(prod)
        J.nodes.append(prod)
    prod.calls.append(call)
    prod.label += " + " + call["op"]


def _in_place_on_fresh(J, fx, name, out, val, ref):
    """The node whose fresh tensor (FRESH_OPS: zeros, empty, clone ...) the
    out-of-place operator fx could update in place instead, as eager's
    in-place form does: nothing else reads that tensor, the result has its
    type, shape and strides, and the operator has an in-place form with the
    same arguments.  None otherwise."""
    if not fx.args or not isinstance(fx.args[0], torch.fx.Node) or \
            in_place_variant(name) is None:
        return None
    self_fx = fx.args[0]
    r = ref.get(self_fx)
    if r is None or set(r) != {"node"} or r["node"] not in J.byid:
        return None
    prod = J.byid[r["node"]]
    # (not a random tensor: moved later by _fuse_into, it would draw after
    # random nodes the model runs after it)
    if prod.kind == "input" or prod.n_out is not None or prod.random or \
            prod.calls[0]["op"].split(".")[1] not in FRESH_OPS:
        return None
    if any(u is not fx for u in self_fx.users) or \
            any(a is self_fx for a in tree_flatten((fx.args[1:], fx.kwargs))[0]):
        return None
    a = val[self_fx]
    if not isinstance(out, torch.Tensor) or not isinstance(a, torch.Tensor) or \
            out.dtype != a.dtype or out.shape != a.shape or out.stride() != a.stride() or \
            storage_key(out) is None or storage_key(a) is None or \
            storage_key(out)[1] != storage_key(a)[1]:
        return None
    return prod


def _ext_writes(n):
    """The parameters and buffers node n's calls write in place."""
    out = []
    for c in n.calls:
        for i, nm in written_args(resolve_op(c["op"]), c["args"]):
            a = c["args"][i] if i < len(c["args"]) else c["kwargs"].get(nm)
            if isinstance(a, dict) and ("buffer" in a or "param" in a):
                out.append(a.get("buffer") or a.get("param"))
    return out


# An ordering token: a node of no bytes (an empty tensor) that comes after
# node p and reads nothing.  A node that must first run after p comes after
# p's token instead, so p need not be resident then, nor when that node is
# computed again: the token, computed once and held, costs nothing.
ORDER_OP = "aten.empty.memory_format"


def _order_token(J, p, reads, tokens):
    """The id of p's ordering token (made once, in J.byid and tokens)."""
    t = tokens.get(p)
    if t is None:
        t = JNode("%s~after" % p, "forward",
                  [{"op": ORDER_OP, "args": [[0]], "kwargs": {}}],
                  "ordering token: after %s" % p)
        t.after = (p,)
        t.inputs = [p]
        t.once = True       # computed once, after p's first computation
        J.byid[t.id] = t
        reads[t.id] = []
        tokens[p] = t
    return t.id


def _place_tokens(J, tokens):
    """Each token not yet in J.nodes placed right after its node."""
    placed = {n.id for n in J.nodes}
    nodes = []
    for n in J.nodes:
        nodes.append(n)
        t = tokens.get(n.id)
        if t is not None and t.id not in placed:
            nodes.append(t)
    J.nodes = nodes
    J.reindex()


def _reaches(J, reads, v, u):
    """Whether u is among v's ancestors (what v reads or comes after)."""
    seen, stack = set(), [v]
    while stack:
        x = stack.pop()
        for d in reads[x] + list(J.byid[x].after):
            if d == u:
                return True
            if d not in seen:
                seen.add(d)
                stack.append(d)
    return False


# The program of a vjp graph's gradient node (Joint.gouts): the gradient
# of output i, as autograd gives it to the backward.
GRAD_OUTPUT_OP = "remat_torch.grad_output"


# Operators whose outputs are computed independently of one another, chosen
# by a boolean output_mask argument (at this index): a node of one can be
# split into nodes computing parts of its outputs at no extra cost.
# convolution_backward's input gradient and weight gradient are separate
# kernels (transposed convolution, and convolution of input and gradient).
MASK_SPLIT = {"aten.convolution_backward.default": (10, ((0,), (1, 2)))}


def _split_by_mask(n, last):
    """For a node of a MASK_SPLIT operator whose kept outputs fall in
    groups that die at different times (a convolution's input gradient,
    read by the next operator of the backward, and its weight gradient,
    kept to the end of the step), a new node computing the later group
    (output_mask selecting it alone), with n's own mask narrowed to the
    rest; None when there is nothing to gain.  Without it the node would
    hold the early outputs as long as the late ones (or copy those out)."""
    if len(n.calls) != 1 or n.calls[0]["op"] not in MASK_SPLIT:
        return None
    at, groups = MASK_SPLIT[n.calls[0]["op"]]
    args = n.calls[0]["args"]
    if len(args) <= at or not isinstance(args[at], list) or \
            not all(isinstance(b, bool) for b in args[at]):
        return None
    kept = [[i for i in g if i in n.keep] for g in groups]
    if sum(1 for g in kept if g) < 2:
        return None
    end = {k: max(last[(n.id, i)] for i in g) for k, g in enumerate(kept) if g}
    late = max(end, key=lambda k: (end[k], k))
    if len(set(end.values())) == 1:
        return None
    mask = list(args[at])
    late_mask = [b and i in kept[late] for i, b in enumerate(mask)]
    args[at] = [b and i not in kept[late] for i, b in enumerate(mask)]
    sargs = list(args)
    sargs[at] = late_mask
    sn = JNode("%s#%d" % (n.id, kept[late][0]), n.kind,
               [{"op": n.calls[0]["op"], "args": sargs, "kwargs": dict(n.calls[0]["kwargs"])}],
               "outputs %s of %s" % (", ".join(map(str, kept[late])), n.calls[0]["op"]))
    sn.n_out, sn.keep = n.n_out, list(kept[late])
    return sn


def _scan_refs(r, fn):
    """Call fn(node, index) for every node a reference reads."""
    if isinstance(r, dict):
        if "node" in r:
            fn(r["node"], r.get("index"))
        elif "view" in r:
            _scan_refs(r["args"], fn)
            _scan_refs(list(r.get("kwargs", {}).values()), fn)
    elif isinstance(r, list):
        for a in r:
            _scan_refs(a, fn)


def _map_refs(r, fn):
    """Rewrite every {"node"} reference with fn(ref) -> ref."""
    if isinstance(r, dict):
        if "node" in r:
            return fn(r)
        if "view" in r:
            r2 = dict(r)
            r2["args"] = _map_refs(r["args"], fn)
            if "kwargs" in r:
                r2["kwargs"] = {k: _map_refs(a, fn) for k, a in r["kwargs"].items()}
            return r2
        return r
    if isinstance(r, list):
        return [_map_refs(a, fn) for a in r]
    return r


# A multi-output node's late output with a storage of its own is taken over
# by a node whose program is this one call on {"node": producer, "index": i}:
# the same storage under another node, so that the producer can be freed
# while the output lives on.  The graph gives the move node the output's
# bytes: the simulator, which frees a node whole, counts them twice while
# both are resident (the allocator once), so its peak stays an upper bound.
MOVE_OP = "aten.detach.default"


def moved_from(n):
    """The node whose output node n takes over (MOVE_OP), or None."""
    if len(n.calls) != 1 or n.calls[0]["op"] != MOVE_OP:
        return None
    a = n.calls[0]["args"]
    if len(a) == 1 and isinstance(a[0], dict) and "node" in a[0] and "index" in a[0]:
        return a[0]["node"]
    return None


def _output_refs(J):
    return J.result_refs() + [{"node": s} for s in J.side_effects + J.gouts]


def _finish(J, model, inputs, targets, measure, say):
    """Copy-outs of multi-output nodes, dead nodes, inputs, kinds, outputs,
    sizes and costs."""
    pos = {n.id: i for i, n in enumerate(J.nodes)}
    end = len(J.nodes) + 1
    last = {}      # (node, index) -> position of its last reader

    def reader(at):
        def fn(nid, idx):
            key = (nid, idx)
            last[key] = max(last.get(key, -1), at)
        return fn
    for n in J.nodes:
        for c in n.calls:
            _scan_refs(c["args"], reader(pos[n.id]))
            _scan_refs(list(c["kwargs"].values()), reader(pos[n.id]))
    for r in _output_refs(J):
        _scan_refs(r, reader(end))

    # The first backward node's position (the trace's forward/backward boundary).
    boundary = next((i for i, n in enumerate(J.nodes) if n.kind == "backward"), end)

    # Sizes of every output, from one run holding everything.
    binding = bind_model(J, model, inputs, targets, clone_buffers=True)
    vals = run_plain(J, binding, seed=0, values=True)
    # How many values hold each storage: an output whose storage nothing
    # else holds can be moved out instead of copied.
    holders = {}
    for v in vals.values():
        for p in value_storages(v):
            holders[p] = holders.get(p, 0) + 1
    for p in binding.external_storages():
        holders[p] = holders.get(p, 0) + 1
    moved = {}     # move node id -> bytes
    new_nodes, rename = [], {}
    for n in J.nodes:
        new_nodes.append(n)
        if n.n_out is None:
            continue
        if (n.id, None) in last:
            raise JointError("node %s: its outputs are read as a whole" % n.id)
        n.keep = [i for i in range(n.n_out) if (n.id, i) in last]
        outs = vals[n.id]
        size = {i: (storage_key(outs[i])[1] if isinstance(outs[i], torch.Tensor)
                    and storage_key(outs[i]) else 0) for i in n.keep}
        if len(n.keep) < 2:
            continue
        split = _split_by_mask(n, last)
        if split is not None:
            new_nodes.append(split)
            for i in split.keep:
                rename[(n.id, i)] = {"node": split.id, "index": i}
            n.keep = [i for i in n.keep if i not in split.keep]
            if len(n.keep) < 2:
                continue
        big = max(n.keep, key=lambda i: (size[i], -i))
        # An empty output read late counts too (cuDNN's batch norm reserve,
        # a frozen batch norm's saved statistics): kept, it holds the node,
        # and its largest output with it, until it is read; copied out, it
        # costs nothing, so late outputs that are all empty always are.
        late = [i for i in n.keep if i != big and isinstance(outs[i], torch.Tensor)
                and last[(n.id, i)] > last[(n.id, big)]]
        if late and any(size[i] for i in late):
            # Copy them out or keep them in the node, whichever holds less:
            # a copy duplicates its output from the node's run to the node's
            # end (when the rest are read for the last time); keeping holds
            # the rest until the late ones are read.  A step peaks around the
            # start of its backward, so the choice whose extra spans it loses;
            # otherwise the bytes held over time decide (positions in the
            # trace standing for time).  Batch norm's mean and invstd (its
            # output read by the next operator): copied.  Layer norm's (its
            # output read by the next linear's backward): kept in the node.
            p = pos[n.id]
            rest = [i for i in n.keep if i not in late]
            end_all = max(last[(n.id, i)] for i in n.keep)
            end_rest = max(last[(n.id, i)] for i in rest)
            # A step peaks around the start of its backward: an interval
            # that spans it decides alone.
            dup_spans = p < boundary <= end_rest
            waste_spans = end_rest < boundary <= end_all
            if dup_spans != waste_spans:
                copy = waste_spans
            else:
                total = sum(size.values())
                saved = total * (end_all - end_rest) - sum(
                    size[i] * (last[(n.id, i)] - end_rest) for i in late)
                copy = saved > sum(size[i] * (end_rest - p) for i in late)
            if not copy:
                late = []
        for i in late:
            cid = "%s#%d" % (n.id, i)
            st = storage_key(outs[i])
            if st and holders.get(st[0]) == 1:
                # A storage of its own: moved, not copied (no second copy
                # while the node is resident; see MOVE_OP).
                moved[cid] = st[1]
                op, label = MOVE_OP, "output %d of %s, moved out"
            else:
                op, label = "aten.clone.default", "copy of output %d of %s"
            new_nodes.append(JNode(cid, n.kind, [{"op": op,
                                                  "args": [{"node": n.id, "index": i}],
                                                  "kwargs": {}}],
                                   label % (i, n.calls[0]["op"])))
            rename[(n.id, i)] = {"node": cid}
    J.nodes = new_nodes
    J.reindex()
    copies = {r["node"] for r in rename.values() if "index" not in r}

    def redirect(r):
        key = (r["node"], r.get("index"))
        return dict(rename[key]) if key in rename else r
    for n in J.nodes:
        if n.id in copies:
            continue
        for c in n.calls:
            c["args"] = _map_refs(c["args"], redirect)
            c["kwargs"] = {k: _map_refs(a, redirect) for k, a in c["kwargs"].items()}
    J.loss = _map_refs(J.loss, redirect)
    J.outs = [_map_refs(r, redirect) for r in J.outs]
    J.grads = [_map_refs(g, redirect) if g is not None else None for g in J.grads]
    J.input_grads = [_map_refs(g, redirect) if g is not None else None for g in J.input_grads]

    # Random nodes draw from the global generator on their first
    # computation, so they must run first in the model's order: each comes
    # after the random node before it, unless that one is already among
    # its ancestors.  One without a tensor input (torch.rand(shape)), or
    # two reading the same value (empty_like(y).uniform_() beside
    # empty_like(y).normal_()), could otherwise be scheduled in another
    # order and draw other numbers than eager (an outside review found the
    # second).
    # What each node's calls read, once for both.
    reads = {}
    for n in J.nodes:
        deps = []
        for c in n.calls:
            ref_nodes(c["args"], deps)
            ref_nodes(list(c["kwargs"].values()), deps)
        reads[n.id] = [d for d in dict.fromkeys(deps) if d != n.id]
    # Both orders go through ordering tokens (_order_token), so that the
    # earlier node's value need not be held for the later one.
    tokens = {}
    prev, k, last = None, 0, {}     # last[v]: the latest random node among v and its ancestors
    for n in J.nodes:
        seen = max([last.get(d, -1) for d in reads[n.id] + list(n.after)], default=-1)
        if n.random:
            if prev is not None and seen < k - 1:
                t = _order_token(J, prev.id, reads, tokens)
                last[t] = k - 1
                n.after = tuple(n.after) + (t,)
            prev, seen, k = n, k, k + 1
        last[n.id] = seen
    # A node that updates a buffer or parameter in place (a batch norm's
    # running statistics) does so on its first computation, so two that
    # update the same one must first run in the model's order: each comes
    # after the one before it, unless that one is already an ancestor.  A
    # batch norm called on two branches (a siamese network) had its two
    # updates swapped by a schedule that recomputed (an outside review).
    prev_w = {}
    for n in J.nodes:
        for nm in _ext_writes(n):
            p = prev_w.get(nm)
            if p is not None and not _reaches(J, reads, n.id, p):
                n.after = tuple(n.after) + (_order_token(J, p, reads, tokens),)
            prev_w[nm] = n.id
    _place_tokens(J, tokens)
    # Inputs of each node (what it reads, then what it must come after).
    for n in J.nodes:
        n.inputs = [d for d in dict.fromkeys(reads[n.id] + list(n.after)) if d != n.id]
    # Updates of buffers computed from parameters and buffers alone
    # (num_batches_tracked += 1) run after the schedule: the epilogue.
    ext_only = set()
    for n in J.nodes:
        if n.kind != "input" and all(i in ext_only for i in n.inputs):
            ext_only.add(n.id)
    epi_roots = [s for s in J.side_effects if s in ext_only]
    J.side_effects = [s for s in J.side_effects if s not in ext_only]
    # A vjp graph: the forward's updates of buffers (an EMA's copy_) happen
    # when the module is called, as in eager, so before the backward begins.
    if J.gouts:
        after_grads = set(J.gouts)       # what the output gradients reach
        for n in J.nodes:
            if any(i in after_grads for i in n.inputs):
                after_grads.add(n.id)
        fwd_effects = [x for x in J.side_effects if x not in after_grads]
        # The forward's random operators draw when the module is called, as in
        # eager, so before the backward begins: code between the call and the
        # backward (a dropout on the loss) draws after them.  The last one
        # suffices (each comes after the one before it); a random mask only
        # the backward reads was drawn late (an outside review).
        fwd_random = [n.id for n in J.nodes if n.random and n.id not in after_grads]
        fwd_effects += fwd_random[-1:]
        fwd_effects = [_order_token(J, x, reads, tokens) for x in fwd_effects]
        _place_tokens(J, tokens)
        for g in J.gouts:
            gn = J.byid[g]
            gn.inputs = gn.inputs + [x for x in fwd_effects if x not in gn.inputs]

    def closure(roots):
        seen, stack = set(), list(roots)
        while stack:
            v = stack.pop()
            if v not in seen:
                seen.add(v)
                stack.extend(J.byid[v].inputs)
        return seen
    outs = []
    for r in _output_refs(J):
        ref_nodes(r, outs)
    # The batch is an output too: the caller holds it for the whole step
    # (and the trace's constants are held by the program), so no schedule
    # may count on its bytes coming back when its last reader has run.
    J.outputs = list(dict.fromkeys([n.id for n in J.nodes if n.kind == "input"] + outs))
    needed = closure(J.outputs)
    epi = closure(epi_roots) - needed
    J.epilogue = [n for n in J.nodes if n.id in epi]
    # What the epilogue reads of the graph (spectral_norm's new u and v,
    # a step counter's new value, computed in the forward) must be resident
    # when the epilogue runs: at the end of the step (an output), or, in a
    # vjp graph, where the forward ends (an input of every output gradient:
    # the first one computed is where the backward begins).
    epi_reads = list(dict.fromkeys(i for n in J.epilogue for i in n.inputs if i in needed))
    if J.gouts:
        for g in J.gouts:
            gn = J.byid[g]
            gn.inputs = gn.inputs + [x for x in epi_reads if x not in gn.inputs]
    else:
        J.outputs = list(dict.fromkeys(J.outputs + epi_reads))
    J.nodes = [n for n in J.nodes if n.id in needed or n.kind == "input"]
    J.reindex()
    used = {}   # outputs of multi-output nodes still read by someone

    def note(nid, idx):
        used.setdefault(nid, set()).add(idx)
    for m in J.nodes + J.epilogue:
        for c in m.calls:
            _scan_refs(c["args"], note)
            _scan_refs(list(c["kwargs"].values()), note)
    for r in _output_refs(J):
        _scan_refs(r, note)
    for n in J.nodes:
        if n.n_out is not None:
            n.keep = sorted(i for i in used.get(n.id, ()) if i is not None)

    # Kinds.
    if J.gouts:
        # A vjp graph: the backward is what the outputs' gradients reach.
        # The outputs (the caller's) and their gradients (autograd's) are
        # computed once and held to the end: their bytes cannot come back
        # by freeing them, so no schedule may free one to recompute it.
        for nid in set(J.gouts) | {x for r in J.outs for x in ref_nodes(r, [])}:
            if J.byid[nid].kind != "input":
                J.byid[nid].once = True
        down = set(J.gouts)
        for n in J.nodes:
            if n.kind == "input" or n.id in down:
                continue
            n.kind = "backward" if any(i in down for i in n.inputs) else "forward"
            if n.kind == "backward":
                down.add(n.id)
    else:
        _mark_loss(J)
    _finish_sizes(J, model, inputs, targets, measure, say, moved)


def _mark_loss(J):
    """Kinds of a training step's nodes: the loss, the backward (what the
    loss reaches), the forward."""
    loss_nodes = list(dict.fromkeys(ref_nodes(J.loss, [])))
    if len(loss_nodes) != 1 or J.byid[loss_nodes[0]].kind == "input":
        raise JointError("the loss is not computed by one node of the graph (%s)" % loss_nodes)
    loss_id = loss_nodes[0]
    down = {loss_id}
    for n in J.nodes:
        if n.kind == "input" or n.id == loss_id:
            continue
        n.kind = "backward" if any(i in down for i in n.inputs) else "forward"
        if n.kind == "backward":
            down.add(n.id)
    J.byid[loss_id].kind = "loss"


def _finish_sizes(J, model, inputs, targets, measure, say, moved):
    """Sizes, workspaces and costs of the nodes, measured; J.source."""
    say("measuring sizes" + (" and times" if measure else ""))
    binding = bind_model(J, model, inputs, targets, clone_buffers=True)
    stats = run_plain(J, binding, seed=0, stats=True)
    for n in J.nodes:
        if n.kind == "input":
            t = binding.batch[n.id]
            st = storage_key(t)
            n.mem = st[1] if st else 0
        else:
            # workspace: what the node holds while it runs beyond its kept
            # outputs: the outputs it drops at once and whatever else the
            # allocator held inside its operators (at least the former).
            n.mem, n.dropped, n.cost, peak = stats[n.id]
            n.workspace = max(n.dropped, peak - n.mem)
            if n.id in moved:
                # It allocates nothing; its bytes are the output it takes
                # over, counted (as the simulator frees nodes whole) in its
                # producer too while both are resident.
                n.mem, n.dropped, n.workspace = moved[n.id], 0, 0
    if measure:
        times = measure_times(J, binding, say)
        for n in J.nodes:
            if n.kind != "input":
                n.cost = times[n.id]
    J.source = {
        "exporter": "remat_torch.joint v%d" % JOINT_VERSION,
        "torch": torch.__version__,
        # Operators' temporaries (the workspace) depend on the thread count.
        "threads": torch.get_num_threads(),
        "params_bytes": sum(p.numel() * p.element_size()
                            for p in dict(model.named_parameters()).values()),
        "buffers_bytes": sum(b.numel() * b.element_size()
                             for b in dict(model.named_buffers()).values()),
        "param_grads_bytes": sum(_prod(s) * torch.empty((), dtype=getattr(torch, d)).element_size()
                                 for (nm, s, d), g in zip(J.params, J.grads) if g is not None),
        "cost": "measured time of each node in microseconds (median of runs, alone)" if measure
                else "estimated: 2 per multiply-add in convolutions and matrix products, "
                     "1 per element otherwise, 0 for views",
        "in_graph": "batch, activations, activation gradients, parameter gradients "
                    "(outputs, resident to the end of the step)",
        "excluded": "parameters, buffers, optimizer state: add params_bytes and buffers_bytes "
                    "for the device footprint",
    }


def _prod(xs):
    p = 1
    for x in xs:
        p *= x
    return p


# ------------------------------------------------------------ binding

class Binding:
    """The tensors a run reads: parameters and buffers by name, and the
    value of every input node."""

    def __init__(self, params, buffers, batch, gouts=()):
        self.params, self.buffers, self.batch = params, buffers, batch
        self.gouts = list(gouts)   # a vjp graph's output gradients (GRAD_OUTPUT_OP)

    def external_storages(self):
        out = set()
        for t in list(self.params.values()) + list(self.buffers.values()):
            k = storage_key(t)
            if k:
                out.add(k[0])
        return out


def bind_model(J, model, inputs, targets=(), clone_buffers=False):
    """Bind the program to a model's parameters and buffers and a batch."""
    pd, bd = model_tensors(model)
    missing = [n for n, _, _ in J.params if n not in pd] + [n for n, _, _ in J.buffers
                                                           if n not in bd]
    if missing:
        raise JointError("the model has no parameter or buffer %s" % missing[0])
    buffers = {n: (bd[n].detach().clone() if clone_buffers else bd[n]) for n, _, _ in J.buffers}
    if J.gouts:
        return Binding({n: pd[n] for n, _, _ in J.params}, buffers, bind_batch(J, inputs),
                       targets)
    return Binding({n: pd[n] for n, _, _ in J.params}, buffers,
                   bind_batch(J, inputs, targets))


def bind_batch(J, inputs, targets=()):
    batch = list(inputs) + list(targets)
    want = J.n_model_inputs + J.n_targets
    if len(batch) != want:
        raise JointError("the step takes %d model inputs and %d targets, got %d tensors"
                         % (J.n_model_inputs, J.n_targets, len(batch)))
    out = dict(zip(J.inputs, batch))
    out.update(J.consts)
    return out


# ------------------------------------------------------------ running

def seed_of(base, index):
    """The seed a random node runs under: from the step's seed and its position."""
    return (base * 1000003 + index * 7919 + 17) % (2 ** 63 - 1)


class Rng:
    """How random nodes draw, for the executor and compiled programs alike:
    "seeded" (every computation under seed_of(seed, the node's index)) or
    "global" (the first computation draws from PyTorch's generator, as
    eager does: the same draws when the schedule first computes the random
    nodes in the trace's order; a recomputation replays the generator
    state it saw).  Called with key (node id, call number).  computes, the
    schedule's computations per node when known: a generator state (5 KiB
    on the CPU) is then kept only for the random nodes computed again, and
    dropped after their last computation (an outside review measured 10 KiB
    per dropout held to the end of every step, beyond the plan's peak)."""

    def __init__(self, mode="global", seed=0, index=None, computes=None):
        self.mode, self.seed, self.index = mode, seed, index or {}
        self.computes = computes
        self.states = {}        # key -> [cpu state, cuda states, computations left]
        self.drawn = set()

    def __call__(self, key, op, args, kwargs):
        devs = _devices_of(tree_flatten((args, kwargs))[0])
        if self.mode == "seeded":
            with torch.random.fork_rng(devices=devs):
                torch.manual_seed(seed_of(self.seed, self.index[key[0]]))
                return op(*args, **kwargs)
        st = self.states.get(key)
        if st is None:
            if key in self.drawn:
                raise JointError("random node %s computed again, but the schedule it was "
                                 "given computes it once: its draws cannot be replayed"
                                 % key[0])
            self.drawn.add(key)
            left = None if self.computes is None else self.computes.get(key[0], 1) - 1
            if left is None or left > 0:
                # (an operator on CUDA tensors alone draws from their
                # devices' generators: 16 bytes each, the CPU's not kept)
                cpu = not devs or any(isinstance(t, torch.Tensor) and t.device.type == "cpu"
                                      for t in tree_flatten((args, kwargs))[0])
                self.states[key] = [torch.get_rng_state() if cpu else None,
                                    [torch.cuda.get_rng_state(d) for d in devs], left]
            return op(*args, **kwargs)
        if st[2] is not None:
            st[2] -= 1
            if st[2] <= 0:
                del self.states[key]
        with torch.random.fork_rng(devices=devs):
            if st[0] is not None:
                torch.set_rng_state(st[0])
            for d, s in zip(devs, st[1]):
                torch.cuda.set_rng_state(s, d)
            return op(*args, **kwargs)


# Arguments an operator does not read in the mode the step runs it in:
# batch norm's backward in training uses the saved batch statistics, not
# the running ones (which the forward has updated by then).  op -> (index
# of the training flag, or None where the operator is only ever called in
# training, indices not read).  cuDNN's and MIOpen's backwards take the
# running statistics and ignore them; autograd calls them only for a batch
# norm in training (eval mode's backward is native_batch_norm_backward).
UNREAD_ARGS = {"aten.native_batch_norm_backward.default": (7, (3, 4)),
               "aten.cudnn_batch_norm_backward.default": (None, (3, 4)),
               "aten.miopen_batch_norm_backward.default": (None, (3, 4))}


def _unread(call):
    """Indices of arguments a call does not read (UNREAD_ARGS)."""
    u = UNREAD_ARGS.get(call["op"])
    if u is None:
        return ()
    if u[0] is None:
        return u[1]
    args = call["args"]
    return u[1] if len(args) > u[0] and args[u[0]] is True else ()


def _names_read(refs, names):
    """The parameters and buffers among names that the references read
    (directly or through views)."""
    out = set()

    def scan(r):
        if isinstance(r, dict):
            nm = r.get("param") or r.get("buffer")
            if nm in names:
                out.add(nm)
            elif "view" in r:
                scan(r["args"])
                scan(list(r.get("kwargs", {}).values()))
        elif isinstance(r, list):
            for a in r:
                scan(a)
    scan(list(refs))
    return out


def read_mutated(J, op_of):
    """The parameters and buffers the step writes that some operator also
    reads without writing them (cached on J)."""
    cached = getattr(J, "_read_mutated", None)
    if cached is not None and cached[0] is J.mutated:
        return cached[1]
    mutated, out = set(J.mutated), set()
    if mutated:
        for n in J.nodes + J.epilogue:
            for c in n.calls:
                w = written_args(op_of(c["op"], n.id), c["args"])
                wi, wn = {i for i, _ in w}, {nm for _, nm in w}
                wi.update(_unread(c))
                out |= _names_read([a for i, a in enumerate(c["args"]) if i not in wi] +
                                   [a for k, a in c["kwargs"].items() if k not in wn], mutated)
        out |= _names_read(J.result_refs(), mutated)
    J._read_mutated = (J.mutated, out)
    return out


class Runner:
    """Evaluates node programs on an environment of node values: resolves
    references (deriving views again from their owners), seeds random
    nodes, and sends writes to parameters and buffers to the real tensors on
    a node's first run and to scratch copies on later runs; readers of a
    written buffer see the value it had when the step began (a copy taken
    just before the first write, only for the buffers something reads
    without writing: batch norm's running statistics, in training, are only
    written)."""

    def __init__(self, J, binding, seed, flops=False, rng="seeded", computes=None):
        self.J, self.b, self.seed = J, binding, seed
        self.env = {}
        self.index = {n.id: i for i, n in enumerate(J.nodes + J.epilogue)}
        # "seeded" or "global"; computes: the schedule's computations per node
        self.rng = Rng(rng, seed, self.index, computes)
        self.ran = set()
        self.first = True
        self.ops = {}
        self.snap, self.scratch = {}, {}
        self.flops = 0 if flops else None
        # Snapshots are taken just before the first write (num_batches_tracked
        # is written by the epilogue: its snapshot never spans the step).
        self.to_snap = read_mutated(J, self.op)

    def op(self, name, nid):
        if name == GRAD_OUTPUT_OP:
            return None
        o = self.ops.get(name)
        if o is None:
            o = resolve_op(name)
            if o is None:
                raise JointError("node %s: operator %s cannot be replayed (torch %s has no "
                                 "such operator)" % (nid, name, torch.__version__))
            self.ops[name] = o
        return o

    def external(self, r, written):
        nm = r.get("param") or r.get("buffer")
        t = self.b.params.get(nm) if "param" in r else self.b.buffers.get(nm)
        if t is None:
            raise JointError("the program reads %s %s, which the model does not have"
                             % ("parameter" if "param" in r else "buffer", nm))
        if written:
            if self.first:
                if nm in self.to_snap and nm not in self.snap:
                    with torch.no_grad():
                        self.snap[nm] = t.detach().clone()
                return t
            if nm not in self.scratch:
                self.scratch[nm] = t.detach().clone()
            return self.scratch[nm]
        if nm in self.snap:
            return self.snap[nm]
        return t.detach()

    def value(self, r, prev, nid, written=False):
        if isinstance(r, list):
            return [self.value(a, prev, nid) for a in r]
        if not isinstance(r, dict):
            return r
        if "node" in r:
            v = self.env[r["node"]]
            return v[r["index"]] if "index" in r else v
        if "prev" in r:
            return prev[r["prev"]]
        if "param" in r or "buffer" in r:
            return self.external(r, written)
        if "view" in r:
            o = self.op(r["view"], nid)
            out = o(*[self.value(a, prev, nid) for a in r["args"]],
                    **{k: self.value(a, prev, nid) for k, a in r.get("kwargs", {}).items()})
            return out[r["index"]] if "index" in r else out
        return decode_const(r)

    def call(self, n):
        """Run node n's program and return its value (for several outputs,
        a tuple with None for the outputs it does not keep)."""
        from remat_torch.export import op_flops
        self.first = n.id not in self.ran
        prev = []
        for c in n.calls:
            o = self.op(c["op"], n.id)
            if o is None:
                prev.append(self.b.gouts[c["args"][0]])
                continue
            w = written_args(o, c["args"])
            wi, wn = {i for i, _ in w}, {nm for _, nm in w}
            args = [self.value(a, prev, n.id, written=(i in wi)) for i, a in enumerate(c["args"])]
            kwargs = {k: self.value(a, prev, n.id, written=(k in wn))
                      for k, a in c["kwargs"].items()}
            if n.random:
                out = self.rng((n.id, len(prev)), o, args, kwargs)
            else:
                out = callable_of(c["op"], o)(*args, **kwargs)
            if self.flops is not None:
                outs = out if isinstance(out, (tuple, list)) else (out,)
                self.node_flops += op_flops(o._schema.name, args, outs)
            prev.append(out)
        self.ran.add(n.id)
        return prev[-1]

    def run_epilogue(self):
        """The buffer updates computed from parameters and buffers alone,
        after the schedule (their values are dropped at once)."""
        for n in self.J.epilogue:
            self.env[n.id] = self.call(n)
        for n in self.J.epilogue:
            del self.env[n.id]

    def kept(self, n, v):
        if n.keep is None:
            return v
        return tuple(v[i] if i in n.keep else None for i in range(len(v)))

    def results(self):
        """(loss, grads): the loss (for a vjp graph, the list of outputs)
        and one gradient per parameter (None where it has none)."""
        J = self.J
        loss = self.value(J.loss, [], "loss") if J.loss is not None else \
            [self.value(r, [], "output") for r in J.outs]
        grads = [self.value(g, [], "gradient") if g is not None else None for g in J.grads]
        return loss, grads

    def outputs(self):
        """A vjp graph's outputs (once the forward part has run)."""
        return [self.value(r, [], "output") for r in self.J.outs]

    def input_grads(self):
        return [self.value(g, [], "gradient") if g is not None else None
                for g in self.J.input_grads]


def run_plain(J, binding, seed=0, values=False, stats=False):
    """Run every node once, in order, freeing nothing.

    Returns (loss, grads); with values=True the value of every node; with
    stats=True per node (mem, dropped, flops, peak): the bytes of the new
    storages it keeps, of those it drops at once, its FLOPs, and the most
    bytes the allocator held above what it held when the node began, while
    the node ran (remat_torch/meter.py; each node measured alone)."""
    from remat_torch.meter import AllocatorMeter, device_of
    R = Runner(J, binding, seed, flops=stats)
    device = device_of(list(binding.params.values()) + list(binding.batch.values()))
    ext = binding.external_storages()
    held = set()
    out = {}
    with torch.no_grad():
        for n in J.nodes:
            if n.kind == "input":
                R.env[n.id] = binding.batch[n.id]
                held.update(value_storages(R.env[n.id]))
        for n in J.nodes:
            if n.kind == "input":
                continue
            R.node_flops = 0
            if stats:
                with AllocatorMeter(device) as m:
                    v = R.call(n)
            else:
                v = R.call(n)
            if stats:
                all_new = {p: b for p, b in value_storages(v).items()
                           if p not in held and p not in ext}
                kv = R.kept(n, v) if isinstance(v, (tuple, list)) else v
                kept = {p: b for p, b in value_storages(kv).items() if p in all_new}
                out[n.id] = (sum(kept.values()), sum(b for p, b in all_new.items()
                                                     if p not in kept), R.node_flops, m.peak)
                v = kv
                held.update(kept)
            elif n.keep is not None:
                v = R.kept(n, v)
            R.env[n.id] = v
        if values:
            return dict(R.env)
        if stats:
            return out
        R.run_epilogue()
        return R.results()


def measure_times(J, binding, say, repeats=5):
    """Median time (us) of each node over `repeats` plain runs, after one
    warm-up run."""
    cuda = any(t.is_cuda for t in binding.params.values())
    samples = {n.id: [] for n in J.nodes if n.kind != "input"}
    with torch.no_grad():
        for rep in range(repeats + 1):
            say("timing run %d of %d" % (rep + 1, repeats + 1))
            R = Runner(J, binding, seed=0)
            for n in J.nodes:
                if n.kind == "input":
                    R.env[n.id] = binding.batch[n.id]
                    continue
                if cuda:
                    torch.cuda.synchronize()
                t0 = time.perf_counter()
                v = R.call(n)
                if cuda:
                    torch.cuda.synchronize()
                t1 = time.perf_counter()
                if rep:
                    samples[n.id].append((t1 - t0) * 1e6)
                R.env[n.id] = R.kept(n, v) if n.keep is not None else v
    return {k: round(sorted(v)[len(v) // 2], 3) for k, v in samples.items()}


# ------------------------------------------------------ files in and out

def _node_dict(n):
    d = {"id": n.id, "kind": n.kind, "mem": int(n.mem)}
    if n.kind != "input":
        c = float(n.cost)
        d["cost"] = int(c) if c == int(c) and abs(c) < 2 ** 53 else round(c, 3)
    if n.workspace:
        d["workspace"] = int(n.workspace)
    if n.dropped is not None and n.dropped != n.workspace:
        d["dropped"] = int(n.dropped)
    if n.inputs:
        d["inputs"] = n.inputs
    if n.label:
        d["label"] = n.label
    if n.calls:
        d["call"] = n.calls
    if n.keep is not None:
        d["keep"] = n.keep
        d["n_out"] = n.n_out
    if n.random:
        d["random"] = True
    if n.once:
        d["recompute"] = False
    return d


def _node_of(d, where):
    n = JNode(d["id"], d.get("kind", "op"), d.get("call", []), d.get("label", ""))
    n.mem, n.workspace = int(d["mem"]), int(d.get("workspace", 0))
    n.dropped = int(d.get("dropped", n.workspace))
    n.cost = float(d.get("cost", 0 if n.kind == "input" else 1))
    n.inputs = list(d.get("inputs", []))
    n.random = bool(d.get("random", False))
    n.once = d.get("recompute") is False
    if "keep" in d:
        n.keep, n.n_out = list(d["keep"]), d.get("n_out")
    if n.kind != "input" and not n.calls:
        raise JointError("%s: node %s has no \"call\" to run" % (where, n.id))
    return n


def to_graph(J, name):
    """The remat-graph dict of a Joint (nodes as dicts, program included)."""
    nodes = [_node_dict(n) for n in J.nodes]
    program = {
        "format": JOINT_FORMAT, "version": JOINT_VERSION,
        "params": [list(p) for p in J.params], "buffers": [list(b) for b in J.buffers],
        "inputs": J.inputs, "model_inputs": J.n_model_inputs, "targets": J.n_targets,
        "consts": sorted(J.consts), "loss": J.loss, "grads": J.grads,
        "outs": J.outs, "gouts": J.gouts, "input_grads": J.input_grads,
        "side_effects": J.side_effects, "mutated": J.mutated,
        "epilogue": [_node_dict(n) for n in J.epilogue],
    }
    return {"format": "remat-graph", "version": 1, "name": name,
            "cost_unit": "us" if "measured" in J.source.get("cost", "") else "flop",
            # Held for the whole step outside the graph (parameter gradients
            # are in it): what `remat plan --device-memory` subtracts.
            "fixed_bytes": J.source["params_bytes"] + J.source["buffers_bytes"],
            "source": J.source, "program": program, "nodes": nodes, "outputs": J.outputs}


def graph_text(graph):
    """Compact JSON, one node per line."""
    head = {k: v for k, v in graph.items() if k not in ("nodes", "outputs")}
    lines = [json.dumps(n, separators=(",", ":"), allow_nan=False) for n in graph["nodes"]]
    text = json.dumps(head, separators=(",", ":"), allow_nan=False)[:-1]
    text += ',"nodes":[\n' + ",\n".join(lines) + "\n]"
    return text + ',"outputs":' + json.dumps(graph["outputs"], separators=(",", ":")) + "}\n"


def write_graph(graph, path):
    """graph_text(), written atomically (gzip for .gz; "-": stdout)."""
    write_text(graph_text(graph), path)


def tensors_path(graph_path):
    """G.pt beside G.json (or G.json.gz)."""
    base = graph_path[:-3] if graph_path.endswith(".gz") else graph_path
    return os.path.splitext(base)[0] + ".pt"


def save_tensors(J, binding, path):
    """The parameters, buffers and batch a joint graph was traced with."""
    data = {"format": JOINT_FORMAT, "params": {k: v.detach() for k, v in binding.params.items()},
            "buffers": {k: v.detach() for k, v in binding.buffers.items()},
            "batch": dict(binding.batch)}
    with replacing(path) as f:
        torch.save(data, f)


def from_graph(g, where="graph"):
    """A Joint from a remat-graph dict that carries a program."""
    prog = g.get("program")
    if not isinstance(prog, dict) or prog.get("format") != JOINT_FORMAT:
        raise JointError("%s: not a joint graph (no \"program\"; export it with "
                         "python3 -m remat_torch export MODEL --joint)" % where)
    if prog.get("version") != JOINT_VERSION:
        raise JointError("%s: joint program version %s, this reader knows %d"
                         % (where, prog.get("version"), JOINT_VERSION))
    J = Joint()
    J.params = [tuple(p) for p in prog["params"]]
    J.buffers = [tuple(b) for b in prog["buffers"]]
    J.inputs = list(prog["inputs"])
    J.n_model_inputs, J.n_targets = prog["model_inputs"], prog["targets"]
    J.loss, J.grads = prog["loss"], prog["grads"]
    J.outs, J.gouts = prog.get("outs", []), prog.get("gouts", [])
    J.input_grads = prog.get("input_grads", [])
    J.side_effects, J.mutated = prog["side_effects"], prog["mutated"]
    J.source = g.get("source", {})
    for d in g["nodes"]:
        J.add(_node_of(d, where))
    J.epilogue = [_node_of(d, where) for d in prog.get("epilogue", [])]
    J.outputs = list(g.get("outputs", []))
    J.consts = {c: None for c in prog.get("consts", [])}   # tensors: from the .pt file
    check_replayable(J, where)
    return J


def check_replayable(J, where="graph"):
    """Every operator of the program exists in this torch; names the first
    node and operator that does not."""
    def scan(r, nid):
        if isinstance(r, dict):
            if "view" in r:
                if resolve_op(r["view"]) is None:
                    raise JointError("%s: node %s: operator %s cannot be replayed (torch %s has "
                                     "no such operator)" % (where, nid, r["view"], torch.__version__))
                scan(r["args"], nid)
                scan(list(r.get("kwargs", {}).values()), nid)
        elif isinstance(r, list):
            for a in r:
                scan(a, nid)
    for n in J.nodes:
        reads = []
        for c in n.calls:
            ref_nodes(c.get("args", []) if isinstance(c, dict) else [], reads)
            ref_nodes(list(c.get("kwargs", {}).values()) if isinstance(c, dict) else [], reads)
        missing = [r for r in reads if r not in J.byid or (r not in n.inputs and r != n.id)]
        if missing:
            raise JointError("%s: node %s: its call reads %s, which is not among its inputs"
                             % (where, n.id, missing[0]))
        for c in n.calls:
            if not isinstance(c, dict) or "op" not in c:
                raise JointError("%s: node %s: a call without \"op\"" % (where, n.id))
            if c["op"] != GRAD_OUTPUT_OP and resolve_op(c["op"]) is None:
                raise JointError("%s: node %s: operator %s cannot be replayed (torch %s has no "
                                 "such operator)" % (where, n.id, c["op"], torch.__version__))
            scan(c.get("args", []), n.id)
            scan(list(c.get("kwargs", {}).values()), n.id)
    scan(J.result_refs(), "(outputs)")


def load_graph(path):
    return json.loads(read_text(path))


# ------------------------------------------------------ eager reference

def eager_step(model, inputs, loss_fn, targets=(), J=None, seed=0):
    """Plain PyTorch: loss = loss_fn(model(*inputs), *targets);
    loss.backward().  Returns (loss, grads) with one gradient per parameter
    of J (None where the loss does not depend on it); the model's .grad
    fields are left as they were (its buffers are updated, as by any
    training step).  With J, random operators run under the seeds the
    executor gives J's random nodes, in the same order, so dropout draws
    the same masks."""
    from torch.utils._python_dispatch import TorchDispatchMode
    seeds = []
    if J is not None:
        index = {n.id: i for i, n in enumerate(J.nodes + J.epilogue)}
        seeds = [seed_of(seed, index[nid]) for nid in J.random_nodes]
    count = [0]

    class Seeding(TorchDispatchMode):
        def __torch_dispatch__(self, func, types, args=(), kwargs=None):
            kwargs = kwargs or {}
            if func._schema.name.split("::")[-1] in RANDOM_OPS and J is not None:
                k = count[0]
                count[0] += 1
                if k >= len(seeds):
                    raise JointError("eager mode ran more random operators than the graph has "
                                     "random nodes (%d)" % len(seeds))
                with torch.random.fork_rng(devices=_devices_of(tree_flatten(args)[0])):
                    torch.manual_seed(seeds[k])
                    return func(*args, **kwargs)
            return func(*args, **kwargs)

    params = dict(model.named_parameters())
    names = [p[0] for p in J.params] if J is not None else list(params)
    saved = {n: params[n].grad for n in names}
    for n in names:
        params[n].grad = None
    try:
        train_mode(model)
        with Seeding():
            out = model(*inputs)
            loss = loss_fn(out, *targets)
        if J is not None and count[0] != len(seeds):
            raise JointError("eager mode ran %d random operators, the graph has %d random nodes"
                             % (count[0], len(seeds)))
        loss.backward()
        grads = [params[n].grad for n in names]
    finally:
        for n in names:
            params[n].grad = saved[n]
    return loss.detach(), grads
