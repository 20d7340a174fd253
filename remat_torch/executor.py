"""Run a remat-schedule on a joint graph (remat_torch/joint.py), step by step.

`compute v` runs v's operators on the values of its inputs (views are
derived again from their storage owners); `free v` drops the executor's
reference to v's value.  Before anything runs the schedule is checked
against the graph under FORMATS.md s.2 (the simulator's rules): the first
invalid step is named with its index and node, and nothing is executed.

Memory is measured, not looked up: the executor holds node values only
(never a view: views are derived when a node reads them), and at every step
it adds up the bytes of the distinct storages of the tensors it holds,
leaving out the parameters and buffers (resident whatever the schedule
does; the graph leaves them out too).  While a node runs, the storages of
everything its operator returned are counted as well (the outputs it keeps
and those it drops at once), which is the simulator's resident + mem +
dropped: this `measured_peak` equals the Plan's held_peak byte for byte.
The peak follows the simulator's definition: the memory at the start,
replaced by the largest "during" over compute steps.

What the allocator holds is more (an operator's temporaries): with a meter
(always on CUDA, on request on the CPU) the run also reports `real_peak`,
read from the allocator (remat_torch/meter.py), which the simulator's peak
bounds when each node's workspace was measured on the allocator too
(export --joint does).
"""
import collections
import json

from remat_torch.joint import JointError, Runner, moved_from, value_storages

try:
    import torch
except ImportError:
    torch = None


class ScheduleError(Exception):
    """An invalid schedule: step is the index in "steps" (len(steps) for the
    end), node the node id."""

    def __init__(self, msg, step=None, node=None):
        super().__init__(msg)
        self.step, self.node = step, node


def read_schedule(path):
    """[(op, node id)] from a remat-schedule file."""
    try:
        with open(path) as f:
            s = json.load(f)
    except OSError as e:
        raise ScheduleError("%s: cannot read: %s" % (path, e.strerror or e))
    except ValueError as e:
        raise ScheduleError("%s: not JSON: %s" % (path, e))
    return parse_schedule(s, path)


def parse_schedule(s, where="schedule"):
    if not isinstance(s, dict) or s.get("format") != "remat-schedule":
        raise ScheduleError("%s: not a remat-schedule (\"format\" is not \"remat-schedule\")"
                            % where)
    if s.get("version") != 1:
        raise ScheduleError("%s: version %r, this reader knows 1" % (where, s.get("version")))
    steps = s.get("steps")
    if not isinstance(steps, list):
        raise ScheduleError("%s: \"steps\" is not a list" % where)
    out = []
    for i, st in enumerate(steps):
        if not isinstance(st, dict) or st.get("op") not in ("compute", "free") \
                or not isinstance(st.get("node"), str):
            raise ScheduleError("%s: steps[%d]: expected {\"op\": \"compute\"|\"free\", "
                                "\"node\": ID}" % (where, i), i)
        out.append((st["op"], st["node"]))
    return out


class Plan:
    """A schedule checked against a graph: explicit steps (frees derived as
    the simulator derives them for a compute-only schedule) and the
    simulator's figures, computed here independently of remat's C code;
    peak_step and timeline index the explicit steps."""

    def __init__(self, steps, pre_free, peak, peak_step, cost, computes, recomputes,
                 timeline, held_peak=None, held_step=None):
        self.steps, self.pre_free = steps, pre_free
        self.peak, self.peak_step = peak, peak_step
        self.held_peak = peak if held_peak is None else held_peak
        self.held_step = peak_step if held_step is None else held_step
        self.cost, self.computes, self.recomputes = cost, computes, recomputes
        self.timeline = timeline

    def counts(self):
        """{node id: how many times the schedule computes it}."""
        c = getattr(self, "_counts", None)
        if c is None:
            c = self._counts = collections.Counter(u for op, u in self.steps if op == "compute")
        return c


class _Held:
    """The bytes of the distinct storages the executor holds, as nodes are
    computed and freed: a node's own, except that a move node (joint.py,
    MOVE_OP) shares the output its producer computed last, which outlives
    the producer while the move node is resident.  Without move nodes this
    is the simulator's resident sum."""

    def __init__(self, J):
        self.byid, self.move_of, self.moved_out = J.byid, {}, {}
        for n in J.nodes:
            f = moved_from(n)
            if f is not None:
                self.move_of[n.id] = f
                self.moved_out.setdefault(f, []).append(n.id)
        self.tokens, self.holds, self.run = {}, {}, {}
        self.bytes = 0

    def compute(self, u):
        """Node u becomes resident."""
        n = self.byid[u]
        if u in self.move_of:
            f = self.move_of[u]
            toks = [((f, self.run.get(f, 0), u), n.mem)]
        else:
            k = self.run[u] = self.run.get(u, 0) + 1
            ms = self.moved_out.get(u, [])
            rest = max(0, n.mem - sum(self.byid[m].mem for m in ms))
            toks = [((u, k, None), rest)] + [((u, k, m), self.byid[m].mem) for m in ms]
        self.holds[u] = [t for t, _ in toks]
        for t, b in toks:
            h = self.tokens.get(t)
            if h is None:
                self.tokens[t] = [b, 1]
                self.bytes += b
            else:
                h[1] += 1

    def free(self, u):
        for t in self.holds.pop(u, ()):
            h = self.tokens[t]
            h[1] -= 1
            if h[1] == 0:
                del self.tokens[t]
                self.bytes -= h[0]


def check_schedule(J, steps, where="schedule"):
    """Validate steps for J (FORMATS.md s.2); return a Plan or raise
    ScheduleError naming the first invalid step and its node."""
    byid = J.byid
    for i, (op, v) in enumerate(steps):
        if v not in byid:
            raise ScheduleError("%s: steps[%d]: %s '%s': no such node in the graph"
                                % (where, i, op, v), i, v)
    compute_only = not any(op == "free" for op, _ in steps)
    outputs = set(J.outputs)
    frees_after = {}
    pre = []
    if compute_only:
        used = set()
        for i in range(len(steps) - 1, -1, -1):
            op, u = steps[i]
            fr = []
            if u not in used and u not in outputs:
                fr.append(u)
            used.discard(u)
            for w in byid[u].inputs:
                if w not in used:
                    if w not in outputs:
                        fr.append(w)
                    used.add(w)
            frees_after[i] = fr
        pre = [n.id for n in J.nodes if n.kind == "input" and n.id not in used
               and n.id not in outputs]
    resident = {n.id for n in J.nodes if n.kind == "input"}
    cur = sum(byid[v].mem for v in resident)
    held = _Held(J)
    for v in resident:
        held.compute(v)
    for v in pre:
        resident.discard(v)
        cur -= byid[v].mem
        held.free(v)
    peak, peak_step, have = cur, -1, False
    # held: the distinct storages the executor holds, with only the outputs
    # a node drops as its workspace
    held_peak, held_step = held.bytes, -1
    computed = set()
    cost, computes, distinct = 0.0, 0, 0
    explicit, timeline = [], []
    for i, (op, u) in enumerate(steps):
        n = byid[u]
        if op == "free":
            if u not in resident:
                raise ScheduleError("%s: steps[%d]: free '%s': it is not resident"
                                    % (where, i, u), i, u)
            resident.discard(u)
            cur -= n.mem
            held.free(u)
            explicit.append(("free", u))
            timeline.append(cur)
            continue
        if n.kind == "input":
            raise ScheduleError("%s: steps[%d]: compute '%s': an input node is resident from "
                                "the start and can never be computed" % (where, i, u), i, u)
        if u in resident:
            raise ScheduleError("%s: steps[%d]: compute '%s': it is already resident"
                                % (where, i, u), i, u)
        for w in n.inputs:
            if w not in resident:
                raise ScheduleError("%s: steps[%d]: compute '%s': its input '%s' is not "
                                    "resident" % (where, i, u, w), i, u)
        during = cur + n.mem + n.workspace
        dropped = n.workspace if n.dropped is None else n.dropped
        held.compute(u)
        if not have or held.bytes + dropped > held_peak:
            held_peak, held_step = held.bytes + dropped, len(explicit)
        if not have or during > peak:
            peak, peak_step = during, len(explicit)
        have = True
        timeline.append(during)
        resident.add(u)
        cur += n.mem
        cost += n.cost
        computes += 1
        if u not in computed:
            computed.add(u)
            distinct += 1
        explicit.append(("compute", u))
        for w in frees_after.get(i, []):
            if w in resident:
                resident.discard(w)
                cur -= byid[w].mem
                held.free(w)
                explicit.append(("free", w))
                timeline.append(cur)
    for o in J.outputs:
        if o not in resident:
            raise ScheduleError("%s: end: output '%s' is not resident" % (where, o),
                                len(steps), o)
    return Plan(explicit, pre, peak, peak_step, cost, computes, computes - distinct, timeline,
                held_peak, held_step)


def topological_steps(J):
    """The plain schedule: every non-input node once, in the graph's order
    (compute-only; frees as the simulator derives them)."""
    return [("compute", n.id) for n in J.nodes if n.kind != "input"]


class Result:
    """What a run returns: the loss, one gradient per parameter (None for
    parameters the loss does not depend on), the measured peak and per-step
    memory, and the schedule's figures."""

    def __init__(self, **kw):
        self.__dict__.update(kw)


def execute(J, binding, steps, seed=0, where="schedule", plan=None, meter=None, rng="seeded"):
    """Run a schedule (list of (op, node)) of J on a Binding.  The schedule
    is checked first (ScheduleError, nothing run).  Returns a Result.
    rng: "seeded" (each random node under its own seed from `seed`) or
    "global" (torch's generator, drawn as eager draws: see joint.Rng).

    meter: read the allocator while the schedule runs (remat_torch/meter.py)
    and report real_peak, the bytes of the graph's inputs plus the most the
    allocator held above what it held when the run began: the figure to set
    beside the simulator's peak.  None: on CUDA only, where it costs nothing
    (on the CPU it runs the profiler)."""
    if plan is None:
        plan = check_schedule(J, steps, where)
    cuda = any(t.is_cuda for t in list(binding.params.values()) + list(binding.batch.values())
               if isinstance(t, torch.Tensor))
    if meter is None:
        meter = cuda
    if not meter:
        return _execute(J, binding, seed, plan, rng)
    from remat_torch.meter import AllocatorMeter, device_of
    device = device_of(list(binding.params.values()) + list(binding.batch.values()))
    with AllocatorMeter(device) as m:
        res = _execute(J, binding, seed, plan, rng)
    res.real_peak = sum(n.mem for n in J.nodes if n.kind == "input") + m.peak
    if cuda:
        res.cuda_max_allocated = torch.cuda.max_memory_allocated(device)
    return res


def _execute(J, binding, seed, plan, rng="seeded"):
    ex = Execution(J, binding, seed, plan, rng=rng)
    ex.advance(len(plan.steps))
    return ex.finish()


class Execution:
    """A schedule being run, resumable: advance(k) runs the plan's steps
    up to step k (wrap() runs the forward part when the module is called
    and the rest when autograd reaches its outputs); finish() runs the
    epilogue and returns the Result.  Memory is measured as it goes (the
    module docstring).  rng: "seeded" (each random node under its own seed
    from `seed`) or "global" (see Runner)."""

    def __init__(self, J, binding, seed, plan, rng="seeded"):
        self.J, self.plan = J, plan
        self.R = R = Runner(J, binding, seed, rng=rng, computes=plan.counts())
        self.ext = binding.external_storages()
        self.held = {}      # storage ptr -> [nbytes, references from resident nodes]
        self.cur = 0
        self.i = 0
        self.timeline = []
        with torch.no_grad():
            for n in J.nodes:
                if n.kind == "input":
                    v = binding.batch.get(n.id)
                    if not isinstance(v, torch.Tensor):
                        raise JointError("no tensor for input node %s" % n.id)
                    R.env[n.id] = v
                    self._hold(v)
            for v in plan.pre_free:
                self._release(R.env.pop(v))
        self.peak, self.peak_step, self.have = self.cur, -1, False

    def _hold(self, v):
        for p, b in value_storages(v).items():
            if p in self.ext:
                continue
            h = self.held.get(p)
            if h is None:
                self.held[p] = [b, 1]
                self.cur += b
            else:
                h[1] += 1

    def _release(self, v):
        for p, b in value_storages(v).items():
            if p in self.ext:
                continue
            h = self.held[p]
            h[1] -= 1
            if h[1] == 0:
                del self.held[p]
                self.cur -= h[0]

    def advance(self, stop):
        """Run steps self.i .. stop-1."""
        J, R, held, ext, timeline = self.J, self.R, self.held, self.ext, self.timeline
        steps = self.plan.steps
        with torch.no_grad():
            while self.i < stop:
                i = self.i
                self.i += 1
                op, u = steps[i]
                if op == "free":
                    self._release(R.env.pop(u))
                    timeline.append(self.cur)
                    continue
                n = J.byid[u]
                v = R.call(n)
                new = {p: b for p, b in value_storages(v).items()
                       if p not in held and p not in ext}
                during = self.cur + sum(new.values())
                if not self.have or during > self.peak:
                    self.peak, self.peak_step = during, i
                self.have = True
                timeline.append(during)
                if n.keep is not None:
                    v = R.kept(n, v)
                kept = value_storages(v)
                stale = [p for p in kept if p in held]
                if stale and n.mem and moved_from(n) is None:
                    raise JointError("node %s: its operator returned a tensor that another "
                                     "resident node holds; the graph says it allocates %d bytes"
                                     % (u, n.mem))
                if n.id in J.side_effects:
                    v = None    # it only wrote a parameter or buffer
                R.env[u] = v
                self._hold(v)
                del v

    def finish(self, epilogue=True):
        """The Result of the whole run (call once every step has run)."""
        plan, R = self.plan, self.R
        with torch.no_grad():
            if epilogue:
                R.run_epilogue()
            loss, grads = R.results()
        return Result(loss=loss, grads=grads, measured_peak=self.peak,
                      measured_step=self.peak_step, timeline=self.timeline,
                      simulated_peak=plan.peak, cost=plan.cost, computes=plan.computes,
                      recomputes=plan.recomputes, steps=plan.steps, held_peak=plan.held_peak,
                      real_peak=None, cuda_max_allocated=None)
