#!/usr/bin/python3
"""The joint graph, the executor, remat_torch.plan() and the commands run
and check, against PyTorch.

    test_joint_torch.py PATH/TO/remat PROJECT_ROOT

First, with torch hidden: `python3 -m remat_torch run|check ...` (and the
module forms, --help included) print one line naming
scripts/bootstrap-torch.sh and exit 1, and remat_torch.plan() raises
ImportError with that line.  Then exits 77 (ctest: skipped) when
/usr/bin/python3 has no torch.  Then, on small models with batch norm,
dropout, in-place ReLU, max pooling and a user model file:

1. export --joint writes the graph and GRAPH.pt; `remat plan` plans it;
   `run --compare` executes the schedule: gradients bitwise equal to the
   plain run, measured peak equal to the model's;
2. an invalid schedule (an input not resident, an unknown node, a missing
   output, a double compute) is refused before anything runs: exit 1, one
   line naming the step and the node, even when the tensors file is absent;
3. a graph whose operator torch does not have is refused, naming the node
   and the operator (in a call and in a view);
4. the measurement is not the model: a graph that says a node allocates 4
   bytes less than its operator does gives a measured peak 4 bytes above
   the schedule's;
5. remat_torch.plan(): step(x, y) leaves in .grad what loss.backward()
   leaves (allclose; bitwise equal to the plain run under the step's seed),
   adds to .grad on a second call, updates the running statistics as eager
   PyTorch does, and refuses a batch of another shape; budget "lowest";
   a budget below the lower bound raises PlanError with remat's exit 3;
6. `check` prints the six figures, --json exactly its keys, exit 0; exit 3
   when nothing fits;
7. export --joint --measure writes measured times (cost_unit us).
"""
import copy
import json
import os
import subprocess
import sys
import tempfile

REMAT, ROOT = sys.argv[1], sys.argv[2]
PYTHON = sys.executable   # the python3 running the tests (ctest: /usr/bin/python3)
HIDE_TORCH = ("import runpy, sys; sys.modules['torch'] = None; m = sys.argv[1]; "
              "sys.argv = [m] + sys.argv[2:]; runpy.run_module(m, run_name='__main__', "
              "alter_sys=True)")
ENV = dict(os.environ, REMAT=REMAT)


def one_line_error(p, what, code=1, want=()):
    lines = p.stderr.strip().splitlines()
    if p.returncode != code or len(lines) != 1 or "Traceback" in p.stderr:
        return ["%s: exit %d (want %d), stdout %r, stderr %r"
                % (what, p.returncode, code, p.stdout[-300:], p.stderr[-600:])]
    return ["%s: the message does not name %r: %s" % (what, w, p.stderr.strip())
            for w in want if w not in p.stderr]


def check_without_torch():
    fails = []
    for args in (["remat_torch", "check", "--help"], ["remat_torch", "run", "--help"],
                 ["remat_torch", "check", "resnet18", "--budget", "50%"],
                 ["remat_torch.check", "--help"], ["remat_torch.run", "g.json", "s.json"]):
        p = subprocess.run([PYTHON, "-c", HIDE_TORCH] + args, cwd=ROOT, capture_output=True,
                           text=True)
        fails += one_line_error(p, "without torch: python3 -m " + " ".join(args),
                                want=("scripts/bootstrap-torch.sh",))
    p = subprocess.run([PYTHON, "-c", "import sys; sys.modules['torch'] = None\n"
                        "import remat_torch\ntry:\n    remat_torch.plan(None, (), None)\n"
                        "except ImportError as e:\n    print(e)\n"], cwd=ROOT,
                       capture_output=True, text=True)
    if "scripts/bootstrap-torch.sh" not in p.stdout:
        fails.append("without torch: remat_torch.plan() does not say how to install torch: %r %r"
                     % (p.stdout, p.stderr[-300:]))
    return fails


_fails = check_without_torch()
for _f in _fails:
    print("FAIL", _f)
print("%s without torch" % ("ok  " if not _fails else "FAIL"))
if _fails:
    sys.exit(1)

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from harness import run_checks, torch_or_skip  # noqa: E402

torch = torch_or_skip(REMAT, ROOT)
import torch.nn as nn  # noqa: E402
import remat_torch  # noqa: E402
from remat_torch import api, joint as JT  # noqa: E402
from remat_torch.executor import ScheduleError, check_schedule, execute, topological_steps  # noqa: E402,E501

USER_MODEL = '''
import torch, torch.nn as nn
def build(batch):
    torch.manual_seed(0)
    m = nn.Sequential(nn.Conv2d(3, 8, 3, padding=1), nn.BatchNorm2d(8), nn.ReLU(inplace=True),
                      nn.MaxPool2d(2), nn.Conv2d(8, 8, 3, padding=1), nn.ReLU(inplace=True),
                      nn.Flatten(), nn.Dropout(0.3), nn.Linear(8 * 4 * 4, 5))
    x = torch.randn(batch, 3, 8, 8)
    y = torch.randint(0, 5, (batch,))
    return m, (x,), lambda out: nn.functional.cross_entropy(out, y)
'''


def small_cnn():
    torch.manual_seed(0)
    return nn.Sequential(nn.Conv2d(3, 8, 3, padding=1), nn.BatchNorm2d(8), nn.ReLU(inplace=True),
                         nn.MaxPool2d(2), nn.Conv2d(8, 8, 3, padding=1), nn.ReLU(inplace=True),
                         nn.Flatten(), nn.Dropout(0.3), nn.Linear(8 * 4 * 4, 5))


def cli(args, **kw):
    return subprocess.run([PYTHON, "-m"] + args, cwd=ROOT, capture_output=True, text=True,
                          env=ENV, **kw)


def write_json(path, obj):
    with open(path, "w") as f:
        json.dump(obj, f)


def check_cli_run(tmp):
    """1-3: export --joint, remat plan, run; invalid schedules and operators."""
    fails = []
    src = os.path.join(tmp, "user_model.py")
    with open(src, "w") as f:
        f.write(USER_MODEL)
    g = os.path.join(tmp, "user.json")
    p = cli(["remat_torch", "export", src + ":build", "--batch", "4", "--joint", "-o", g])
    if p.returncode != 0 or not os.path.exists(JT.tensors_path(g)):
        return ["export --joint: exit %d: %s" % (p.returncode, p.stderr)]
    s = os.path.join(tmp, "user.schedule.json")
    p = subprocess.run([REMAT, "plan", g, "--budget", "80%", "-o", s, "-q", "--time-limit", "1"],
                       capture_output=True,
                       text=True)
    if p.returncode != 0:
        return ["remat plan on the joint graph: exit %d: %s" % (p.returncode, p.stderr)]
    p = cli(["remat_torch", "run", g, s, "--compare", "--json"])
    try:
        j = json.loads(p.stdout)
    except ValueError:
        return ["run: exit %d, not JSON: %r %r" % (p.returncode, p.stdout, p.stderr)]
    if p.returncode != 0 or j["grads_equal"] is not True or \
            j["measured_peak"] != j["held_peak"] or j["recomputes"] < 1 or \
            not j["held_peak"] <= j["simulated_peak"] or \
            not j["real_peak"] <= 1.02 * j["simulated_peak"]:
        fails.append("run --compare: exit %d: %s" % (p.returncode, j))
    sim = json.loads(subprocess.run([REMAT, "simulate", g, s, "--json"], capture_output=True,
                                    text=True).stdout)
    if sim["peak_mem"] != j["simulated_peak"]:
        fails.append("run: the executor's check says peak %d, remat simulate %d"
                     % (j["simulated_peak"], sim["peak_mem"]))
    p2 = cli(["remat_torch.run", g, s])
    if p2.returncode != 0 or "measured_peak" not in p2.stdout:
        fails.append("python3 -m remat_torch.run: exit %d: %s" % (p2.returncode, p2.stderr))

    # 2. Invalid schedules: refused before anything runs (no tensors file).
    sched = json.load(open(s))
    graph = json.load(open(g))
    computes = [i for i, st in enumerate(sched["steps"]) if st["op"] == "compute"]
    first_bw = next(i for i in computes if sched["steps"][i]["node"].startswith("b"))
    bad = []
    s1 = copy.deepcopy(sched)   # a backward node first: its inputs are not resident
    node = s1["steps"][first_bw]["node"]
    s1["steps"].insert(0, s1["steps"][first_bw])
    bad.append((s1, "steps[0]", node))
    s2 = copy.deepcopy(sched)   # an unknown node
    s2["steps"][3] = {"op": "compute", "node": "f999.nothing"}
    bad.append((s2, "steps[3]", "f999.nothing"))
    s3 = copy.deepcopy(sched)   # the loss freed at the end: an output missing
    loss = next(n["id"] for n in graph["nodes"] if n["kind"] == "loss")
    s3["steps"].append({"op": "free", "node": loss})
    bad.append((s3, "end", loss))
    s4 = copy.deepcopy(sched)   # computing a resident node again
    c = s4["steps"][computes[0]]
    s4["steps"].insert(computes[0] + 1, dict(c))
    bad.append((s4, "steps[%d]" % (computes[0] + 1), c["node"]))
    J = JT.from_graph(graph, g)
    for k, (sc, step, node) in enumerate(bad):
        if k in (0, 2):   # the command line (each run imports torch: a few seconds)
            path = os.path.join(tmp, "bad%d.json" % k)
            write_json(path, sc)
            p = cli(["remat_torch", "run", g, path, "--tensors", os.path.join(tmp, "absent.pt")])
            fails += one_line_error(p, "run: invalid schedule %d" % k, want=(step, "'%s'" % node))
        try:
            check_schedule(J, [(x["op"], x["node"]) for x in sc["steps"]])
            fails.append("check_schedule accepted invalid schedule %d" % k)
        except ScheduleError as e:
            if step not in str(e) or "'%s'" % node not in str(e) or e.node != node:
                fails.append("check_schedule, schedule %d: %s (node %r)" % (k, e, e.node))
    # The same from Python: check_schedule raises with the step and node.
    try:
        check_schedule(J, [(x["op"], x["node"]) for x in s1["steps"]])
        fails.append("check_schedule accepted an invalid schedule")
    except ScheduleError as e:
        if e.step != 0 or e.node != s1["steps"][0]["node"]:
            fails.append("check_schedule: step %r node %r" % (e.step, e.node))

    # 3. Operators this torch cannot run: named with their node.
    g2 = copy.deepcopy(graph)
    victim = next(n for n in g2["nodes"] if n.get("call") and "relu" in n["id"])
    victim["call"][0]["op"] = "aten.no_such_op.default"
    p2 = os.path.join(tmp, "badop.json")
    write_json(p2, g2)
    p = cli(["remat_torch", "run", p2, s])
    fails += one_line_error(p, "run: unknown operator",
                            want=(victim["id"], "aten.no_such_op.default"))
    g3 = copy.deepcopy(graph)
    def find_view(r):
        if isinstance(r, dict):
            if "view" in r:
                return r
            for v in r.values():
                x = find_view(v)
                if x:
                    return x
        if isinstance(r, list):
            for v in r:
                x = find_view(v)
                if x:
                    return x
        return None
    holder = next(n for n in g3["nodes"] if find_view(n.get("call")))
    find_view(holder["call"])["view"] = "aten.not_a_view.default"
    try:
        JT.from_graph(g3, "badview.json")
        fails.append("from_graph accepted an unknown view operator")
    except JT.JointError as e:
        if holder["id"] not in str(e) or "aten.not_a_view.default" not in str(e):
            fails.append("unknown view operator: %s" % e)
    # A graph without a program is named as such.
    try:
        JT.from_graph(json.load(open(os.path.join(ROOT, "examples", "train-chain4.json"))),
                      "train-chain4.json")
        fails.append("from_graph accepted a graph without a program")
    except JT.JointError as e:
        if "--joint" not in str(e):
            fails.append("a graph without a program: %s" % e)
    return fails


def check_measurement():
    """4: the executor measures; it does not look sizes up."""
    fails = []
    model = small_cnn()
    x, y = torch.randn(4, 3, 8, 8), torch.randint(0, 5, (4,))
    lf = nn.functional.cross_entropy
    J = JT.build_joint(model, (x,), lf, (y,))
    steps = topological_steps(J)
    plan = check_schedule(J, steps)
    b = JT.bind_model(J, model, (x,), (y,), clone_buffers=True)
    ok = execute(J, b, steps, seed=3)
    if ok.measured_peak != ok.held_peak:
        fails.append("measured %d != modelled %d" % (ok.measured_peak, ok.held_peak))
    # The node computed at the peak says it allocates 4 bytes more.
    victim = J.byid[plan.steps[plan.held_step][1]] if plan.held_step >= 0 else None
    if victim is None:
        return fails + ["no compute step at the peak"]
    victim.mem += 4
    b = JT.bind_model(J, model, (x,), (y,), clone_buffers=True)
    res = execute(J, b, steps, seed=3)
    if res.measured_peak != ok.measured_peak or res.held_peak != ok.held_peak + 4:
        fails.append("a node 4 bytes too large in the graph: measured %d (was %d), modelled %d "
                     "(was %d)" % (res.measured_peak, ok.measured_peak, res.held_peak,
                                   ok.held_peak))
    return fails


def check_api():
    """5: remat_torch.plan() and the training step."""
    fails = []
    x, y = torch.randn(4, 3, 8, 8), torch.randint(0, 5, (4,))
    lf = nn.functional.cross_entropy
    model = small_cnn()
    eager = copy.deepcopy(model)
    low = remat_torch.plan(small_cnn(), x, lf, example_target=y, budget="lowest",
                           time_limit=1)
    plain_peak = check_schedule(low.graph, topological_steps(low.graph)).peak
    # Half way between the lowest budget and the no-remat peak.
    mid = (low.summary["peak_mem"] + plain_peak) // 2
    step = remat_torch.plan(model, x, lf, example_target=y, budget=mid, planner="auto",
                            time_limit=1)
    if step.summary["recomputes"] < 1:
        fails.append("plan at %d bytes recomputes nothing: %s" % (mid, step.summary))
    # Eager PyTorch under the same seed: dropout draws the same masks from
    # torch's generator (the schedule recomputes, and a recomputation
    # replays its first draw), so loss, gradients and buffers are eager's
    # bit for bit.
    torch.manual_seed(5)
    loss = step(x, y)
    if step.last.seed is not None:
        fails.append("step: seed %r, want None (drawn from torch's generator)"
                     % step.last.seed)
    torch.manual_seed(5)
    e_loss = lf(eager(x), y)
    e_loss.backward()
    for (n, p), (_, q) in zip(model.named_parameters(), eager.named_parameters()):
        if p.grad is None or not torch.equal(p.grad, q.grad) or \
                p.grad.stride() != q.grad.stride():
            fails.append("step: %s.grad differs from loss.backward()'s" % n)
    if not torch.equal(loss, e_loss.detach()):
        fails.append("step: loss %s, eager %s" % (loss, e_loss))
    for (n, b), (_, c) in zip(model.named_buffers(), eager.named_buffers()):
        if not torch.equal(b, c):
            fails.append("step: buffer %s differs from eager's after one step" % n)
    # At the lowest budget the dropout's mask is computed twice (the
    # recomputation replays the first draw): still eager's, bit for bit.
    rnd = set(low.graph.random_nodes)
    if sum(1 for op, nid in low.steps if op == "compute" and nid in rnd) < 2:
        fails.append("lowest: the dropout is not recomputed (the check below is moot)")
    e_low = copy.deepcopy(low.model)
    torch.manual_seed(9)
    l_loss = low(x, y)
    torch.manual_seed(9)
    le = lf(e_low(x), y)
    le.backward()
    if not torch.equal(l_loss, le.detach()) or not all(
            torch.equal(p.grad, q.grad) for p, q in zip(low.model.parameters(),
                                                         e_low.parameters())):
        fails.append("lowest, the dropout recomputed: not eager's loss and gradients")
    # Given a seed, each random node runs under a seed of its own: bitwise
    # equal to the plain run of the same graph under that seed.
    J2 = step.graph
    got = step.run(x, y, seed=11)
    pl_loss, pl_grads = JT.run_plain(J2, JT.bind_model(J2, small_cnn(), (x,), (y,)), seed=11)
    if got.seed != 11 or not torch.equal(pl_loss, got.loss) or not all(
            torch.equal(g, h) for g, h in zip(pl_grads, got.grads)):
        fails.append("step: with seed 11, not bitwise equal to the plain run")
    if step.last.measured_peak != step.plan.held_peak or \
            step.plan.peak != step.summary["peak_mem"]:
        fails.append("step: measured %d, modelled %d, planned %d (the model's %d)"
                     % (step.last.measured_peak, step.plan.held_peak, step.summary["peak_mem"],
                        step.plan.peak))
    if any(isinstance(v, torch.Tensor) for v in vars(step.last).values()):
        fails.append("step.last holds tensors: %s" % sorted(vars(step.last)))
    # A second call adds to .grad: run() gives the gradients of the seed the
    # call will draw.
    before = [p.grad.clone() for p in model.parameters()]
    state = torch.random.get_rng_state()
    g2 = step.run(x, y).grads
    torch.random.set_rng_state(state)
    step(x, y)
    for p, b0, g in zip(model.parameters(), before, g2):
        if not torch.equal(p.grad, b0 + g):
            fails.append("step: a second call does not add to .grad")
            break
    try:
        step(torch.randn(2, 3, 8, 8), y)
        fails.append("step: a batch of another shape was accepted")
    except JT.JointError as e:
        if "plan again" not in str(e):
            fails.append("step: unclear message for another shape: %s" % e)
    if not low.summary["peak_mem"] <= step.plan.peak < plain_peak:
        fails.append("budget lowest: peak %d, the 75%% plan's %d, no-remat %d"
                     % (low.summary["peak_mem"], step.plan.peak, plain_peak))
    low(x, y)
    if low.last.measured_peak != low.plan.held_peak:
        fails.append("budget lowest: measured %d, modelled %d" % (low.last.measured_peak,
                                                                   low.plan.held_peak))
    try:
        remat_torch.plan(small_cnn(), x, lf, example_target=y, budget="1KiB",
                         time_limit=1)
        fails.append("a 1 KiB budget did not raise PlanError")
    except api.PlanError as e:
        if e.exit_code != 3:
            fails.append("PlanError exit code %s, want 3: %s" % (e.exit_code, e))
    return fails


def check_check_command(tmp):
    """6: the check command."""
    fails = []
    p = cli(["remat_torch", "check", "tiny-encoder", "--batch", "2", "--input-shape", "16,64",
             "--budget", "lowest", "--planner", "auto", "--time-limit", "1", "--json"])
    try:
        j = json.loads(p.stdout)
    except ValueError:
        return ["check --json: exit %d, not JSON: %r %r" % (p.returncode, p.stdout, p.stderr)]
    keys = {"grads_equal", "max_abs_diff", "eager_allclose", "measured_peak", "simulated_peak",
            "real_peak", "recomputes", "overhead", "planner", "budget", "tolerance", "error"}
    if set(j) != keys:
        fails.append("check --json keys: %s" % sorted(j))
    if p.returncode != 0 or j["grads_equal"] is not True or j["eager_allclose"] is not True \
            or j["measured_peak"] > j["simulated_peak"] or j["error"] is not None or \
            j["real_peak"] > 1.02 * j["simulated_peak"]:
        fails.append("check --json: exit %d: %s" % (p.returncode, j))
    p = cli(["remat_torch", "check", "tiny-gpt", "--batch", "4", "--input-shape", "32",
             "--budget", "90%", "--planner", "rotor"])
    for k in ("grads_equal", "max_abs_diff", "measured_peak", "simulated_peak", "real_peak",
              "recomputes", "overhead", "atol 1e-05 + rtol 1e-05"):
        if k not in p.stdout:
            fails.append("check: the summary has no %s: %s" % (k, p.stdout))
    if p.returncode != 0 or "grads_equal     true" not in p.stdout:
        fails.append("check tiny-gpt rotor at 90%%: exit %d: %s %s" % (p.returncode, p.stdout,
                                                                  p.stderr))
    p = cli(["remat_torch", "check", "tiny-encoder", "--batch", "2", "--input-shape", "16,64",
             "--budget", "1KiB", "--time-limit", "1", "--json"])
    if p.returncode != 3 or json.loads(p.stdout)["error"] is None:
        fails.append("check at 1 KiB: exit %d (want 3): %s" % (p.returncode, p.stdout))
    p = cli(["remat_torch", "check", os.path.join(tmp, "missing.py") + ":build", "--budget",
             "50%"])
    fails += one_line_error(p, "check: a missing FILE.py", want=("missing.py",))
    return fails


def check_measure(tmp):
    """7: measured costs."""
    g = os.path.join(tmp, "measured.json")
    p = cli(["remat_torch", "export", "tiny-encoder", "--batch", "2", "--input-shape", "8,64",
             "--joint", "--measure", "-o", g])
    if p.returncode != 0:
        return ["export --joint --measure: exit %d: %s" % (p.returncode, p.stderr)]
    graph = json.load(open(g))
    costs = [n["cost"] for n in graph["nodes"] if n["kind"] != "input"]
    if graph["cost_unit"] != "us" or not all(c >= 0 for c in costs) or sum(costs) <= 0:
        return ["export --joint --measure: cost_unit %s, costs %s" % (graph["cost_unit"],
                                                                     costs[:5])]
    return []


def main():
    with tempfile.TemporaryDirectory() as tmp:
        return run_checks("remat_torch joint", (
            ("export --joint, remat plan, run; invalid schedules and operators",
             lambda: check_cli_run(tmp)),
            ("the peak is measured", check_measurement),
            ("remat_torch.plan() and the training step", check_api),
            ("check", lambda: check_check_command(tmp)),
            ("export --joint --measure", lambda: check_measure(tmp))))


if __name__ == "__main__":
    sys.exit(main())
