"""Training with a plan: remat_torch.plan(model, example_inputs, loss_fn,
memory= or budget=, planner) exports the joint graph of one training step,
asks the C planner (`remat plan`) for a schedule and returns a Step;
`loss = step(inputs, target)` runs that schedule and leaves the gradients
in each parameter's .grad exactly as loss.backward() would (added to what
is there).

    import remat_torch
    opt = torch.optim.AdamW(model.parameters())
    step = remat_torch.plan(model, (x,), torch.nn.functional.cross_entropy,
                            example_target=y, memory="2GiB", optimizer_state=opt)
    for x, y in loader:
        opt.zero_grad(set_to_none=True)
        loss = step(x, y)
        opt.step()

memory is what the whole step may hold on the device: the fixed part
(parameters, buffers, the optimizer's state) plus what the plan holds (the
batch, activations, activation gradients and parameter gradients); budget
is the plan's part alone.  After a call nothing of the step is held but
the gradients in .grad and the (detached) loss; step.last keeps figures.

The graph is specialised to the example's shapes, dtypes and device and to
training mode; a batch of another shape is refused (plan again).
"""
import collections
import json
import os
import shutil
import subprocess
import tempfile

from remat_torch import joint as JT, storage_nbytes
from remat_torch.executor import check_schedule, execute, parse_schedule, topological_steps

try:
    import torch
except ImportError:
    torch = None

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


class PlanError(Exception):
    """The planner found no schedule, or could not be run.  exit_code is
    remat's exit code (3: no schedule within the budget)."""

    def __init__(self, msg, exit_code=None, summary=None):
        super().__init__(msg)
        self.exit_code, self.summary = exit_code, summary


def installed_remat():
    """The binary installed beside this package by `cmake --install` (or the
    .deb), or None when the package runs from a source tree or from pip."""
    try:
        from remat_torch import _installed
    except ImportError:
        return None
    return os.path.normpath(os.path.join(os.path.dirname(os.path.abspath(_installed.__file__)),
                                         _installed.REMAT_RELATIVE))


def find_remat(path=None):
    """The remat binary: `path`, $REMAT, the one installed with this package,
    the repository's build/remat, or `remat` on PATH."""
    for cand in (path, os.environ.get("REMAT"), installed_remat(),
                 os.path.join(ROOT, "build", "remat")):
        if cand and os.path.isfile(cand) and os.access(cand, os.X_OK):
            return cand
    found = shutil.which("remat")
    if found:
        return found
    raise PlanError("cannot find the remat binary: install remat (the .deb, or cmake "
                    "--install), put it on PATH or set REMAT; in a clone, "
                    "scripts/bootstrap.sh builds build/remat")


def run_remat(args, remat=None, timeout=None):
    """Run `remat ARGS...` and return (exit code, stdout, stderr)."""
    p = subprocess.run([find_remat(remat)] + list(args), capture_output=True, text=True,
                       timeout=timeout)
    return p.returncode, p.stdout, p.stderr


def remat_plan(graph_path, budget, planner="auto", out=None, remat=None, time_limit=None,
               extra=()):
    """`remat plan GRAPH --budget B --planner P --json [-o OUT]`: the JSON
    summary (a dict) and remat's exit code."""
    args = ["plan", graph_path, "--budget", str(budget), "--planner", planner, "--json", "-q"]
    if out:
        args += ["-o", out]
    if time_limit is not None:
        args += ["--time-limit", str(time_limit)]
    rc, so, se = run_remat(args + list(extra), remat)
    try:
        summary = json.loads(so)
    except ValueError:
        raise PlanError("remat plan %s: exit %d: %s" % (graph_path, rc, se.strip() or so.strip()),
                        rc)
    return summary, rc


def remat_simulate(graph_path, schedule_path, remat=None):
    """`remat simulate --json`: the simulator's summary (a dict)."""
    rc, so, se = run_remat(["simulate", graph_path, schedule_path, "--json"], remat)
    try:
        out = json.loads(so)
    except ValueError:
        raise PlanError("remat simulate: exit %d: %s" % (rc, se.strip()), rc)
    out["exit"] = rc
    return out


def remat_info(graph_path, remat=None):
    rc, so, se = run_remat(["info", graph_path, "--json"], remat)
    if rc != 0:
        raise PlanError("remat info %s: exit %d: %s" % (graph_path, rc, se.strip()), rc)
    return json.loads(so)


def lowest_plan(graph_path, planner="auto", remat=None, time_limit=None, info=None, out=None,
                extra=()):
    """The lowest peak (bytes) `planner` reaches, and the JSON summary of
    that run: one `remat plan --budget lowest`, which bisects on the budget
    inside remat (time_limit covers the whole search; remat's default
    when None) and reports the schedule's own peak as its budget, with
    `peak_lower_bound`, the peak no schedule can go below.  (None, None)
    when it finds nothing.  The lowest found, not a proof that nothing lower
    fits; nor need planning again at that peak succeed (the fast planners
    are not monotone in the budget: twremat on a tiny GPT found a
    743,944-byte schedule at 754,487 and none at 743,944), so the schedule
    itself is what to use: with out, it is left in that file.  info is
    accepted for compatibility and not needed."""
    s, rc = remat_plan(graph_path, "lowest", planner, out=out, remat=remat,
                       time_limit=time_limit, extra=extra)
    if rc == 3:
        return None, None
    if rc != 0:
        raise PlanError("remat plan --budget lowest: exit %d: %s" % (rc, s.get("error")), rc, s)
    return int(s["peak_mem"]), s


def lowest_budget(graph_path, planner="auto", remat=None, time_limit=None, info=None,
                  out=None):
    """lowest_plan()'s budget alone."""
    return lowest_plan(graph_path, planner, remat, time_limit, info, out)[0]


_SIZE_UNITS = {"": 1, "B": 1, "KB": 10 ** 3, "MB": 10 ** 6, "GB": 10 ** 9, "TB": 10 ** 12,
               "KIB": 2 ** 10, "MIB": 2 ** 20, "GIB": 2 ** 30, "TIB": 2 ** 40}


def parse_bytes(text, what="memory"):
    """Bytes from an int or a size such as "4GiB", "1.5GB", "512MiB"."""
    if isinstance(text, bool):
        raise ValueError("%s: %r is not a size" % (what, text))
    if isinstance(text, int):
        if text < 0:
            raise ValueError("%s: %d is negative" % (what, text))
        return text
    import re
    m = re.fullmatch(r"\s*([0-9]+(?:\.[0-9]*)?)\s*([A-Za-z]*)\s*", str(text))
    if not m or m.group(2).upper() not in _SIZE_UNITS:
        raise ValueError("%s: %r is not a size (bytes, or a number with B, KB, MB, GB, TB, "
                         "KiB, MiB, GiB or TiB)" % (what, text))
    return int(float(m.group(1)) * _SIZE_UNITS[m.group(2).upper()])


def optimizer_state_bytes(optimizer):
    """The bytes an optimizer's state takes: what its state holds when it
    has stepped, else the usual figure for its class (Adam, AdamW: two
    tensors the size of each trained parameter, three with amsgrad; SGD with
    momentum, Adagrad, RMSprop: one, RMSprop with momentum or centered one
    more each; SGD without momentum: none).  ValueError for another class
    that has not stepped yet (pass the bytes instead)."""
    def nbytes(t):
        return t.numel() * t.element_size() if isinstance(t, torch.Tensor) else 0
    held = sum(nbytes(v) for st in optimizer.state.values() for v in st.values())
    if held:
        return held
    params = [p for g in optimizer.param_groups for p in g["params"] if p.requires_grad]
    size = sum(nbytes(p) for p in params)
    name = type(optimizer).__name__
    g = optimizer.param_groups[0] if optimizer.param_groups else {}
    per = {"Adam": 2 + bool(g.get("amsgrad")), "AdamW": 2 + bool(g.get("amsgrad")),
           "SGD": 1 if g.get("momentum") else 0, "Adagrad": 1,
           "RMSprop": 1 + bool(g.get("momentum")) + bool(g.get("centered"))}
    if name not in per:
        raise ValueError("optimizer %s: its state size is not known before its first step; "
                         "pass optimizer_state in bytes" % name)
    return per[name] * size


class Memory:
    """A budget in the terms of the device (issue 28): what the whole step
    may hold is fixed + what the schedule decides.

    fixed: parameters, buffers and the optimizer state (held whatever the
    schedule does); the plan: the batch, activations, activation gradients
    and parameter gradients (param_grads of them, resident from when each
    is computed to the end of the step)."""

    def __init__(self, source, optimizer=0):
        self.params = int(source.get("params_bytes", 0))
        self.buffers = int(source.get("buffers_bytes", 0))
        self.param_grads = int(source.get("param_grads_bytes", 0))
        self.optimizer = int(optimizer)

    @property
    def fixed(self):
        return self.params + self.buffers + self.optimizer

    def parts(self):
        return "parameters %s, buffers %s, optimizer state %s" % (
            _size(self.params), _size(self.buffers), _size(self.optimizer))

    def describe(self):
        return "fixed %s (%s)" % (_size(self.fixed), self.parts())


def _size(b):
    for unit, k in (("GiB", 2 ** 30), ("MiB", 2 ** 20), ("KiB", 2 ** 10)):
        if abs(b) >= k:
            return "%.2f %s" % (b / k, unit)
    return "%d B" % b


def plan_budget(mem, budget=None, device_bytes=None):
    """What the plan may hold: budget as given (default "100%"), or the
    device memory less the fixed part; PlanError (3) when the fixed part
    alone does not fit in it."""
    if device_bytes is None:
        return "100%" if budget is None else budget
    if device_bytes - mem.fixed <= 0:
        raise PlanError("no schedule fits in %s: the fixed part alone is %s"
                        % (_size(device_bytes), mem.describe()), 3)
    return device_bytes - mem.fixed


def rng_state_holder(J, tensors):
    """A function of a schedule file: how many bytes the generator states the
    executors keep outside the graph add to its peak (joint.Rng: a state per
    random call of each random node the schedule computes more than once,
    from its first computation to its last; the CPU generator's 5,056
    bytes, or 16 per CUDA device, as the model's tensors lie), or None when
    the graph draws nothing."""
    per = 16 if JT._devices_of(tensors) else int(torch.get_rng_state().numel())
    calls = {n.id: len(n.calls) for n in J.nodes if n.random}
    if not calls:
        return None

    def held(spath):
        """How far the schedule's peak rises with them (a state lives from
        its node's first computation to its last)."""
        with open(spath) as f:
            pl = check_schedule(J, parse_schedule(json.load(f), spath), spath)
        first, last = {}, {}
        for i, (op, u) in enumerate(pl.steps):
            if op == "compute" and u in calls:
                first.setdefault(u, i)
                last[u] = i
        delta = collections.Counter()
        for u, i in first.items():
            if last[u] > i:
                delta[i] += calls[u]
                delta[last[u] + 1] -= calls[u]
        top, cur = pl.peak, 0
        for i, mem in enumerate(pl.timeline):
            cur += delta.get(i, 0)
            top = max(top, mem + per * cur)
        return top - pl.peak
    return held


def schedule_file(gpath, spath, budget, planner="auto", remat=None, time_limit=None,
                  mem=None, in_memory=False, extra=(), held=None):
    """Plan the graph at `budget` (what remat plan --budget takes, or
    "lowest") with the schedule left in spath.  Returns (summary, budget):
    for "lowest" the lowest peak reached (remat plan --budget lowest).  Raises PlanError
    (exit_code 3 when nothing fits); with mem (a Memory), its message says
    what is fixed and the lowest the planner reaches (explain_no_fit(), in
    device memory when in_memory), and it carries lowest_budget,
    lowest_memory and fixed_bytes.  held(spath): bytes the executors keep
    beside the schedule's (rng_state_holder()): the schedule must fit the
    budget with them (planned again below it, twice at most, where a
    schedule fits there), and for "lowest" they are part of the budget
    returned; summary["held_outside_graph"] gives them."""
    if str(budget) == "lowest":
        b, summary = lowest_plan(gpath, planner, remat, time_limit, out=spath, extra=extra)
        if b is None:
            raise PlanError("planner %s finds no schedule even at the no-remat peak" % planner,
                            3)
        x = held(spath) if held else 0
        if x:
            b = int(b) + x
            summary["budget"] = b
            summary["held_outside_graph"] = x
        return summary, b   # the schedule at that peak, in spath
    summary, budget = _schedule_at(gpath, spath, budget, planner, remat, time_limit, mem,
                                   in_memory, extra)
    for _ in range(2):
        x = held(spath) if held else 0
        limit = int(summary.get("budget") or 0)
        if not x or not limit or int(summary["peak_mem"]) + x <= limit:
            break
        # Generator states of recomputed random nodes come on top of the
        # schedule's peak: plan below the budget by them.  Where nothing
        # fits there (a small model, where 5 KiB states are much), the
        # schedule stays, its summary saying what comes on top.
        with open(spath, "rb") as f:
            first = f.read()
        try:
            s2, _ = _schedule_at(gpath, spath, limit - x, planner, remat, time_limit, mem,
                                 in_memory, extra)
        except PlanError as e:
            if e.exit_code != 3:
                raise
            with open(spath, "wb") as f:
                f.write(first)
            summary["held_outside_graph"] = x
            break
        s2["budget"] = limit
        s2["held_outside_graph"] = held(spath)
        summary = s2
    return summary, budget


def _schedule_at(gpath, spath, budget, planner, remat, time_limit, mem, in_memory, extra):
    summary, rc = remat_plan(gpath, budget, planner, spath, remat, time_limit, extra)
    if rc == 3 and mem is not None and summary.get("budget") is not None:
        msg, low = explain_no_fit(gpath, mem, int(summary["budget"]), planner, remat,
                                  time_limit, in_memory)
        err = PlanError(msg, 3, summary)
        err.lowest_budget = low
        err.lowest_memory = None if low is None else low + mem.fixed
        err.fixed_bytes = mem.fixed
        raise err
    if rc != 0:
        raise PlanError("remat plan: %s" % summary.get("error"), rc, summary)
    return summary, budget


def explain_no_fit(gpath, mem, budget_bytes, planner, remat=None, time_limit=None,
                   in_memory=True):
    """The message of a PlanError when no schedule fits: what is fixed and
    the lowest memory the planner reaches, in the terms the user gave
    (device memory, or the graph's budget).  The lowest comes from a short
    `remat plan --budget lowest` (5 s at most)."""
    info = remat_info(gpath, remat)
    tl = 5 if time_limit is None else min(float(time_limit), 5)
    low, low_summary = lowest_plan(gpath, planner, remat, tl, info)
    floor = int(low_summary.get("peak_lower_bound") or info["min_peak_lower_bound"]) \
        if low_summary else int(info["min_peak_lower_bound"])
    if in_memory:
        head = "no schedule fits in %s: %s, plan %s" % (
            _size(budget_bytes + mem.fixed), mem.describe(), _size(budget_bytes))
        lowest = ("the lowest memory %s reaches is %s (fixed + %s)"
                  % (planner, _size(mem.fixed + low), _size(low)) if low is not None else
                  "%s finds no schedule at any budget" % planner)
        bound = "no schedule can go below %s" % _size(mem.fixed + floor)
    else:
        head = "no schedule fits in a budget of %s (parameters, buffers and optimizer state " \
               "come on top: %s)" % (_size(budget_bytes), mem.describe())
        lowest = ("the lowest budget %s reaches is %s" % (planner, _size(low))
                  if low is not None else "%s finds no schedule at any budget" % planner)
        bound = "no schedule can go below %s" % _size(floor)
    return "%s; %s; %s" % (head, lowest, bound), low


class Step:
    """A planned training step (see the module docstring).

    Attributes: graph (the Joint), steps (the schedule), summary (remat
    plan's JSON), memory (a Memory: what is fixed), fixed_bytes (parameters
    and buffers), budget_bytes (what the plan may hold), device_bytes (the
    device memory asked for, or None), meter (read the allocator on each
    call: None, the default, on CUDA only; True on the CPU too, through the
    profiler, slower), last (figures of the last call: loss as a float,
    measured_peak, real_peak, simulated_peak, recomputes, seed (None: drawn
    from torch's generator, as eager draws); never a tensor, so that
    nothing of a step outlives it)."""

    def __init__(self, model, J, steps, summary, graph_path=None, memory=None,
                 budget_bytes=None, device_bytes=None, meter=None, loss_fn=None):
        self.model, self.graph, self.steps, self.summary = model, J, steps, summary
        self.graph_path = graph_path
        self.plan = check_schedule(J, steps)
        self.memory = memory or Memory(J.source)
        self.fixed_bytes = J.source.get("params_bytes", 0) + J.source.get("buffers_bytes", 0)
        self.budget_bytes, self.device_bytes = budget_bytes, device_bytes
        self.meter = meter
        self.last = None
        self._specs = None
        self._state = _model_state(model)
        self.loss_fn = loss_fn
        self._loss_state = _loss_state(loss_fn)

    def _bind(self, inputs, targets):
        if isinstance(inputs, torch.Tensor):
            inputs = (inputs,)
        JT.check_batch(tuple(inputs), tuple(targets))
        b = JT.bind_model(self.graph, self.model, tuple(inputs), tuple(targets))
        for nid in self.graph.inputs:
            want = self._specs.get(nid) if self._specs else None
            t = b.batch[nid]
            # Strides too: a transposed or channels_last batch of the same
            # shape ran the trace's views and gave wrong values (outside review).
            if want is not None and _spec(t) != want:
                raise JT.JointError("input %s: shape %s, strides %s, dtype %s, device %s; the "
                                    "plan was made for %s, %s, %s, %s (plan again for this "
                                    "layout, or pass .contiguous())" % ((nid,) + _spec(t) + want))
        return b

    def run(self, inputs, *targets, seed=None, meter=None):
        """Run the schedule; returns the executor's Result (loss, grads,
        measured_peak, real_peak, ...) without touching .grad.  step.last
        gets its figures, not its tensors."""
        now = _model_state(self.model)
        if now != self._state:
            what = ("a module's train/eval mode" if now[0] != self._state[0] else
                    "which parameters require grad, or their shapes or strides"
                    if now[1] != self._state[1] else
                    _attrs_changed(self.model, set(now[2]) ^ set(self._state[2])))
            raise JT.JointError("the model changed since this step was planned (%s): the "
                                "step would run the old trace; plan again" % what)
        if _loss_state(self.loss_fn) != self._loss_state:
            raise JT.JointError("the loss function changed since this step was planned (an "
                                "attribute of it, a variable its code reads or an argument "
                                "bound to it): the step would run the old trace; plan again")
        # Random operators draw from torch's generator as eager draws (the
        # same dropout masks under the same torch.manual_seed; a
        # recomputation replays what its first computation drew), or, given
        # a seed, each under a seed of its own (joint.seed_of).
        with JT.modes_kept(self.model):
            JT.train_mode(self.model)
            b = self._bind(inputs, targets)
            res = execute(self.graph, b, self.steps, seed=seed or 0, plan=self.plan,
                          meter=self.meter if meter is None else meter,
                          rng="global" if seed is None else "seeded")
        res.seed = seed
        self.last = _figures(res)
        return res

    def __call__(self, inputs, *targets):
        """Run the schedule, add the gradients to each parameter's .grad
        (as loss.backward() does) and return the loss (detached)."""
        res = self.run(inputs, *targets)
        grads, loss = res.grads, res.loss.detach()
        res.grads = res.loss = None
        params = dict(self.model.named_parameters())
        with torch.no_grad():
            for i, (name, _, _) in enumerate(self.graph.params):
                g = grads[i]
                grads[i] = None
                if g is None:
                    continue
                p = params[name]
                if p.grad is None:
                    # Laid out like the parameter, in a storage of its own
                    # (a view would keep its whole base alive in .grad).
                    if g.stride() != p.stride() or g.storage_offset() != 0 or \
                            storage_nbytes(g) != g.numel() * g.element_size():
                        g = torch.empty_strided(p.shape, p.stride(), dtype=p.dtype,
                                                device=p.device).copy_(g)
                    p.grad = g
                else:
                    p.grad.add_(g)
                del g
        return loss


def _model_state(model):
    """What of a model a step's trace fixed besides its tensors: the
    train/eval flags the step runs with (all train when the model is in
    eval mode, see joint.train_mode), which parameters require grad (and
    their shapes), each module's attributes that are not tensors or modules
    (Dropout.p, a temperature, a swapped function) and the module-level
    variables its forward reads, as wrap's signature freezes them.
    An outside review found a step running its old trace after
    requires_grad_(False), a submodule's eval() or Dropout.p changed."""
    from remat_torch.wrapped import _frozen, forward_globals, module_attrs
    reg = {id(t) for t in list(model.parameters()) + list(model.buffers())}
    # The flags the step runs with: a model in eval mode runs all in train mode.
    flags = tuple(m.training or not model.training for m in model.modules())
    # Strides too: a model moved to channels_last ran the trace's views of
    # its weights (outside review).
    grads = tuple((n, p.requires_grad, p.shape, p.stride(), p.dtype, p.device)
                  for n, p in model.named_parameters())
    attrs = [(name, k, _frozen(v, reg)) for name, _, k, v in module_attrs(model)]
    attrs += [(None, k, v) for k, v in forward_globals(model.modules(), reg)]
    return flags, grads, tuple(attrs)


def _loss_state(loss_fn):
    """What a trace of loss_fn fixed besides its arguments (see
    wrapped.callable_state); () without one.  Its tensors (class weights)
    by identity: the trace reads them by reference, so a change in place
    is seen, but not another tensor bound in their place."""
    if loss_fn is None:
        return ()
    from remat_torch.wrapped import BY_IDENTITY, callable_state
    return callable_state(loss_fn, BY_IDENTITY)


def _spec(t):
    """What a step's plan fixes of a batch tensor."""
    return (tuple(t.shape), tuple(t.stride()), t.dtype, t.device)


def _attrs_changed(model, diff):
    """Which attributes or module-level variables (None for the module
    name, _model_state) differ, in words."""
    attrs = sorted({"%s.%s" % (a[0] or type(model).__name__, a[1]) for a in diff
                    if a[0] is not None})
    names = sorted({str(a[1]) for a in diff if a[0] is None})
    said = []
    if attrs:
        said.append("an attribute of a module (%s)" % ", ".join(attrs))
    if names:
        said.append("a module-level variable its forward reads (%s)" % ", ".join(names))
    return " and ".join(said)


def _figures(res):
    """A Result's figures without its tensors."""
    from remat_torch.executor import Result
    keep = {k: v for k, v in vars(res).items() if k not in ("grads", "loss", "timeline")}
    keep["loss"] = float(res.loss) if res.loss is not None else None
    return Result(**keep)


def plan(model, example_inputs, loss_fn, budget=None, planner="auto", example_target=None,
         remat=None, time_limit=None, measure=False, keep=None, progress=None, memory=None,
         optimizer_state=0, meter=None, fake=False):
    """Plan a training step of `model` with remat's `planner` and return a
    Step.  Say how much memory in one of two ways:

    memory: the device memory the whole step may use (bytes or "4GiB"):
      parameters, buffers, parameter gradients, activations, and
      optimizer_state (bytes, "1GiB", or the optimizer itself: see
      optimizer_state_bytes()).  The plan gets what is left once the fixed
      part (parameters, buffers, optimizer state) is taken off.
    budget: what the plan itself may hold (batch, activations, activation
      and parameter gradients): bytes, "4GiB", "60%" of the no-remat peak,
      or "lowest" (the lowest budget the planner reaches).  The default
      when neither is given is "100%".

    example_inputs: a tensor or tuple of tensors for model(*inputs);
    loss_fn(output, *targets) -> scalar, with example_target (a tensor or a
    tuple, or None for loss_fn(output)) giving the targets.  fake: trace
    on the meta device (nothing allocated or run while planning; see
    joint.build_joint).  keep: a folder
    in which to leave the graph and schedule files (default: a temporary
    folder, removed).  meter: see Step.  Raises PlanError when no schedule
    fits; its message names what is fixed and the lowest memory (or budget)
    the planner reaches."""
    if torch is None:
        from remat_torch import no_torch_message
        raise ImportError(no_torch_message())
    if budget is not None and memory is not None:
        raise ValueError("give budget (what the plan holds) or memory (the whole step), "
                         "not both")
    if isinstance(example_inputs, torch.Tensor):
        example_inputs = (example_inputs,)
    targets = () if example_target is None else \
        ((example_target,) if isinstance(example_target, torch.Tensor) else tuple(example_target))
    device_bytes = parse_bytes(memory, "memory") if memory is not None else None
    if optimizer_state is not None and not isinstance(optimizer_state, (int, str)):
        optimizer_state = optimizer_state_bytes(optimizer_state)
    opt_bytes = parse_bytes(optimizer_state or 0, "optimizer_state")
    J = JT.build_joint(model, tuple(example_inputs), loss_fn, targets, measure=measure,
                       progress=progress, fake=fake)
    mem = Memory(J.source, opt_bytes)
    specs = {nid: _spec(t) for nid, t in zip(J.inputs, list(example_inputs) + list(targets))}
    budget = plan_budget(mem, budget, device_bytes)
    folder = keep or tempfile.mkdtemp(prefix="remat_torch.")
    try:
        gpath = os.path.join(folder, "graph.json")
        spath = os.path.join(folder, "schedule.json")
        JT.write_graph(JT.to_graph(J, type(model).__name__ + "-joint"), gpath)
        held = rng_state_holder(J, list(example_inputs) + list(model.parameters()))
        summary, budget = schedule_file(gpath, spath, budget, planner, remat, time_limit, mem,
                                        in_memory=device_bytes is not None, held=held)
        with open(spath) as f:
            steps = parse_schedule(json.load(f), spath)
    finally:
        if keep is None:
            shutil.rmtree(folder, ignore_errors=True)
    st = Step(model, J, steps, summary, gpath if keep else None, mem,
              int(summary.get("budget") or 0) or None, device_bytes, meter, loss_fn)
    st._specs = specs
    return st


def plain_step(model, example_inputs, loss_fn, example_target=None):
    """A Step running the joint graph in its own order, nothing recomputed
    (the reference `check` compares schedules with)."""
    if isinstance(example_inputs, torch.Tensor):
        example_inputs = (example_inputs,)
    targets = () if example_target is None else \
        ((example_target,) if isinstance(example_target, torch.Tensor) else tuple(example_target))
    J = JT.build_joint(model, tuple(example_inputs), loss_fn, targets)
    return Step(model, J, topological_steps(J), {"planner": None})
