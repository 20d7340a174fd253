"""Check a plan against PyTorch: export, plan, execute, compare.

    /usr/bin/python3 -m remat_torch check MODEL [--batch N] [--input-shape C,H,W]
                     (--budget B | --memory M [--optimizer-state S]) [--planner P]
                     [--json] [--time-limit S] [--seed N] [--rtol R] [--atol A]

MODEL takes the exporter's forms (a torchvision name, a built-in extra, or
FILE.py:FUNCTION returning model, inputs and loss function).  The command
builds the joint graph of one training step (remat_torch/joint.py), asks
`remat plan` for a schedule, simulates it with `remat simulate`, executes
it node by node (remat_torch/executor.py) and compares.  How much memory:
--budget is what the plan holds (bytes, 4GiB, 50% of the no-remat peak, or
`lowest`: the lowest budget the planner reaches); --memory is what the
whole step may hold on the device, parameters, buffers and the optimizer
state (--optimizer-state, default 0) included.

  grads_equal     the loss and every parameter gradient are bitwise equal to
                  those of the same joint graph run in its own order, every
                  node once (the plain run)
  max_abs_diff    the largest difference between the schedule's gradients and
                  eager PyTorch's loss.backward() on the same weights (random
                  operators seeded the same way)
  eager_allclose  every gradient and the loss within the tolerance of eager's:
                  |plan - eager| <= atol + rtol * |eager|, element by element
                  (--rtol, default 1e-5; --atol, default 1e-5, torch.testing's
                  for float32: a few ulps of a small gradient); a gradient one
                  side has and the other lacks is a difference
  measured_peak   the most bytes of activations, gradients and batch the
                  executor held at once (storages of the tensors it holds,
                  while a node runs its outputs too)
  simulated_peak  `remat simulate`'s peak_mem for the same schedule
  real_peak       what PyTorch's allocator held at most while the schedule ran,
                  plus the batch (remat_torch/meter.py)
  recomputes, overhead   the schedule's, from the simulator

Exit 0 when the gradients are bitwise equal to the plain run and within the
tolerance of eager, the measured peak is the one the graph's model gives,
and the real peak is at most 2% above the simulated one; 1 when not, or on
bad input (an invalid schedule, an operator that cannot be replayed); 3
when the planner finds no schedule within the budget.  With --json: one
object with exactly the keys above plus planner, budget, tolerance and
error.
"""
import copy
import json
import os
import shutil
import sys
import tempfile

from remat_torch import command_parser, import_torch

PROG = "remat_torch check"
# atol: torch.testing.assert_close's for float32.  With 1e-8 a one-layer
# nn.GRU failed (its cell's in-place operators on chunked views run other
# kernels in the trace: 9.5e-7 on a gradient of 0.02; an outside review).
RTOL, ATOL = 1e-5, 1e-5


def grads_close(a_list, b_list, rtol=RTOL, atol=ATOL):
    """(max |a - b| over every element, all within atol + rtol * |b|): the
    comparison with eager; a gradient one side has and the other lacks
    counts as an infinite difference."""
    diff, close = 0.0, True
    for a, b in zip(a_list, b_list):
        if (a is None) != (b is None):
            close, diff = False, float("inf")
            continue
        if a is None or a.numel() == 0:
            continue
        if a.shape != b.shape:
            close, diff = False, float("inf")
            continue
        d = (a.double() - b.double()).abs()
        diff = max(diff, d.max().item())
        close = close and bool((d <= atol + rtol * b.double().abs()).all().item())
    return diff, close


def compare(J, model, inputs, loss_fn, steps, seed=0, targets=(), rtol=RTOL, atol=ATOL):
    """Run steps and the plain order on clones of the buffers, and eager
    PyTorch on a copy of the model.  Returns a dict: grads_equal,
    max_abs_diff, allclose, measured_peak, real_peak, result (the
    executor's Result), plain (loss, grads), eager (loss, grads)."""
    import torch
    from remat_torch import joint as JT
    from remat_torch.executor import execute
    b = JT.bind_model(J, model, inputs, targets, clone_buffers=True)
    plain_loss, plain_grads = JT.run_plain(J, b, seed=seed)
    b2 = JT.bind_model(J, model, inputs, targets, clone_buffers=True)
    res = execute(J, b2, steps, seed=seed, meter=True)
    equal = torch.equal(plain_loss, res.loss) and all(
        (a is None and c is None) or (a is not None and c is not None and torch.equal(a, c))
        for a, c in zip(plain_grads, res.grads))
    buffers_equal = all(torch.equal(b.buffers[n], b2.buffers[n]) for n in b.buffers)
    eager_model = copy.deepcopy(model)
    e_loss, e_grads = JT.eager_step(eager_model, inputs, loss_fn, targets, J, seed)
    diff, close = grads_close(res.grads + [res.loss], e_grads + [e_loss], rtol, atol)
    ebufs = dict(eager_model.named_buffers())
    eager_buffers = all(torch.allclose(b2.buffers[n].double(), ebufs[n].double(), rtol=1e-5)
                        for n in b2.buffers)
    return {"grads_equal": bool(equal), "max_abs_diff": diff, "allclose": bool(close),
            "buffers_equal": buffers_equal, "eager_buffers": eager_buffers,
            "measured_peak": res.measured_peak, "real_peak": res.real_peak, "result": res,
            "plain": (plain_loss, plain_grads), "eager": (e_loss, e_grads)}


def _mib(b):
    from remat_torch.api import _size
    return _size(b) if b is not None else "-"


def main(argv=None, prog=PROG):
    torch = import_torch()
    if torch is None:
        return 1
    from remat_torch import export as EX
    from remat_torch import joint as JT
    from remat_torch import api
    from remat_torch.executor import ScheduleError, check_schedule, read_schedule
    from remat_torch.run import REAL_SLACK, real_within
    ap = command_parser(__doc__, prog)
    ap.add_argument("model", help="a torchvision model name, one of the exporter's extras "
                    "(%s), or FILE.py:FUNCTION" % ", ".join(EX.EXTRAS))
    ap.add_argument("--batch", type=int, default=1, help="batch size (default 1)")
    ap.add_argument("--input-shape", type=EX._shape,
                    help="comma-separated, without the batch (e.g. 3,64,64)")
    how = ap.add_mutually_exclusive_group(required=True)
    how.add_argument("-b", "--budget",
                     help="what the plan holds: bytes, 4GiB, 50%% of the no-remat peak, or "
                     "'lowest' (the lowest budget the planner reaches)")
    how.add_argument("-m", "--memory",
                     help="what the whole step holds on the device (bytes, 4GiB): parameters, "
                     "buffers and optimizer state included")
    ap.add_argument("--optimizer-state", default="0", metavar="BYTES",
                    help="with --memory: bytes the optimizer's state takes (default 0)")
    ap.add_argument("-p", "--planner", default="auto", help="remat's planner (default auto)")
    ap.add_argument("-t", "--time-limit", type=float, help="the planner's time limit (seconds)")
    ap.add_argument("--measure", action="store_true",
                    help="costs are measured times of each node (us), so overhead is in time")
    ap.add_argument("--fake", action="store_true",
                    help="plan from a trace on the meta device (nothing allocated while "
                    "planning; the check itself runs for real)")
    ap.add_argument("--seed", type=int, default=0, help="seed of random operators (default 0)")
    ap.add_argument("--rtol", type=float, default=RTOL,
                    help="relative tolerance against eager (default %g)" % RTOL)
    ap.add_argument("--atol", type=float, default=ATOL,
                    help="absolute tolerance against eager (default %g)" % ATOL)
    ap.add_argument("--threads", type=int, default=1, help="torch CPU threads (default 1)")
    ap.add_argument("--remat", help="the remat binary (default: $REMAT, build/remat, PATH)")
    ap.add_argument("--keep", metavar="DIR", help="leave graph.json and schedule.json in DIR")
    ap.add_argument("--json", action="store_true", help="print one JSON object on stdout")
    a = ap.parse_args(argv)
    if a.batch < 1:
        ap.error("--batch must be at least 1")
    if a.rtol < 0 or a.atol < 0:
        ap.error("--rtol and --atol must not be negative")
    try:
        device_bytes = api.parse_bytes(a.memory, "--memory") if a.memory else None
        opt_bytes = api.parse_bytes(a.optimizer_state, "--optimizer-state")
    except ValueError as e:
        ap.error(str(e))
    torch.set_num_threads(a.threads)
    torch.manual_seed(0)
    out = {"grads_equal": None, "max_abs_diff": None, "eager_allclose": None,
           "measured_peak": None, "simulated_peak": None, "real_peak": None,
           "recomputes": None, "overhead": None, "planner": a.planner, "budget": None,
           "tolerance": {"rtol": a.rtol, "atol": a.atol}, "error": None}

    def finish(code, err=None):
        if err:
            out["error"] = err
        if a.json:
            print(json.dumps(out))
        if err:
            print("%s: %s" % (prog, err), file=sys.stderr)
        return code

    quiet = a.json or not sys.stderr.isatty()
    say = (lambda m: None) if quiet else (lambda m: print("%s: %s" % (prog, m), file=sys.stderr))
    try:
        model, inputs, loss_fn, desc = EX.build(a.model, a.batch, a.input_shape)
    except SystemExit as e:
        return finish(1, str(e).replace(EX.PROG + ": ", ""))
    folder = a.keep or tempfile.mkdtemp(prefix="remat_torch_check.")
    if a.keep:
        os.makedirs(folder, exist_ok=True)
    try:
        try:
            J = JT.build_joint(model, inputs, lambda o: loss_fn(o), measure=a.measure,
                               progress=say, fake=a.fake)
        except JT.JointError as e:
            return finish(1, str(e))
        except NotImplementedError as e:      # --fake: no meta kernel (torch 1.13)
            return finish(1, "--fake: " + str(e).strip().split("\n")[0])
        mem = api.Memory(J.source, opt_bytes)
        gpath = os.path.join(folder, "graph.json")
        spath = os.path.join(folder, "schedule.json")
        JT.write_graph(JT.to_graph(J, desc.get("name", "check")), gpath)
        try:
            budget = api.plan_budget(mem, a.budget, device_bytes)
            say("planning with %s at %s" % (a.planner, budget))
            held = api.rng_state_holder(J, list(model.parameters()) + list(inputs))
            summary, _ = api.schedule_file(gpath, spath, budget, a.planner, a.remat,
                                           a.time_limit, mem, in_memory=device_bytes is not None,
                                           held=held)
        except api.PlanError as e:
            if e.summary:
                out["budget"] = e.summary.get("budget")
            return finish(e.exit_code if e.exit_code in (1, 2, 3) else 1, str(e))
        out["budget"] = summary.get("budget")
        sim = api.remat_simulate(gpath, spath, a.remat)
        if sim["exit"] != 0 or not sim.get("valid"):
            return finish(1, "remat simulate: %s" % sim.get("error"))
        out.update(simulated_peak=sim["peak_mem"], recomputes=sim["recomputes"],
                   overhead=sim["overhead"])
        try:
            steps = read_schedule(spath)
            plan = check_schedule(J, steps, spath)
            say("executing %d steps" % len(steps))
            c = compare(J, model, inputs, lambda o: loss_fn(o), steps, seed=a.seed,
                        rtol=a.rtol, atol=a.atol)
        except (ScheduleError, JT.JointError) as e:
            return finish(1, str(e))
        out.update(grads_equal=c["grads_equal"], max_abs_diff=c["max_abs_diff"],
                   eager_allclose=c["allclose"], measured_peak=c["measured_peak"],
                   real_peak=c["real_peak"])
        problems = []
        if not c["grads_equal"]:
            problems.append("gradients differ from the plain run")
        if not c["allclose"]:
            problems.append("gradients differ from eager loss.backward() by up to %.3g, beyond "
                            "atol %g + rtol %g" % (c["max_abs_diff"], a.atol, a.rtol))
        if plan.peak != out["simulated_peak"]:
            problems.append("the graph's model gives peak %d, remat simulate %d"
                            % (plan.peak, out["simulated_peak"]))
        if c["measured_peak"] != plan.held_peak:
            problems.append("measured peak %d != the model's %d" % (c["measured_peak"],
                                                                     plan.held_peak))
        real_ok = real_within(c["real_peak"], out["simulated_peak"])
        if not real_ok:
            problems.append("the allocator held %d bytes, over the simulated peak %d by more "
                            "than %g%%" % (c["real_peak"], out["simulated_peak"],
                                           100 * REAL_SLACK))
        if not a.json:
            print("check %s: planner %s, budget %s (%d bytes)"
                  % (a.model, a.planner, a.budget or "from --memory %s" % a.memory,
                     out["budget"]))
            print("grads_equal     %-22s bitwise, against the joint graph run in its own order"
                  % str(c["grads_equal"]).lower())
            print("max_abs_diff    %-22.3g against eager loss.backward(); within atol %g + rtol "
                  "%g: %s" % (c["max_abs_diff"], a.atol, a.rtol,
                              "yes" if c["allclose"] else "NO"))
            print("measured_peak   %-22s %d bytes, held by the executor"
                  % (_mib(c["measured_peak"]), c["measured_peak"]))
            print("simulated_peak  %-22s %d bytes, remat simulate"
                  % (_mib(out["simulated_peak"]), out["simulated_peak"]))
            print("real_peak       %-22s %d bytes, PyTorch's allocator (%+.2f%%)%s"
                  % (_mib(c["real_peak"]), c["real_peak"],
                     100.0 * (c["real_peak"] / max(1, out["simulated_peak"]) - 1),
                     "" if real_ok else "  OVER"))
            print("recomputes      %d" % out["recomputes"])
            print("overhead        %.2f%%  (of %s)" % (100 * out["overhead"],
                                                  "measured time" if a.measure else "FLOPs"))
            print("fixed           %-22s on top: %s" % (_mib(mem.fixed), mem.parts()))
            if c["result"].cuda_max_allocated is not None:
                print("cuda            max_memory_allocated %s"
                      % _mib(c["result"].cuda_max_allocated))
        return finish(1 if problems else 0, "; ".join(problems) or None)
    finally:
        if not a.keep:
            shutil.rmtree(folder, ignore_errors=True)


if __name__ == "__main__":
    sys.exit(main(prog="python3 -m remat_torch.check"))
