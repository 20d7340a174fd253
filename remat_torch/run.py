"""Execute a remat-schedule on a joint graph.

    /usr/bin/python3 -m remat_torch run GRAPH SCHEDULE [--json] [--seed N] [--compare]

GRAPH is a joint graph from `python3 -m remat_torch export MODEL --joint -o
GRAPH` (GRAPH.pt beside it holds the parameters, buffers and batch it was
traced with); SCHEDULE a remat-schedule for it (`remat plan GRAPH ... -o
SCHEDULE`).  The schedule is checked first under the simulator's rules:
an invalid one is refused before anything runs, naming the step and node
(exit 1); so is a graph with an operator this torch cannot run, naming the
node and the operator.  Then every step runs: compute runs the node's
operators, free drops its value.  Prints the loss, the measured peak (bytes
of the tensors the executor held, counted as the graph counts them), the
peak the schedule has under the graph's memory model, the real peak (what
PyTorch's allocator held, remat_torch/meter.py) and the recomputes;
--compare also runs the graph in its own order and says whether the loss
and every gradient are bitwise equal.  Exit 0 when the measured peak equals
the model's, the real peak is within 2% of the simulated one (and, with
--compare, the gradients are equal), 1 otherwise.
"""
import json
import sys

from remat_torch import command_parser, import_torch

PROG = "remat_torch run"

# How far the allocator's peak may go above the simulator's before `run`
# and `check` fail: the executor's own small tensors (a random node's saved
# generator state, a buffer's snapshot) are not in the graph.
REAL_SLACK = 0.02


def real_within(real, simulated):
    """real_peak <= simulated_peak * (1 + REAL_SLACK), or no real peak."""
    return real is None or real <= simulated * (1 + REAL_SLACK)


def main(argv=None, prog=PROG):
    torch = import_torch()
    if torch is None:
        return 1
    from remat_torch import joint as JT
    from remat_torch.executor import ScheduleError, check_schedule, execute, read_schedule
    ap = command_parser(__doc__, prog)
    ap.add_argument("graph", help="a joint graph (export --joint)")
    ap.add_argument("schedule", help="a remat-schedule for it")
    ap.add_argument("--tensors", help="parameters, buffers and batch (default GRAPH.pt)")
    ap.add_argument("--seed", type=int, default=0, help="seed of random operators (default 0)")
    ap.add_argument("--compare", action="store_true",
                    help="also run the graph in its own order and compare the gradients")
    ap.add_argument("--threads", type=int, default=1, help="torch CPU threads (default 1)")
    ap.add_argument("--json", action="store_true", help="print one JSON object on stdout")
    a = ap.parse_args(argv)
    torch.set_num_threads(a.threads)

    def fail(msg):
        if a.json:
            print(json.dumps({"error": msg}))
        print("%s: %s" % (prog, msg), file=sys.stderr)
        return 1
    try:
        J = JT.from_graph(JT.load_graph(a.graph), a.graph)
    except OSError as e:
        return fail("%s: cannot read: %s" % (a.graph, e.strerror or e))
    except (ValueError, KeyError, TypeError) as e:
        return fail("%s: not a joint graph: %s" % (a.graph, e))
    except JT.JointError as e:
        return fail(str(e))
    try:
        steps = read_schedule(a.schedule)
        plan = check_schedule(J, steps, a.schedule)
    except ScheduleError as e:
        return fail(str(e))
    tpath = a.tensors or JT.tensors_path(a.graph)
    try:
        data = torch.load(tpath)
    except (OSError, RuntimeError) as e:
        return fail("%s: cannot read the graph's tensors: %s" % (tpath, getattr(e, "strerror", e)))
    for c in J.consts:
        J.consts[c] = data["batch"][c]

    def binding():
        return JT.Binding({k: v.clone() for k, v in data["params"].items()},
                          {k: v.clone() for k, v in data["buffers"].items()}, dict(data["batch"]))
    try:
        res = execute(J, binding(), steps, seed=a.seed, where=a.schedule, plan=plan,
                      meter=True)
        equal = None
        if a.compare:
            loss0, grads0 = JT.run_plain(J, binding(), seed=a.seed)
            equal = torch.equal(loss0, res.loss) and all(
                (x is None and y is None) or (x is not None and y is not None and torch.equal(x, y))
                for x, y in zip(grads0, res.grads))
    except JT.JointError as e:
        return fail(str(e))
    real_ok = real_within(res.real_peak, res.simulated_peak)
    ok = res.measured_peak == res.held_peak and real_ok and equal in (None, True)
    out = {"loss": res.loss.item(), "measured_peak": res.measured_peak,
           "simulated_peak": res.simulated_peak, "held_peak": res.held_peak,
           "real_peak": res.real_peak,
           "computes": res.computes,
           "recomputes": res.recomputes, "cost": res.cost, "grads_equal": equal,
           "cuda_max_allocated": res.cuda_max_allocated, "error": None}
    if a.json:
        print(json.dumps(out))
    else:
        print("loss            %.6g" % out["loss"])
        print("measured_peak   %d bytes (held by the executor)" % res.measured_peak)
        print("simulated_peak  %d bytes (the schedule under the graph's memory model)"
              % res.simulated_peak)
        if res.held_peak != res.simulated_peak or res.measured_peak != res.held_peak:
            print("held_peak       %d bytes (the model's, counting only the outputs a node "
                  "drops as its workspace)%s" % (res.held_peak, "" if res.measured_peak ==
                                                 res.held_peak else "  DIFFERS"))
        print("real_peak       %d bytes (PyTorch's allocator)%s"
              % (res.real_peak, "" if real_ok else "  OVER the simulated peak by more than "
                 "%g%%" % (100 * REAL_SLACK)))
        print("computes        %d (%d recomputes)" % (res.computes, res.recomputes))
        if equal is not None:
            print("grads_equal     %s (bitwise, against the graph run in its own order)"
                  % str(equal).lower())
        if res.cuda_max_allocated is not None:
            print("cuda            max_memory_allocated %d bytes" % res.cuda_max_allocated)
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main(prog="python3 -m remat_torch.run"))
