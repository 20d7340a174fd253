"""Check a plan against PyTorch: export, plan, execute, compare.

    /usr/bin/python3 -m remat_torch check MODEL [--batch N] [--input-shape C,H,W]
                     --budget B [--planner P] [--json] [--time-limit S] [--seed N]

MODEL takes the exporter's forms (a torchvision name, a built-in extra, or
FILE.py:FUNCTION returning model, inputs and loss function).  The command
builds the joint graph of one training step (remat_torch/joint.py), asks
`remat plan` for a schedule within the budget (bytes, 4GiB, 50% of the
no-remat peak, or `lowest`: the lowest budget the planner `auto` reaches),
simulates it with `remat simulate`, executes it node by node
(remat_torch/executor.py) and compares:

  grads_equal     the loss and every parameter gradient are bitwise equal to
                  those of the same joint graph run in its own order, every
                  node once (the plain run)
  max_abs_diff    the largest difference between the schedule's gradients and
                  eager PyTorch's loss.backward() (random operators seeded the
                  same way); the human summary also says whether they are
                  allclose at rtol 1e-5
  measured_peak   the most bytes of activations, gradients and batch the
                  executor held at once (storages of the tensors it holds,
                  while a node runs its outputs too)
  simulated_peak  `remat simulate`'s peak_mem for the same schedule
  recomputes, overhead   the schedule's, from the simulator

Exit 0 when the gradients are equal and the two peaks agree; 1 when they do
not, or on bad input (an invalid schedule, an operator that cannot be
replayed); 3 when the planner finds no schedule within the budget.  With
--json: one object with exactly the keys above plus planner, budget and
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


def compare(J, model, inputs, loss_fn, steps, seed=0, targets=()):
    """Run steps and the plain order on clones of the buffers, and eager
    PyTorch on a copy of the model.  Returns a dict: grads_equal,
    max_abs_diff, allclose, measured_peak, result (the executor's Result),
    plain (loss, grads), eager (loss, grads)."""
    import torch
    from remat_torch import joint as JT
    from remat_torch.executor import execute
    b = JT.bind_model(J, model, inputs, targets, clone_buffers=True)
    plain_loss, plain_grads = JT.run_plain(J, b, seed=seed)
    b2 = JT.bind_model(J, model, inputs, targets, clone_buffers=True)
    res = execute(J, b2, steps, seed=seed)
    equal = torch.equal(plain_loss, res.loss) and all(
        (a is None and c is None) or (a is not None and c is not None and torch.equal(a, c))
        for a, c in zip(plain_grads, res.grads))
    buffers_equal = all(torch.equal(b.buffers[n], b2.buffers[n]) for n in b.buffers)
    eager_model = copy.deepcopy(model)
    e_loss, e_grads = JT.eager_step(eager_model, inputs, loss_fn, targets, J, seed)
    diff, close = 0.0, True
    for a, c in zip(res.grads, e_grads):
        if (a is None) != (c is None):
            close, diff = False, float("inf")
            continue
        if a is None:
            continue
        diff = max(diff, (a.double() - c.double()).abs().max().item() if a.numel() else 0.0)
        close = close and torch.allclose(a, c, rtol=1e-5)
    close = close and torch.allclose(res.loss, e_loss, rtol=1e-5)
    ebufs = dict(eager_model.named_buffers())
    eager_buffers = all(torch.allclose(b2.buffers[n].double(), ebufs[n].double(), rtol=1e-5)
                        for n in b2.buffers)
    return {"grads_equal": bool(equal), "max_abs_diff": diff, "allclose": bool(close),
            "buffers_equal": buffers_equal, "eager_buffers": eager_buffers,
            "measured_peak": res.measured_peak, "result": res,
            "plain": (plain_loss, plain_grads), "eager": (e_loss, e_grads)}


def _mib(b):
    return "%.2f MiB" % (b / 2 ** 20) if b is not None else "-"


def main(argv=None, prog=PROG):
    torch = import_torch()
    if torch is None:
        return 1
    from remat_torch import export as EX
    from remat_torch import joint as JT
    from remat_torch import api
    from remat_torch.executor import ScheduleError, read_schedule
    ap = command_parser(__doc__, prog)
    ap.add_argument("model", help="a torchvision model name, one of the exporter's extras "
                    "(%s), or FILE.py:FUNCTION" % ", ".join(EX.EXTRAS))
    ap.add_argument("--batch", type=int, default=1, help="batch size (default 1)")
    ap.add_argument("--input-shape", type=EX._shape,
                    help="comma-separated, without the batch (e.g. 3,64,64)")
    ap.add_argument("-b", "--budget", required=True,
                    help="bytes, 4GiB, 50%% of the no-remat peak, or 'lowest' (the lowest "
                    "budget the planner auto reaches)")
    ap.add_argument("-p", "--planner", default="auto", help="remat's planner (default auto)")
    ap.add_argument("-t", "--time-limit", type=float, help="the planner's time limit (seconds)")
    ap.add_argument("--measure", action="store_true",
                    help="costs are measured times of each node (us), so overhead is in time")
    ap.add_argument("--seed", type=int, default=0, help="seed of random operators (default 0)")
    ap.add_argument("--threads", type=int, default=1, help="torch CPU threads (default 1)")
    ap.add_argument("--remat", help="the remat binary (default: $REMAT, build/remat, PATH)")
    ap.add_argument("--keep", metavar="DIR", help="leave graph.json and schedule.json in DIR")
    ap.add_argument("--json", action="store_true", help="print one JSON object on stdout")
    a = ap.parse_args(argv)
    if a.batch < 1:
        ap.error("--batch must be at least 1")
    torch.set_num_threads(a.threads)
    torch.manual_seed(0)
    out = {"grads_equal": None, "max_abs_diff": None, "measured_peak": None,
           "simulated_peak": None, "recomputes": None, "overhead": None,
           "planner": a.planner, "budget": None, "error": None}

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
                               progress=say)
        except JT.JointError as e:
            return finish(1, str(e))
        gpath = os.path.join(folder, "graph.json")
        spath = os.path.join(folder, "schedule.json")
        JT.write_graph(JT.to_graph(J, desc.get("name", "check")), gpath)
        try:
            budget = a.budget
            summary = None
            if budget == "lowest":
                say("searching the lowest budget auto reaches")
                budget, summary = api.lowest_plan(gpath, "auto", a.remat, a.time_limit,
                                                  out=spath if a.planner == "auto" else None)
                if budget is None:
                    return finish(3, "auto finds no schedule at any budget")
            if summary is not None and a.planner == "auto":
                rc = 0  # the bisection's schedule, in spath
            else:
                say("planning with %s at %s" % (a.planner, budget))
                summary, rc = api.remat_plan(gpath, budget, a.planner, spath, a.remat,
                                             a.time_limit)
        except api.PlanError as e:
            return finish(e.exit_code if e.exit_code in (1, 2) else 1, str(e))
        out["budget"] = summary.get("budget")
        if rc != 0:
            return finish(rc if rc in (1, 2, 3) else 1, "remat plan: %s" % summary.get("error"))
        sim = api.remat_simulate(gpath, spath, a.remat)
        if sim["exit"] != 0 or not sim.get("valid"):
            return finish(1, "remat simulate: %s" % sim.get("error"))
        out.update(simulated_peak=sim["peak_mem"], recomputes=sim["recomputes"],
                   overhead=sim["overhead"])
        try:
            steps = read_schedule(spath)
            say("executing %d steps" % len(steps))
            c = compare(J, model, inputs, lambda o: loss_fn(o), steps, seed=a.seed)
        except (ScheduleError, JT.JointError) as e:
            return finish(1, str(e))
        out.update(grads_equal=c["grads_equal"], max_abs_diff=c["max_abs_diff"],
                   measured_peak=c["measured_peak"])
        ok = c["grads_equal"] and c["measured_peak"] == out["simulated_peak"]
        if not a.json:
            print("check %s: planner %s, budget %s (%d bytes)"
                  % (a.model, a.planner, a.budget, out["budget"]))
            print("grads_equal     %-22s bitwise, against the joint graph run in its own order"
                  % str(c["grads_equal"]).lower())
            print("max_abs_diff    %-22.3g against eager loss.backward(); allclose at rtol 1e-5: %s"
                  % (c["max_abs_diff"], "yes" if c["allclose"] else "NO"))
            print("measured_peak   %-22s %d bytes, held by the executor"
                  % (_mib(c["measured_peak"]), c["measured_peak"]))
            print("simulated_peak  %-22s %d bytes, remat simulate%s"
                  % (_mib(out["simulated_peak"]), out["simulated_peak"],
                     "" if ok else "  (DIFFERS)"))
            print("recomputes      %d" % out["recomputes"])
            print("overhead        %.2f%%  (of %s)" % (100 * out["overhead"],
                                                  "measured time" if a.measure else "FLOPs"))
            print("fixed           %s of parameters and buffers come on top"
                  % _mib(J.source["params_bytes"] + J.source["buffers_bytes"]))
            if c["result"].cuda_max_allocated is not None:
                print("cuda            max_memory_allocated %s" % _mib(c["result"].cuda_max_allocated))
        return finish(0 if ok else 1, None if ok else
                      ("gradients differ from the plain run" if not c["grads_equal"] else
                       "measured peak %d != simulated %d" % (c["measured_peak"],
                                                            out["simulated_peak"])))
    finally:
        if not a.keep:
            shutil.rmtree(folder, ignore_errors=True)


if __name__ == "__main__":
    sys.exit(main(prog="python3 -m remat_torch.check"))
