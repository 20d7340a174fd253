"""Training with a plan: remat_torch.plan(model, example_inputs, loss_fn,
budget, planner) exports the joint graph of one training step, asks the C
planner (`remat plan`) for a schedule within the budget and returns a Step;
`loss = step(inputs, target)` runs that schedule and leaves the gradients
in each parameter's .grad exactly as loss.backward() would (added to what
is there).

    import remat_torch
    step = remat_torch.plan(model, (x,), torch.nn.functional.cross_entropy,
                            example_target=y, budget="60%", planner="auto")
    for x, y in loader:
        opt.zero_grad()
        loss = step(x, y)
        opt.step()

The graph is specialised to the example's shapes, dtypes and device and to
training mode; a batch of another shape is refused (plan again).  The budget
counts what the schedule decides: the batch, activations, activation
gradients and parameter gradients; parameters, buffers and optimizer state
come on top (step.fixed_bytes).
"""
import json
import os
import shutil
import subprocess
import tempfile

from remat_torch import joint as JT
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


def find_remat(path=None):
    """The remat binary: `path`, $REMAT, the repository's build/remat, or
    `remat` on PATH."""
    for cand in (path, os.environ.get("REMAT"), os.path.join(ROOT, "build", "remat")):
        if cand and os.path.isfile(cand) and os.access(cand, os.X_OK):
            return cand
    found = shutil.which("remat")
    if found:
        return found
    raise PlanError("cannot find the remat binary: build it with scripts/bootstrap.sh "
                    "(build/remat), put it on PATH, or set REMAT")


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


def lowest_plan(graph_path, planner="auto", remat=None, time_limit=None, info=None, out=None):
    """The lowest budget (bytes) at which `planner` finds a schedule, and
    the JSON summary of that run: a bisection between the graph's lower
    bound and its no-remat peak (the first at the peak of the no-remat
    schedule); (None, None) when it finds none even there.  The budget is
    one the planner was run at and succeeded, not the lower peak of the
    schedule it found there: planning again at that peak may find nothing
    (the fast planners are not monotone in the budget; twremat on a tiny
    GPT found a 743,944-byte schedule at 754,487 and none at 743,944).
    Nor need planning again at that budget under a time limit: an anytime
    search may find its schedule only late.  With out, the schedule of
    the run at that budget is left in that file."""
    info = info or remat_info(graph_path, remat)
    lo, hi = int(info["min_peak_lower_bound"]) - 1, int(info["no_remat_peak"])
    s, rc = remat_plan(graph_path, hi, planner, out=out, remat=remat, time_limit=time_limit)
    if rc != 0:
        return None, None
    best, summary = hi, s
    hi = int(s["peak_mem"])
    while hi - lo > max(1, hi // 1000):
        mid = (lo + hi) // 2
        # A run that finds nothing (exit 3) writes no file: out keeps best's.
        s, rc = remat_plan(graph_path, mid, planner, out=out, remat=remat,
                           time_limit=time_limit)
        if rc == 0:
            hi = min(mid, int(s["peak_mem"]))
            best, summary = mid, s
        elif rc == 3:
            lo = mid
        else:
            raise PlanError("remat plan at %d: exit %d: %s" % (mid, rc, s.get("error")), rc, s)
    return best, summary


def lowest_budget(graph_path, planner="auto", remat=None, time_limit=None, info=None,
                  out=None):
    """lowest_plan()'s budget alone."""
    return lowest_plan(graph_path, planner, remat, time_limit, info, out)[0]


class Step:
    """A planned training step (see the module docstring).

    Attributes: graph (the Joint), steps (the schedule), summary (remat
    plan's JSON), fixed_bytes (parameters and buffers), last (the Result of
    the last call: measured_peak, recomputes, ...)."""

    def __init__(self, model, J, steps, summary, graph_path=None):
        self.model, self.graph, self.steps, self.summary = model, J, steps, summary
        self.graph_path = graph_path
        self.plan = check_schedule(J, steps)
        self.fixed_bytes = J.source.get("params_bytes", 0) + J.source.get("buffers_bytes", 0)
        self.last = None
        self._specs = None

    def _bind(self, inputs, targets):
        if isinstance(inputs, torch.Tensor):
            inputs = (inputs,)
        b = JT.bind_model(self.graph, self.model, tuple(inputs), tuple(targets))
        for nid in self.graph.inputs:
            want = self._specs.get(nid) if self._specs else None
            t = b.batch[nid]
            if want is not None and (tuple(t.shape), t.dtype, t.device) != want:
                raise JT.JointError("input %s: shape %s, dtype %s, device %s; the plan was made "
                                    "for %s, %s, %s (plan again for this shape)"
                                    % (nid, tuple(t.shape), t.dtype, t.device, *want))
        return b

    def run(self, inputs, *targets, seed=None):
        """Run the schedule; returns the executor's Result (loss, grads,
        measured_peak, ...) without touching .grad."""
        if self.graph.random_nodes and seed is None:
            seed = int(torch.randint(0, 2 ** 62, ()).item())
        self.model.train()
        b = self._bind(inputs, targets)
        res = execute(self.graph, b, self.steps, seed=seed or 0, plan=self.plan)
        res.seed = seed or 0
        self.last = res
        return res

    def __call__(self, inputs, *targets):
        """Run the schedule, add the gradients to each parameter's .grad
        (as loss.backward() does) and return the loss (detached)."""
        res = self.run(inputs, *targets)
        params = dict(self.model.named_parameters())
        with torch.no_grad():
            for (name, _, _), g in zip(self.graph.params, res.grads):
                if g is None:
                    continue
                p = params[name]
                if g.stride() != p.stride() or g.storage_offset() != 0:
                    g = torch.empty_strided(p.shape, p.stride(), dtype=p.dtype,
                                            device=p.device).copy_(g)
                if p.grad is None:
                    p.grad = g
                else:
                    p.grad.add_(g)
        return res.loss


def plan(model, example_inputs, loss_fn, budget="100%", planner="auto", example_target=None,
         remat=None, time_limit=None, measure=False, keep=None, progress=None):
    """Plan a training step of `model` within `budget` (bytes, "4GiB",
    "60%" of the no-remat peak, or "lowest": the lowest budget the planner
    reaches) with remat's `planner`, and return a Step.

    example_inputs: a tensor or tuple of tensors for model(*inputs);
    loss_fn(output, *targets) -> scalar, with example_target (a tensor or a
    tuple, or None for loss_fn(output)) giving the targets.  keep: a folder
    in which to leave the graph and schedule files (default: a temporary
    folder, removed).  Raises PlanError when no schedule fits."""
    if torch is None:
        from remat_torch import no_torch_message
        raise ImportError(no_torch_message())
    if isinstance(example_inputs, torch.Tensor):
        example_inputs = (example_inputs,)
    targets = () if example_target is None else \
        ((example_target,) if isinstance(example_target, torch.Tensor) else tuple(example_target))
    J = JT.build_joint(model, tuple(example_inputs), loss_fn, targets, measure=measure,
                       progress=progress)
    specs = {nid: (tuple(t.shape), t.dtype, t.device)
             for nid, t in zip(J.inputs, list(example_inputs) + list(targets))}
    folder = keep or tempfile.mkdtemp(prefix="remat_torch.")
    try:
        gpath = os.path.join(folder, "graph.json")
        spath = os.path.join(folder, "schedule.json")
        JT.write_graph(JT.to_graph(J, type(model).__name__ + "-joint"), gpath)
        if str(budget) == "lowest":
            budget, summary = lowest_plan(gpath, planner, remat, time_limit, out=spath)
            if budget is None:
                raise PlanError("planner %s finds no schedule even at the no-remat peak" % planner,
                                3)
            rc = 0  # the bisection's schedule, in spath
        else:
            summary, rc = remat_plan(gpath, budget, planner, spath, remat, time_limit)
        if rc != 0:
            raise PlanError("remat plan: %s" % summary.get("error"), rc, summary)
        with open(spath) as f:
            steps = parse_schedule(json.load(f), spath)
    finally:
        if keep is None:
            shutil.rmtree(folder, ignore_errors=True)
    st = Step(model, J, steps, summary, gpath if keep else None)
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
