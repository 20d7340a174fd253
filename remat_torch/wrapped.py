"""A module that trains with a plan (issue 29): remat_torch.wrap(model,
example_inputs, budget=...) returns an nn.Module used like the model.

    m = remat_torch.wrap(model, (x,), budget="60%")
    out = m(x)                      # what the model returns
    loss_fn(out, y).backward()      # .grad as eager loss.backward() leaves it
    opt.step()

The planned graph is the module's forward and backward, with the gradients
of its outputs as nodes that come after every output (joint.build_vjp):
the user's loss stays in eager PyTorch.  Calling the module runs the
forward part of the schedule (the steps before the first output gradient)
inside an autograd.Function and keeps only what the schedule keeps; when
autograd reaches the outputs, the Function's backward runs the rest,
recomputing what the plan recomputes, and hands autograd the gradients of
the parameters (and of inputs that require grad): accumulation into .grad,
tensor hooks, GradScaler and optimizers work unchanged.

- eval(), torch.no_grad() and inference_mode: the model's own forward,
  nothing kept, nothing planned.  wrap() never changes train/eval mode.
- Each new signature (input shapes, strides, dtypes, devices, which inputs
  require grad, non-tensor arguments, autocast state, which parameters are
  trained, the modules' flags, plain attributes, unregistered tensors and
  hooks: Wrapped.state) is planned once, on its first call, with a one-line notice;
  plans are cached in memory and on disk (cache=, default
  $REMAT_CACHE or ~/.cache/remat), keyed by a hash of the graph, the
  budget, the planner, its time limit and remat's version.
- Random operators (dropout) draw from PyTorch's generator on their first
  computation, as eager does, and replay the state they saw when
  recomputed: the same masks as eager under the same seed when the
  schedule first computes them in the model's order (the plain order does).
- Under autocast the trace holds the casts autocast made; the schedule
  runs with autocast off (its casts are operators of the graph).
"""
import dis
import functools
import hashlib
import inspect
import json
import os
import sys
import tempfile
import types
import time

from remat_torch import api as A, storage_nbytes, write_text
from remat_torch import joint as JT
from remat_torch.compiled import Program
from remat_torch.executor import Execution, Result, check_schedule, parse_schedule

try:
    import torch
    from torch.utils._pytree import tree_flatten
except ImportError:
    torch = tree_flatten = None

_REMAT_VERSION = {}
# Plans a wrapped module keeps in memory (the least recently used go first).
MAX_PLANS = 16
# A module's attributes of these types are part of a plan's signature.
_PLAIN = frozenset((bool, int, float, str, type(None)))
# Module hooks: run while a signature is traced, part of its signature.
_MODULE_HOOKS = ("_forward_hooks", "_forward_pre_hooks", "_backward_hooks",
                 "_forward_hooks_with_kwargs", "_forward_pre_hooks_with_kwargs")
_GLOBAL_HOOKS = ("_global_forward_hooks", "_global_forward_pre_hooks",
                 "_global_backward_hooks")


def remat_version(remat=None):
    """`remat --version`, once per binary."""
    path = A.find_remat(remat)
    if path not in _REMAT_VERSION:
        rc, so, se = A.run_remat(["--version"], path)
        _REMAT_VERSION[path] = (so or se).strip()
    return _REMAT_VERSION[path]


def default_cache_dir():
    d = os.environ.get("REMAT_CACHE")
    if d:
        return d
    base = os.environ.get("XDG_CACHE_HOME") or os.path.join(os.path.expanduser("~"), ".cache")
    return os.path.join(base, "remat")


class Planned:
    """One signature's plan: the graph (J), the outputs' layout, the
    checked schedule, the step at which the backward begins, the trained
    parameters it returns gradients for, remat's summary, and the schedule
    compiled to Python (compiled.Program: its forward and backward
    segments)."""

    def __init__(self, J, layout, steps, summary, seconds, cached, trained):
        self.J, self.layout, self.summary = J, layout, summary
        self.plan = check_schedule(J, steps)
        gouts = set(J.gouts)
        self.split = next((i for i, (op, v) in enumerate(self.plan.steps)
                           if op == "compute" and v in gouts), len(self.plan.steps))
        self.seconds, self.cached = seconds, cached
        self.param_names = [n for n, _, _ in J.params]
        self.buffer_names = [n for n, _, _ in J.buffers]
        self.trained_names = [n for n in self.param_names if n in trained]
        self.trained_at = [i for i, n in enumerate(self.param_names) if n in trained]
        # Which output gradients each trained parameter's gradient reads: when
        # autograd gives none of them (the loss uses other outputs only), the
        # parameter gets no gradient (None), as in eager, not zeros.
        self.grad_gouts = _gouts_read(J, [J.grads[i] for i in self.trained_at])
        self.igrad_gouts = _gouts_read(J, J.input_grads)
        # A gradient that reads none (torch.normal's zeros for its mean) is
        # eager's when an output it reaches in the forward gets a gradient,
        # else None (zeros came back for a mean only an unused output read).
        self.grad_outs = _outs_reached(J, layout, self.trained_names)
        # The outputs are the caller's and the output gradients autograd's:
        # the program lets them go after their last read (the schedule,
        # which cannot know whether the caller keeps them, counts them to
        # the end of the step).
        release = [nid for r in J.outs for nid in JT.ref_nodes(r, [])
                   if J.byid[nid].kind != "input"] + list(J.gouts)
        self.program = Program(J, self.plan, cuts=[self.split], epilogue_at=0, outs_at=0,
                               release=release)
        # what a compiled run reports (.last): the plan's figures, nothing measured
        self.figures = Result(simulated_peak=self.plan.peak, held_peak=self.plan.held_peak,
                              cost=self.plan.cost, computes=self.plan.computes,
                              recomputes=self.plan.recomputes, measured_peak=None,
                              real_peak=None, loss=None)
        self.last = None


class _Call:
    """What one call of a wrapped module hands its Function besides the
    tensors autograd tracks."""
    __slots__ = ("pl", "params", "buffers", "interpret")

    def __init__(self, pl, params, buffers, interpret):
        self.pl, self.params, self.buffers, self.interpret = pl, params, buffers, interpret


class _PlanFunction(torch.autograd.Function if torch is not None else object):
    """forward: the schedule's forward part; backward: the rest."""

    @staticmethod
    def forward(ctx, call, *tensors):
        pl = call.pl
        xs = tensors[len(pl.trained_names):]
        X = [x.detach() for x in xs]
        with JT.no_autocast():
            if call.interpret:
                J = pl.J
                b = JT.Binding(dict(zip(pl.param_names, call.params)),
                               dict(zip(pl.buffer_names, call.buffers)), JT.bind_batch(J, X))
                ex = Execution(J, b, 0, pl.plan, rng="global")
                ex.advance(pl.split)
                with torch.no_grad():
                    ex.R.run_epilogue()
                    outs = ex.R.outputs()
                state = ex
            else:
                rng = JT.Rng("global", computes=pl.plan.counts())
                with torch.no_grad():
                    live, outs = pl.program.segments[0](call.params, call.buffers, X, None, None,
                                                        rng)
                state = (live, rng)
        # The returned tensors get this Function as their grad_fn: what the
        # backward keeps must not be those objects (ctx -> them -> grad_fn ->
        # ctx would keep a forward that is never backpropagated alive until
        # the garbage collector runs), but aliases sharing their storage and
        # version counter, whose versions are checked in the backward (an
        # output or input changed in place meanwhile: an error, as in eager).
        outs = list(outs)
        alias = {id(o): o.detach() for o in outs}
        if call.interpret:
            env = state.R.env
            for k, v in list(env.items()):
                if id(v) in alias:
                    env[k] = alias[id(v)]
        else:
            live = state[0]
            for i, v in enumerate(live):
                if id(v) in alias:
                    live[i] = alias[id(v)]
        # The parameters too: one changed in place before the backward
        # (eager refuses that where it saved the parameter) would give a
        # gradient of neither the old weights nor the new.
        ctx.versions = [(t, t._version) for t in list(alias.values()) + X + list(call.params)]
        ctx.state, ctx.call = state, call
        ctx.in_grad = [x.requires_grad for x in xs]
        ctx.set_materialize_grads(False)
        # An output returned twice (h, h.detach() is one node of the graph)
        # must be two tensors for autograd: the repeat is a view (or, not
        # differentiable, a detached alias).
        diff = set(pl.layout.diff)
        seen = set()
        for k, o in enumerate(outs):
            if id(o) in seen:
                outs[k] = o.view_as(o) if k in diff else o.detach()
            seen.add(id(outs[k]))
        nd = [o for k, o in enumerate(outs) if k not in diff]
        if nd:
            ctx.mark_non_differentiable(*nd)
        return tuple(outs)

    @staticmethod
    def backward(ctx, *grads):
        state, call = ctx.state, ctx.call
        pl = call.pl
        if torch.is_grad_enabled():
            # create_graph=True (a gradient penalty): the schedule's backward
            # runs without recording, so its gradients would carry no
            # history and a penalty would silently add nothing.
            raise RuntimeError("remat_torch: a gradient of a gradient (create_graph=True) "
                               "cannot go through a wrapped module; compute that part "
                               "with the model itself")
        if state is None:
            raise RuntimeError("remat_torch: a wrapped module's backward ran twice for one "
                               "forward (retain_graph=True is not supported: the schedule "
                               "frees what it has used)")
        for t, v in ctx.versions:
            if t._version != v:
                raise RuntimeError("remat_torch: an output, input or parameter of a wrapped "
                                   "module was modified by an inplace operation after its "
                                   "forward (version %d, expected %d); the module's backward "
                                   "may read it, so it refuses whether or not eager's would "
                                   "have (eager refuses only where its backward saved that "
                                   "tensor): change a copy instead (.clone())"
                                   % (t._version, v))
        ctx.state = ctx.versions = None
        given = [g is not None for g in grads]
        G = [_grad_in_layout(grads[k], spec)
             for k, spec in zip(pl.layout.diff, pl.layout.grad_specs)]
        del grads
        with JT.no_autocast():
            if call.interpret:
                ex = state
                ex.R.b.gouts = G
                del G, state
                ex.advance(len(pl.plan.steps))
                with torch.no_grad():
                    res = ex.finish(epilogue=False)
                    igrads = ex.R.input_grads()
                pgrads = res.grads
                res.grads = res.loss = None
                pl.last = A._figures(res)
                del ex, res
            else:
                live, rng = state
                del state
                with torch.no_grad():
                    _, _, pgrads, igrads = pl.program.segments[1](call.params, call.buffers,
                                                                  None, G, live, rng)
                del live, G
                pl.last = pl.figures
        # A gradient that reads output gradients is None when autograd gives
        # none of them, as eager's; one that reads none (torch.normal's
        # zeros for its mean) is what the graph made.
        it = iter(zip(igrads, pl.igrad_gouts))
        have = {i for i, k in enumerate(pl.layout.diff) if given[k]}
        out = [None] + [pgrads[i] if pl.grad_gouts[j] & have or
                        (not pl.grad_gouts[j] and pl.grad_outs[j] & have)
                        else None for j, i in enumerate(pl.trained_at)]
        for g in ctx.in_grad:
            if g:
                ig, reads = next(it)
                out.append(ig if not reads or reads & have else None)
            else:
                out.append(None)
        return tuple(out)


def _gouts_read(J, refs):
    """For each reference (a parameter's gradient, or None), the positions
    in J.gouts of the output gradients it depends on through the graph."""
    pos = {nid: k for k, nid in enumerate(J.gouts)}
    reach, empty = {}, frozenset()
    for n in J.nodes:                   # in execution order: inputs first
        if n.id in pos:
            reach[n.id] = frozenset((pos[n.id],))
        else:
            reach[n.id] = empty.union(*[reach.get(i, empty) for i in n.inputs])
    return [empty.union(*[reach.get(i, empty) for i in JT.ref_nodes(r, [])])
            if r is not None else empty for r in refs]


def _outs_reached(J, layout, names):
    """For each name (a trained parameter), the positions in J.gouts of the
    differentiable outputs whose forward value depends on it."""
    want, dep, empty = set(names), {}, frozenset()
    outs = [JT.ref_nodes(J.outs[k], []) for k in layout.diff]
    left = {nid for o in outs for nid in o}
    for n in J.nodes:                   # in execution order: the forward first
        if not left:
            break
        d = empty.union(*[dep.get(i, empty) for i in n.inputs])
        for c in n.calls:
            got = JT._names_read([c["args"], list(c["kwargs"].values())], want)
            if got:
                d = d | got
        dep[n.id] = d
        left.discard(n.id)
    reach = {nm: set() for nm in names}
    for pos, (k, o) in enumerate(zip(layout.diff, outs)):
        names_k = JT._names_read([J.outs[k]], want).union(*[dep.get(i, empty) for i in o])
        for nm in names_k:
            reach[nm].add(pos)
    return [frozenset(reach[nm]) for nm in names]


def _grad_in_layout(g, spec):
    """An output's gradient as the graph reads it: the traced layout in a
    storage of its own (zeros when autograd gives none)."""
    shape, stride, dtype, device = spec
    if g is None:
        return torch.empty_strided(shape, stride, dtype=dtype, device=device).zero_()
    if tuple(g.stride()) == stride and g.dtype == dtype and g.storage_offset() == 0 and \
            storage_nbytes(g) == g.numel() * g.element_size():
        return g
    return torch.empty_strided(shape, stride, dtype=dtype, device=device).copy_(g)


class Wrapped(torch.nn.Module if torch is not None else object):
    """The module wrap() returns (see the module docstring).  Attributes:
    module (the model), plans ({signature: Planned}), last (figures of the
    last backward: measured_peak, simulated_peak, recomputes, ...)."""

    def __init__(self, module, budget=None, memory=None, planner="auto", time_limit=None,
                 optimizer_state=0, remat=None, cache=True, notice=True, extra=(),
                 interpret=False, fake=False):
        super().__init__()
        self.fake = fake
        # interpret: run schedules with the executor (measures memory as it
        # goes: .last gets measured_peak) instead of the compiled program
        self.interpret = interpret
        if budget is not None and memory is not None:
            raise ValueError("give budget (what the plan holds) or memory (the whole step), "
                             "not both")
        self.module = module
        self.budget, self.planner, self.time_limit = budget, planner, time_limit
        self.device_bytes = A.parse_bytes(memory, "memory") if memory is not None else None
        if optimizer_state is not None and not isinstance(optimizer_state, (int, str)):
            optimizer_state = A.optimizer_state_bytes(optimizer_state)
        self.optimizer_bytes = A.parse_bytes(optimizer_state or 0, "optimizer_state")
        self.remat, self.extra = remat, tuple(extra)
        self.cache_dir = None if cache is False else \
            (default_cache_dir() if cache is True or cache is None else str(cache))
        self.notice = notice if callable(notice) else \
            ((lambda msg: print("remat_torch: " + msg, file=sys.stderr)) if notice else None)
        self.plans = {}
        self._walk = None

    @property
    def last(self):
        pl = getattr(self, "_last_plan", None)
        return pl.last if pl is not None else None

    def _tensors(self):
        """({name: parameter}, {name: buffer}) of the module, walked again
        only when some module's table of submodules, parameters or buffers
        has changed (a parameter replaced, a submodule swapped, a buffer
        added): a walk of named_parameters() on every call cost more than
        the schedule's own Python on small models."""
        c = self._walk
        if c is not None:
            for d, vals in c[2]:
                if len(d) != len(vals):
                    break
                for x, y in zip(d.values(), vals):
                    if x is not y:
                        break
                else:
                    continue
                break
            else:
                return c[0], c[1]
        pd = dict(self.module.named_parameters())
        bd = dict(self.module.named_buffers())
        checks = []
        mods = list(self.module.modules())
        for m in mods:
            for d in (m._modules, m._parameters, m._buffers):
                checks.append((d, tuple(d.values())))
        self._walk = (pd, bd, checks)
        self._registered = {id(t) for t in list(pd.values()) + list(bd.values())}
        self._mods = mods
        return pd, bd

    def state(self):
        """What of the modules a trace fixes besides their tensors: each
        submodule's train/eval flag and its plain attributes (numbers,
        strings, flags: a temperature, Dropout.p), tensors that are not
        parameters or buffers (by identity and version: changed in place or
        replaced, the trace's constant is stale), and its hooks (which run
        while a signature is traced, so that what they compute is in the
        plan, and not on each call).  Part of the signature: a change plans
        again rather than running a stale trace."""
        self._tensors()
        st = [tuple(_Ref(f) for f in getattr(torch.nn.modules.module, h, {}).values())
              for h in _GLOBAL_HOOKS]
        add, plain, hooks, base = st.append, _PLAIN, _MODULE_HOOKS, _module_keys()
        for m in self._mods:
            for k, v in m.__dict__.items():
                if type(v) in plain:
                    add((k, v))
                elif k in hooks:
                    if v:
                        add((k, tuple(map(_Ref, v.values()))))
                elif k not in base:
                    add((k, _frozen(v, self._registered)))
        add(forward_globals(self._mods, self._registered))
        return tuple(st)

    def signature(self, args, kwargs, params=None):
        if params is None:
            params = self._tensors()[0]
        if not kwargs and all(type(x) is torch.Tensor or isinstance(x, torch.Tensor)
                              for x in args):
            leaves, sig = list(args), [len(args)]      # the usual call: tensors only
        else:
            leaves, spec = tree_flatten((tuple(args), dict(kwargs)))
            sig = [repr(spec)]
        for x in leaves:
            if isinstance(x, torch.Tensor):
                sig.append((tuple(x.shape), tuple(x.stride()), x.dtype, x.device,
                            x.requires_grad))
            elif type(x).__eq__ is object.__eq__ and not isinstance(x, type) and \
                    not inspect.isroutine(x):
                # A plain object (a config): by identity and its fields, not
                # identity alone (a field changed between calls ran the stale
                # plan; outside review).
                sig.append(("object", _frozen(x, self._registered)))
            else:
                try:
                    hash(x)
                    sig.append(("value", type(x).__name__, x))
                except TypeError:
                    sig.append(("repr", repr(x)))
        sig.append(JT.autocast_state())
        # Shapes too: a parameter replaced by one of another shape (an
        # embedding grown) ran the stale plan (outside review).
        sig.append(tuple([(p.requires_grad, p.dtype, p.device, p.shape, p.stride())
                          for p in params.values()]))
        sig.append(self.state())
        return tuple(sig), leaves

    def forward(self, *args, **kwargs):
        if not self.training or not torch.is_grad_enabled() or _inference_mode() or \
                JT.TRACING[0]:
            # (traced inside another wrapped model: that one's plan covers it)
            return self.module(*args, **kwargs)
        pd, bd = self._tensors()
        sig, leaves = self.signature(args, kwargs, pd)
        pl = self.plans.pop(sig, None)
        if pl is None:
            pl = self._plan(args, kwargs, sig)
            # The least recently used go first: a model whose state changes
            # on every call (an attribute counting calls) plans every call,
            # and must not hold every plan it made.
            while len(self.plans) >= MAX_PLANS:
                del self.plans[next(iter(self.plans))]
        self.plans[sig] = pl
        if not pl.layout.diff:
            return self.module(*args, **kwargs)
        self._last_plan = pl
        xs = [x for x in leaves if isinstance(x, torch.Tensor)]
        if len(xs) > 1:
            seen = set()
            for x in xs:
                k = _storage_ptr(x)
                if k is None:
                    continue
                if k in seen:
                    raise RuntimeError("remat_torch: two inputs of a wrapped module share "
                                       "their storage (the same tensor passed twice, or two "
                                       "views of one); pass separate tensors (x.clone())")
                seen.add(k)
        call = _Call(pl, [pd[n] for n in pl.param_names], [bd[n] for n in pl.buffer_names],
                     self.interpret)
        outs = _PlanFunction.apply(call, *[pd[n] for n in pl.trained_names], *xs)
        return pl.layout.rebuild(outs)

    def plan_for(self, *args, **kwargs):
        """The Planned of this call's signature (planning it if new),
        without running anything."""
        sig, _ = self.signature(args, kwargs)
        if sig not in self.plans:
            self.plans[sig] = self._plan(args, kwargs, sig)
        return self.plans[sig]

    def _plan(self, args, kwargs, sig):
        t0 = time.perf_counter()
        J, layout = JT.build_vjp(self.module, args, kwargs, fake=self.fake)
        name = type(self.module).__name__
        mem = A.Memory(J.source, self.optimizer_bytes)
        budget = A.plan_budget(mem, self.budget, self.device_bytes)
        graph = JT.to_graph(J, name + "-vjp")
        text = JT.graph_text(graph)
        key = hashlib.sha256("\n".join([
            text, str(budget), self.planner, str(self.time_limit), " ".join(self.extra),
            remat_version(self.remat)]).encode()).hexdigest()
        entry = self._cache_get(key)
        cached = entry is not None
        if entry is None:
            with tempfile.TemporaryDirectory(prefix="remat_torch.") as folder:
                gpath = os.path.join(folder, "graph.json")
                spath = os.path.join(folder, "schedule.json")
                with open(gpath, "w") as f:
                    f.write(text)
                held = A.rng_state_holder(J, list(self.module.parameters()) +
                                          tree_flatten((args, kwargs))[0])
                summary, _ = A.schedule_file(gpath, spath, budget, self.planner, self.remat,
                                             self.time_limit, mem,
                                             in_memory=self.device_bytes is not None,
                                             extra=self.extra, held=held)
                with open(spath) as f:
                    schedule = json.load(f)
            entry = {"summary": summary, "schedule": schedule}
            self._cache_put(key, entry)
        steps = parse_schedule(entry["schedule"], "schedule")
        trained = {n for n, p in self.module.named_parameters() if p.requires_grad}
        pl = Planned(J, layout, steps, entry["summary"], time.perf_counter() - t0, cached,
                     trained)
        if self.notice:
            self.notice(_describe(name, args, kwargs, pl))
        return pl

    def _cache_get(self, key):
        if not self.cache_dir:
            return None
        try:
            with open(os.path.join(self.cache_dir, key + ".json")) as f:
                e = json.load(f)
            return e if isinstance(e, dict) and "schedule" in e and "summary" in e else None
        except (OSError, ValueError):
            return None

    def _cache_put(self, key, entry):
        if not self.cache_dir:
            return
        try:
            os.makedirs(self.cache_dir, exist_ok=True)
            write_text(json.dumps(entry), os.path.join(self.cache_dir, key + ".json"))
        except OSError:
            pass    # a cache that cannot be written is no cache


_MODULE_KEYS = []


def _module_keys():
    """The attributes every nn.Module has (its tables of parameters,
    buffers, submodules and hooks): not part of the state."""
    if not _MODULE_KEYS:
        _MODULE_KEYS.append(frozenset(torch.nn.Module().__dict__))
    return _MODULE_KEYS[0]


def module_attrs(model):
    """(name, module, key, value) for each submodule's attributes that are
    not the nn.Module machinery every module has (_module_keys, hooks), a
    tensor or a module: what a trace fixes besides the tensors (Dropout.p,
    a temperature, a config).  joint's guard and plan()'s step check read
    them so; Wrapped.state, on every call, walks its cached module list."""
    skip = _module_keys().union(_MODULE_HOOKS)
    for name, m in model.named_modules():
        for k, v in m.__dict__.items():
            if k not in skip and not isinstance(v, (torch.Tensor, torch.nn.Module)):
                yield name, m, k, v


class _Ref:
    """An object compared by identity, held: a signature that keeps it
    alive cannot meet another object given its id later (a numpy scalar
    replaced on every call got an old one's id, and its stale plan ran)."""
    __slots__ = ("v",)

    def __init__(self, v):
        self.v = v

    def __eq__(self, other):
        return isinstance(other, _Ref) and other.v is self.v

    def __hash__(self):
        return id(self.v)


_FORWARD_READS = {}


def _code_reads(fn):
    """(globals, names, cells) of what function fn's code may read outside
    its arguments: its global names (nested code too: comprehensions) and
    its closure; () for a function without code (a builtin)."""
    fn = getattr(fn, "__func__", fn)
    code = getattr(fn, "__code__", None)
    if code is None:
        return ()
    names, stack = set(), [code]
    while stack:
        c = stack.pop()
        # The names it loads as globals: co_names also holds attribute
        # names (self.l beside a module-level l that changes).
        names.update(i.argval for i in dis.get_instructions(c)
                     if i.opname in ("LOAD_GLOBAL", "LOAD_NAME"))
        stack.extend(k for k in c.co_consts if isinstance(k, types.CodeType))
    return (fn.__globals__, tuple(sorted(names)), tuple(fn.__closure__ or ()))


def _forward_reads(cls):
    """_code_reads of cls.forward; () for torch's own modules."""
    got = _FORWARD_READS.get(cls)
    if got is None:
        got = () if (cls.__module__ or "").startswith("torch.") else \
            _code_reads(getattr(cls, "forward", None))
        _FORWARD_READS[cls] = got
    return got


def _reads_frozen(got, registered, raw=None):
    """[(name or cell index, frozen value)] of the globals and closure
    values in got (_code_reads), leaving out modules, classes and
    functions; raw (a list) also gets (globals dict, name, value)."""
    out = []
    if not got:
        return out
    g, names, cells = got
    for k in names:
        v = g.get(k, g)
        if v is g or _not_state(v):
            continue
        out.append((k, _frozen(v, registered)))
        if raw is not None:
            raw.append((g, k, v))
    for i, v in _cell_values(cells):
        if not _not_state(v):
            out.append((i, _frozen(v, registered)))
    return out


def _cell_values(cells):
    """(index, value) of the closure cells that hold one (an empty cell:
    a name bound later in the enclosing function)."""
    for i, c in enumerate(cells):
        try:
            yield i, c.cell_contents
        except ValueError:
            continue


# callable_state's registered: every tensor by identity alone (what a loss
# function reads, a trace reads by reference: its values may change).
BY_IDENTITY = object()


def callable_state(fn, registered, depth=0):
    """What a trace of fn (a loss function: a module, a function, a lambda,
    a functools.partial, a bound method or an object with __call__) fixed
    besides its arguments, frozen as a module's attributes are: a loss
    module's attributes (label_smoothing), the globals and closure values
    its code reads (a temperature), a partial's bound arguments.  An
    outside review found plan()'s step running the first trace's loss
    after CrossEntropyLoss.label_smoothing changed.  registered: the ids of
    tensors compared by identity (others by identity and version), or
    BY_IDENTITY."""
    if depth > 4:
        return (("deep", _Ref(fn)),)
    if isinstance(fn, torch.nn.Module):
        # Its tensors too, by identity (a class weight replaced: outside review).
        return (tuple((name, k, _frozen(v, registered)) for name, _, k, v in module_attrs(fn))
                + tuple((n, _Ref(t)) for n, t in list(fn.named_parameters())
                        + list(fn.named_buffers()))
                + forward_globals(fn.modules(), registered))
    if isinstance(fn, functools.partial):
        return (("partial", _frozen(fn.args, registered), _frozen(fn.keywords, registered))
                + callable_state(fn.func, registered, depth + 1))
    if inspect.ismethod(fn):
        return callable_state(fn.__self__, registered, depth + 1) + \
            _code_state(fn, registered, depth)
    if inspect.isroutine(fn):
        return _code_state(fn, registered, depth)
    call = getattr(type(fn), "__call__", None)
    return (("object", _frozen(fn, registered)),) + _code_state(call, registered, depth)


def _code_state(fn, registered, depth):
    """callable_state of what fn's code reads: the globals and closure
    values (_reads_frozen), and the functions among them by identity and,
    for the user's own (not torch's), what they read in turn (a helper's
    global temperature; a function swapped for another: outside review)."""
    got = _code_reads(fn)
    out = list(_reads_frozen(got, registered))
    if got:
        g, names, cells = got
        fns = [(k, g.get(k)) for k in names] + list(_cell_values(cells))
        for k, v in fns:
            if inspect.isroutine(v) or isinstance(v, functools.partial):
                out.append(("fn", k, _Ref(v)))
                if not (getattr(v, "__module__", None) or "").startswith("torch") and \
                        v is not fn:
                    out.extend(callable_state(v, registered, depth + 1))
    return tuple(out)



def _not_state(v):
    """A module, class, nn.Module or function: read by name, not state."""
    return isinstance(v, (types.ModuleType, type, torch.nn.Module)) or inspect.isroutine(v)


def forward_globals(mods, registered, raw=None):
    """The module-level variables and closure values the modules' forwards
    read (a temperature an annealing schedule sets between calls), frozen
    as attributes are: a trace holds their values, so a change must plan
    again (an outside review found a changed global temperature running
    the first trace's).  Modules, classes and functions are left out; so
    are the globals of the functions a forward calls.  raw (a list) also
    gets (globals dict, name, value) of each global."""
    out, seen = [], set()
    for m in mods:
        cls = type(m)
        if cls in seen:
            continue
        seen.add(cls)
        out += _reads_frozen(_forward_reads(cls), registered, raw)
    return tuple(out)


def _frozen(v, registered, depth=0):
    """A module attribute as a hashable value that changes when the
    attribute does: numbers and strings (subclasses too: numpy scalars,
    enums) by value, tuples, lists, dicts and sets by their items (to 4
    levels and 256 items, then by identity and length), tensors that are
    not parameters or buffers by identity and version, anything else (a
    function) by identity, an object with fields (a config) by identity
    and its fields (to the same depth)."""
    if isinstance(v, (bool, int, float, complex, str, bytes)) or v is None:
        return (type(v).__name__, v)
    if type(v).__module__ == "numpy":
        # numpy's scalars (np.float32 is no float) and small arrays by value.
        if getattr(v, "ndim", None) == 0:
            return (type(v).__name__, v.item())
        if getattr(v, "size", 257) <= 256:
            return ("nd", v.dtype.str, v.shape, tuple(v.ravel().tolist()))
    if isinstance(v, torch.Tensor):
        if registered is BY_IDENTITY:
            return ("t", _Ref(v))
        return ("p", id(v)) if id(v) in registered else ("t", _Ref(v), v._version)
    if isinstance(v, (tuple, list, set, frozenset, dict)):
        if depth >= 4 or len(v) > 256:
            return ("big", _Ref(v), len(v))
        if isinstance(v, dict):
            return ("d",) + tuple((_frozen(k, registered, depth + 1),
                                   _frozen(x, registered, depth + 1)) for k, x in v.items())
        if isinstance(v, (set, frozenset)):
            return ("s", frozenset(_frozen(x, registered, depth + 1) for x in v))
        return (type(v).__name__,) + tuple(_frozen(x, registered, depth + 1) for x in v)
    if isinstance(v, torch.nn.Module):
        return ("m", id(v))
    if isinstance(v, (torch.dtype, torch.device)):
        return ("v", str(v))
    if depth < 4 and not isinstance(v, type) and not inspect.isroutine(v):
        # A config object (cfg.scale = 3.0 between calls), a callable one
        # too: by its fields, in __dict__ or __slots__.
        d = getattr(v, "__dict__", None)
        fields = dict(d) if isinstance(d, dict) else {}
        for cls in type(v).__mro__:
            for k in getattr(cls, "__slots__", ()) if cls is not object else ():
                if isinstance(k, str) and k not in ("__dict__", "__weakref__") and \
                        hasattr(v, k):
                    fields[k] = getattr(v, k)
        if fields and len(fields) <= 256:
            return ("o", _Ref(v), _frozen(fields, registered, depth + 1))
    return ("id", _Ref(v))


def _storage_ptr(x):
    """Where x's storage begins (its device too): equal for two views of
    one; None for a tensor without memory (empty, meta)."""
    try:
        p = x.untyped_storage().data_ptr()
    except AttributeError:
        p = x.storage().data_ptr()
    return (x.device, p) if p else None


def _inference_mode():
    f = getattr(torch, "is_inference_mode_enabled", None)
    return bool(f and f())


def _describe(name, args, kwargs, pl):
    shapes = ", ".join("x".join(map(str, t.shape)) or "scalar"
                       for t in tree_flatten((tuple(args), dict(kwargs)))[0]
                       if isinstance(t, torch.Tensor))
    s = pl.summary
    peak, budget, ov = s.get("peak_mem"), s.get("budget"), s.get("overhead")
    what = "plan for %s (%s)" % (name, shapes or "no tensors")
    figures = "peak %s" % A._size(int(peak)) if peak is not None else "planned"
    if budget is not None:
        figures += " for a budget of %s" % A._size(int(budget))
    if ov is not None:
        figures += ", compute +%.2f%%" % (100 * float(ov))
    how = "from the cache" if pl.cached else "by %s" % (s.get("planner") or "remat")
    return "%s: %s, %s in %.1f s" % (what, figures, how, pl.seconds)


def wrap(model, example_inputs=None, budget=None, planner="auto", time_limit=None,
         example_kwargs=None, memory=None, optimizer_state=0, remat=None, cache=True,
         notice=True, extra=(), interpret=False, fake=False):
    """An nn.Module that runs `model` with a remat plan (the module
    docstring).  budget: what the plan may hold (bytes, "4GiB", "60%" of the
    no-remat peak, "lowest"; default "100%"); or memory: the device memory
    of the whole step (parameters, buffers and optimizer_state taken off
    first).  example_inputs (a tensor or a tuple) and example_kwargs: plan
    for that call now rather than on the first call.  cache: True (the
    default folder), False, or a folder.  notice: print a line when a
    signature is planned (or a callable taking that line).  extra: more
    arguments for `remat plan`.  interpret: run the schedule with the
    executor, which measures memory as it goes (.last.measured_peak),
    instead of the compiled program (faster).  fake: trace on the meta
    device (export --fake): planning allocates nothing and runs no kernel,
    so a model that does not fit without a plan can be planned; operators'
    temporaries are then not measured, and torch 1.13 cannot trace a
    convolution's backward there."""
    if torch is None:
        from remat_torch import no_torch_message
        raise ImportError(no_torch_message())
    m = Wrapped(model, budget, memory, planner, time_limit, optimizer_state, remat, cache,
                notice, extra, interpret, fake)
    if example_inputs is not None:
        if isinstance(example_inputs, torch.Tensor):
            example_inputs = (example_inputs,)
        if model.training and torch.is_grad_enabled():
            m.plan_for(*example_inputs, **(example_kwargs or {}))
    return m
