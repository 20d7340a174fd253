#!/usr/bin/python3
"""Every planner's schedules executed in PyTorch (issue 13's checks).

    check_matrix.py [--quick] [--remat PATH] [--models a,b] [--planners p,q]
                    [--budgets 90%,70%,50%,lowest] [--time-limit S]
                    [--markdown FILE] [--json FILE]

For each model (resnet18, mobilenet_v2, a 2-layer Transformer encoder, a
small GPT-style decoder; CPU, small batches) the joint graph of one
training step is exported (remat_torch/joint.py), and for every planner
(`remat planners`) at every budget (90%, 70% and 50% of the no-remat peak,
and `lowest`: the lowest budget `auto` reaches, found by bisection; auto's
schedule there is the one the bisection found, since planning again under
a time limit need not find it) the schedule `remat plan` writes is
executed node by node
(remat_torch/executor.py).  A run passes when

  - the loss and every gradient are bitwise equal to the plain run of the
    same joint graph (every node once, in the graph's order), and so are
    the buffers (batch norm's running statistics) after the step;
  - the gradients are allclose (rtol 1e-5) to eager PyTorch's
    loss.backward() (dropout seeded the same way);
  - the measured peak (bytes of the storages the executor holds, while a
    node runs its outputs too) equals the graph's model of it byte for byte
    (remat simulate's peak_mem with each node's workspace cut to the outputs
    it drops), and remat simulate's peak_mem equals the executor's own
    reading of the schedule;
  - the real peak (PyTorch's allocator, remat_torch/meter.py) is at most 2%
    above remat simulate's peak_mem.

A planner that finds no schedule within a budget (remat exit 3) is a row
"no schedule", not a failure; any other planner error is a failure, and so
is `auto` finding nothing at the lowest budget it reached.  Prints a
Markdown table; exit 0 when every run passed, 1 otherwise, 77 without torch.

--quick is the subset ctest runs (torch/plans): smaller inputs, the fast
planners at every budget and the MILP planners at one, a time limit of 2 s.
The full matrix takes several minutes on two cores: run it as

    tests/torch/check_matrix.py --markdown bench/data/torch-check.md
"""
import argparse
import copy
import json
import os
import subprocess
import sys
import tempfile
import time

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
sys.path.insert(0, ROOT)

# name -> (exporter MODEL, batch, input shape)
FULL = {
    "resnet18": ("resnet18", 8, [3, 128, 128]),
    "mobilenet_v2": ("mobilenet_v2", 8, [3, 64, 64]),
    "encoder": ("tiny-encoder", 8, [64, 64]),
    "gpt": ("tiny-gpt", 8, [64]),
}
QUICK = {
    "resnet18": ("resnet18", 4, [3, 96, 96]),
    "mobilenet_v2": ("mobilenet_v2", 4, [3, 48, 48]),
    "encoder": ("tiny-encoder", 4, [32, 64]),
    "gpt": ("tiny-gpt", 4, [32]),
}
BUDGETS = ["90%", "70%", "50%", "lowest"]
SLOW = {"checkmate", "checkmate-lp"}


def planners(remat):
    p = subprocess.run([remat, "planners"], capture_output=True, text=True, check=True)
    return [line.split()[0] for line in p.stdout.splitlines() if line.strip()]


def run_model(label, spec, plist, budgets, remat, time_limit, tmp, quick, log):
    import torch
    from remat_torch import api, export as EX, joint as JT
    from remat_torch.executor import execute, read_schedule
    from remat_torch.check import grads_close
    from remat_torch.run import real_within
    name, batch, shape = spec
    torch.manual_seed(0)
    model, inputs, loss_fn, desc = EX.build(name, batch, shape)
    lf = lambda o: loss_fn(o)  # noqa: E731
    t0 = time.time()
    J = JT.build_joint(model, inputs, lf)
    gpath = os.path.join(tmp, label + ".json")
    JT.write_graph(JT.to_graph(J, "%s-joint-b%d" % (label, batch)), gpath)
    info = api.remat_info(gpath, remat)
    seed = 1
    b0 = JT.bind_model(J, model, inputs, clone_buffers=True)
    plain_loss, plain_grads = JT.run_plain(J, b0, seed=seed)
    e_loss, e_grads = JT.eager_step(copy.deepcopy(model), inputs, lf, (), J, seed)
    log("%s: %s, batch %d, %s: %d nodes, no-remat peak %d, parameter gradients %d bytes "
        "(%.1f s)" % (label, name, batch, shape, len(J.nodes), info["no_remat_peak"],
                      J.source["param_grads_bytes"], time.time() - t0))
    rows, fails = [], []
    low_auto = os.path.join(tmp, "%s.auto.low.schedule.json" % label)
    lowest = api.lowest_budget(gpath, "auto", remat, time_limit, info, out=low_auto)
    if lowest is None:
        fails.append("%s: auto finds no schedule at the no-remat peak" % label)
    for budget in budgets:
        if budget == "lowest":
            if lowest is None:
                continue
            bbytes, btext = lowest, "lowest (%d)" % lowest
        else:
            bbytes = int(info["no_remat_peak"] * float(budget[:-1]) / 100)
            btext = budget
        for planner in plist:
            if quick and planner in SLOW and budget != "70%":
                continue
            row = {"model": label, "planner": planner, "budget": btext, "budget_bytes": bbytes}
            spath = os.path.join(tmp, "%s.%s.%s.schedule.json" % (label, planner, budget[:-1]
                                                                  if budget != "lowest" else "low"))
            t1 = time.time()
            try:
                if spath == low_auto and os.path.exists(low_auto):
                    summary, rc = {}, 0  # planned by the bisection
                else:
                    summary, rc = api.remat_plan(gpath, bbytes, planner, spath, remat,
                                                 time_limit)
            except api.PlanError as e:
                summary, rc = {"error": str(e)}, e.exit_code
            row["plan_s"] = round(time.time() - t1, 2)
            if rc == 3:
                row["status"] = "no schedule"
                rows.append(row)
                if planner == "auto" and budget == "lowest":
                    fails.append("%s: auto found no schedule at the lowest budget it reached"
                                 % label)
                continue
            if rc != 0:
                row["status"] = "error"
                rows.append(row)
                fails.append("%s %s %s: remat plan exit %s: %s"
                             % (label, planner, budget, rc, summary.get("error")))
                continue
            sim = api.remat_simulate(gpath, spath, remat)
            steps = read_schedule(spath)
            b = JT.bind_model(J, model, inputs, clone_buffers=True)
            t2 = time.time()
            res = execute(J, b, steps, seed=seed, meter=True)
            row["exec_s"] = round(time.time() - t2, 2)
            eq = torch.equal(plain_loss, res.loss) and all(
                (x is None) == (y is None) and (x is None or torch.equal(x, y))
                for x, y in zip(plain_grads, res.grads))
            beq = all(torch.equal(b0.buffers[n], b.buffers[n]) for n in b.buffers)
            diff, close = grads_close(res.grads + [res.loss], e_grads + [e_loss])
            row.update(status="ok", grads_equal=eq, buffers_equal=beq, allclose=close,
                       max_abs_diff=diff, measured_peak=res.measured_peak,
                       held_peak=res.held_peak, real_peak=res.real_peak,
                       simulated_peak=sim["peak_mem"], python_peak=res.simulated_peak,
                       recomputes=sim["recomputes"], overhead=sim["overhead"])
            bad = []
            if not eq:
                bad.append("gradients differ from the plain run")
            if not beq:
                bad.append("buffers differ from the plain run")
            if not close:
                bad.append("gradients not allclose to eager (max diff %g)" % diff)
            if res.measured_peak != res.held_peak:
                bad.append("measured peak %d != modelled %d" % (res.measured_peak,
                                                                res.held_peak))
            if not real_within(res.real_peak, sim["peak_mem"]):
                bad.append("real peak %d over simulated %d by more than 2%%"
                           % (res.real_peak, sim["peak_mem"]))
            if res.simulated_peak != sim["peak_mem"]:
                bad.append("the executor's check says peak %d, remat simulate %d"
                           % (res.simulated_peak, sim["peak_mem"]))
            if sim["peak_mem"] > bbytes:
                bad.append("peak %d over the budget %d" % (sim["peak_mem"], bbytes))
            if bad:
                row["status"] = "FAIL"
                fails.append("%s %s %s: %s" % (label, planner, budget, "; ".join(bad)))
            rows.append(row)
            log("  %-12s %-18s %-11s peak %10d real %10d (%+.2f%%)  +%.2f%%  %d recomputes  %s"
                % (planner, btext, row["status"], sim["peak_mem"], res.real_peak,
                   100.0 * (res.real_peak / max(1, sim["peak_mem"]) - 1),
                   100 * sim["overhead"], sim["recomputes"], "; ".join(bad)))
    return rows, fails, info


def markdown(rows, infos):
    out = ["| model | planner | budget | grads_equal | allclose | max_abs_diff | measured peak "
           "| simulated peak | real peak | recomputes | overhead |",
           "| --- | --- | --- | --- | --- | --- | ---: | ---: | ---: | ---: | ---: |"]
    for r in rows:
        if r["status"] not in ("ok", "FAIL"):
            out.append("| %s | %s | %s | %s | | | | | | | |" % (r["model"], r["planner"],
                                                             r["budget"], r["status"]))
            continue
        out.append("| %s | %s | %s | %s | %s | %.3g | %d | %d | %d (%+.2f%%) | %d | %.2f%% |"
                   % (r["model"], r["planner"], r["budget"], str(r["grads_equal"]).lower(),
                      str(r["allclose"]).lower(), r["max_abs_diff"], r["measured_peak"],
                      r["simulated_peak"], r["real_peak"],
                      100.0 * (r["real_peak"] / max(1, r["simulated_peak"]) - 1),
                      r["recomputes"], 100 * r["overhead"]))
    return "\n".join(out) + "\n"


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("remat_pos", nargs="?", help="the remat binary (or --remat)")
    ap.add_argument("root", nargs="?", help="ignored (the repository root, for ctest)")
    ap.add_argument("--remat", help="the remat binary (default build/remat)")
    ap.add_argument("--quick", action="store_true", help="the ctest subset")
    ap.add_argument("--models", help="comma-separated: resnet18, mobilenet_v2, encoder, gpt")
    ap.add_argument("--planners", help="comma-separated (default: every planner)")
    ap.add_argument("--budgets", help="comma-separated (default 90%%,70%%,50%%,lowest)")
    ap.add_argument("--time-limit", type=float, help="per plan (default 2 quick, 10 full)")
    ap.add_argument("--markdown", help="write the table to this file")
    ap.add_argument("--json", help="write the rows to this file")
    a = ap.parse_args()
    try:
        import torch
    except ImportError:
        print("torch is not installed for /usr/bin/python3: skipped "
              "(install it with scripts/bootstrap-torch.sh)")
        return 77
    torch.set_num_threads(1)
    remat = a.remat or a.remat_pos or os.path.join(ROOT, "build", "remat")
    specs = QUICK if a.quick else FULL
    models = a.models.split(",") if a.models else list(specs)
    plist = a.planners.split(",") if a.planners else planners(remat)
    budgets = a.budgets.split(",") if a.budgets else BUDGETS
    tl = a.time_limit if a.time_limit is not None else (2 if a.quick else 10)
    t0 = time.time()

    def log(msg):
        print(msg, flush=True)
    rows, fails, infos = [], [], {}
    with tempfile.TemporaryDirectory() as tmp:
        for m in models:
            r, f, info = run_model(m, specs[m], plist, budgets, remat, tl, tmp, a.quick, log)
            rows += r
            fails += f
            infos[m] = info
    table = markdown(rows, infos)
    print()
    print(table)
    if a.markdown:
        with open(a.markdown, "w") as f:
            f.write(table)
    if a.json:
        with open(a.json, "w") as f:
            json.dump({"rows": rows, "info": infos, "quick": a.quick}, f, indent=1)
    ran = sum(1 for r in rows if r["status"] in ("ok", "FAIL"))
    for f in fails:
        print("FAIL", f)
    print("remat_torch plans: %d schedules executed, %d without a schedule, %d failures (%.0f s)"
          % (ran, sum(1 for r in rows if r["status"] == "no schedule"), len(fails),
             time.time() - t0))
    return 1 if fails else 0


if __name__ == "__main__":
    sys.exit(main())
