#!/usr/bin/python3
"""judge.py - an independent judge of remat graphs and schedules.

Written from docs/FORMATS.md (sections 1 to 3) alone, in Python, so that it
shares no code, no language and no data structure with remat's C simulator
(src/sim/).  Tests that must not take remat's word for a schedule re-judge
it here: tests/stress/stress.py, tests/zoo/check_zoo.py and
tests/torch/test_export_torch.py.  Standard library only.

As a command line:

    judge.py GRAPH SCHEDULE [--budget B] [--json]   replay SCHEDULE on GRAPH
    judge.py GRAPH [--budget B] [--json]            the graph's own figures

With a schedule it reports validity (the first bad step, its node and the
reason), peak_mem, cost, baseline_cost, overhead, computes, recomputes and
feasible (valid, and peak_mem <= B when --budget is given).  Exit codes
follow FORMATS.md section 4 for `remat simulate`: 0 valid (and within B),
1 unreadable or invalid graph or schedule, 2 usage error (an unreadable
budget), 3 valid but over B.  Without a schedule it prints nodes, edges,
inputs, outputs, total_mem, no_remat_peak, min_peak_lower_bound and
baseline_cost, as `remat info --json` must.

As a module:

    g = judge.load_graph(path)                 # raises judge.GraphError
    steps = judge.load_schedule(path)          # raises judge.ScheduleError
    r = judge.replay(g, steps, budget=None)    # a dict, never raises
    judge.no_remat_peak(g), judge.min_peak_lower_bound(g), g.baseline_cost
    judge.parse_budget("60%", judge.no_remat_peak(g))

Invalid schedules are results, not exceptions: r["valid"] is False and
r["error"] says why; the figures of an invalid schedule are None.
"""
import argparse
import heapq
import json
import os
import re
import sys
from fractions import Fraction

KINDS = ("input", "forward", "loss", "backward", "op")
MAX_BYTES = 1 << 53
MAX_BUDGET = (1 << 63) - 1


class GraphError(ValueError):
    """The graph file breaks a rule of FORMATS.md section 1."""


class ScheduleError(ValueError):
    """The file is not a remat-schedule at all (as opposed to a schedule
    whose steps break a rule, which replay() reports as invalid)."""


class BudgetError(ValueError):
    """A budget that FORMATS.md section 3 cannot read."""


# --------------------------------------------------------------- JSON

def _no_constants(name):
    raise ValueError("%s is not JSON" % name)


def _no_duplicate_keys(pairs):
    """An object from its (key, value) pairs; a key given twice is refused
    (Python would keep the last one silently, remat's reader refuses it:
    README, "One strict reader")."""
    out = {}
    for k, v in pairs:
        if k in out:
            raise ValueError("the key '%s' is given twice in one object" % k)
        out[k] = v
    return out


def read_json(path):
    """The parsed file; NaN and Infinity (which Python would accept) are
    refused, as they are not JSON, and so are objects with a key twice."""
    with open(path, encoding="utf-8") as f:
        return json.load(f, parse_constant=_no_constants,
                         object_pairs_hook=_no_duplicate_keys)


def _is_number(v):
    return isinstance(v, (int, float)) and not isinstance(v, bool)


def _as_bytes(v):
    """An integer number of bytes in [0, 2^53] (2.0 counts as 2), or None."""
    if not _is_number(v):
        return None
    if isinstance(v, float):
        if v != v or v in (float("inf"), float("-inf")) or not v.is_integer():
            return None
        v = int(v)
    return v if 0 <= v <= MAX_BYTES else None


# --------------------------------------------------------------- graph

class Graph:
    """A loaded remat-graph.  Nodes are numbered in file order; every list
    is indexed by that number.  inputs[v] holds each distinct input once,
    in the order first listed.  topo is the loader's order (Kahn's
    algorithm, the ready node earliest in the file first)."""

    def __init__(self, name, cost_unit):
        self.name = name
        self.cost_unit = cost_unit
        self.ids = []
        self.index = {}
        self.kind = []
        self.mem = []
        self.workspace = []
        self.cost = []
        self.inputs = []
        self.recompute = []
        self.grad_of = []
        self.outputs = []
        self.topo = []

    @property
    def n(self):
        return len(self.ids)

    @property
    def baseline_cost(self):
        """Every non-input node computed once."""
        return sum(c for c, k in zip(self.cost, self.kind) if k != "input")

    def needed(self):
        """The nodes some output depends on, the outputs included."""
        seen = set()
        todo = list(self.outputs)
        while todo:
            v = todo.pop()
            if v not in seen:
                seen.add(v)
                todo.extend(self.inputs[v])
        return seen


def _kahn(g):
    """The loader's topological order: Kahn's algorithm, taking among the
    ready nodes the one earliest in the file.  On a cyclic graph the nodes
    on or after a cycle are missing from it."""
    waiting = [len(ins) for ins in g.inputs]
    users = [[] for _ in range(g.n)]
    for v in range(g.n):
        for u in g.inputs[v]:
            users[u].append(v)
    ready = [v for v in range(g.n) if waiting[v] == 0]
    heapq.heapify(ready)
    order = []
    while ready:
        u = heapq.heappop(ready)
        order.append(u)
        for v in users[u]:
            waiting[v] -= 1
            if waiting[v] == 0:
                heapq.heappush(ready, v)
    return order


def _a_cycle(g, placed):
    """One cycle among the nodes Kahn could not place: each of them has an
    input that was not placed either, so walking back along such inputs must
    come round.  Returned in data-flow order (each node feeds the next)."""
    left = [v for v in range(g.n) if v not in placed]
    walk, where = [], {}
    v = left[0]
    while v not in where:
        where[v] = len(walk)
        walk.append(v)
        v = next(u for u in g.inputs[v] if u not in placed)
    cyc = walk[where[v]:] + [v]
    return [g.ids[u] for u in reversed(cyc)]


def graph_from_json(doc, source="<graph>"):
    """Check doc against every rule of FORMATS.md section 1 and return a
    Graph; raise GraphError naming the source, the node and the field."""
    def bad(what, node=None, field=None):
        where = source
        if node is not None:
            where += ": node '%s'" % node
        if field is not None:
            where += ": '%s'" % field
        raise GraphError("%s: %s" % (where, what))

    if not isinstance(doc, dict):
        bad("the top level must be a JSON object")
    if doc.get("format") != "remat-graph":
        bad("must be \"remat-graph\" (got %r)" % (doc.get("format"),), field="format")
    ver = doc.get("version")
    if not _is_number(ver) or ver != 1:
        bad("must be 1 (got %r)" % (ver,), field="version")
    name = doc.get("name", os.path.basename(source))
    if not isinstance(name, str):
        bad("must be a string", field="name")
    unit = doc.get("cost_unit", "unit")
    if not isinstance(unit, str):
        bad("must be a string", field="cost_unit")
    nodes = doc.get("nodes")
    if not isinstance(nodes, list):
        bad("must be an array of node objects", field="nodes")

    g = Graph(name, unit)
    raw_inputs, raw_grad = [], []
    for i, nd in enumerate(nodes):
        if not isinstance(nd, dict):
            bad("nodes[%d] must be an object" % i)
        nid = nd.get("id")
        if not isinstance(nid, str) or not nid:
            bad("nodes[%d]: must be a non-empty string (got %r)" % (i, nid), field="id")
        if nid in g.index:
            bad("the id is not unique", nid, "id")
        kind = nd.get("kind", "op")
        if kind not in KINDS:
            bad("unknown kind %r" % (kind,), nid, "kind")
        if "mem" not in nd:
            bad("is required", nid, "mem")
        mem = _as_bytes(nd["mem"])
        if mem is None:
            bad("must be an integer from 0 to 2^53 (got %r)" % (nd["mem"],), nid, "mem")
        ws = _as_bytes(nd.get("workspace", 0))
        if ws is None:
            bad("must be an integer from 0 to 2^53 (got %r)" % (nd["workspace"],), nid,
                "workspace")
        cost = nd.get("cost", 1)
        if not _is_number(cost) or cost != cost or cost < 0 or cost == float("inf"):
            bad("must be a finite number >= 0 (got %r)" % (cost,), nid, "cost")
        if kind == "input":
            cost = 0           # inputs are never computed
        ins = nd.get("inputs", [])
        if not isinstance(ins, list) or not all(isinstance(x, str) for x in ins):
            bad("must be an array of node ids", nid, "inputs")
        if kind == "input" and ins:
            bad("must be empty on an input node", nid, "inputs")
        rec = nd.get("recompute", True)
        if not isinstance(rec, bool):
            bad("must be true or false", nid, "recompute")
        gof = nd.get("grad_of")
        if gof is not None and not isinstance(gof, str):
            bad("must be a node id", nid, "grad_of")
        if "label" in nd and not isinstance(nd["label"], str):
            bad("must be a string", nid, "label")
        g.index[nid] = i
        g.ids.append(nid)
        g.kind.append(kind)
        g.mem.append(mem)
        g.workspace.append(ws)
        g.cost.append(cost)
        g.recompute.append(rec)
        raw_inputs.append(ins)
        raw_grad.append(gof)

    for v in range(g.n):
        distinct = []
        for x in raw_inputs[v]:
            if x not in g.index:
                bad("unknown node '%s'" % x, g.ids[v], "inputs")
            if g.index[x] not in distinct:
                distinct.append(g.index[x])
        g.inputs.append(distinct)
        if raw_grad[v] is not None and raw_grad[v] not in g.index:
            bad("unknown node '%s'" % raw_grad[v], g.ids[v], "grad_of")
        g.grad_of.append(g.index[raw_grad[v]] if raw_grad[v] is not None else None)

    if "outputs" in doc:
        outs = doc["outputs"]
        if not isinstance(outs, list) or not all(isinstance(x, str) for x in outs):
            bad("must be an array of node ids", field="outputs")
        for x in outs:
            if x not in g.index:
                bad("unknown node '%s'" % x, field="outputs")
            if g.index[x] not in g.outputs:
                g.outputs.append(g.index[x])
    else:
        used = {u for ins in g.inputs for u in ins}
        g.outputs = [v for v in range(g.n) if v not in used]

    order = _kahn(g)
    if len(order) < g.n:
        cyc = _a_cycle(g, set(order))
        bad("the inputs form a cycle: " + " -> ".join(cyc), cyc[0], "inputs")
    g.topo = order
    return g


def load_graph(path):
    try:
        doc = read_json(path)
    except (OSError, ValueError) as e:
        raise GraphError("%s: cannot read: %s" % (path, e))
    return graph_from_json(doc, path)


# --------------------------------------------------------------- figures

def edges(g):
    """Distinct (input, node) pairs."""
    return sum(len(ins) for ins in g.inputs)


def min_peak_lower_bound(g):
    """No schedule peaks below the largest inputs + output + workspace of
    any node that is ever computed (every non-input node)."""
    best = 0
    for v in range(g.n):
        if g.kind[v] != "input":
            best = max(best, sum(g.mem[u] for u in g.inputs[v]) + g.mem[v] + g.workspace[v])
    return best


def no_remat_steps(g):
    """Every non-input node once, in the loader's topological order."""
    return [{"op": "compute", "node": g.ids[v]} for v in g.topo if g.kind[v] != "input"]


def no_remat_peak(g):
    """FORMATS.md section 3: the peak of no_remat_steps() in the
    compute-only form."""
    r = replay(g, no_remat_steps(g))
    if not r["valid"]:
        raise AssertionError("the topological order is not a valid schedule: " + r["error"])
    return r["peak_mem"]


def graph_figures(g):
    return {"nodes": g.n, "edges": edges(g),
            "inputs": sum(k == "input" for k in g.kind), "outputs": len(g.outputs),
            "total_mem": sum(g.mem), "no_remat_peak": no_remat_peak(g),
            "min_peak_lower_bound": min_peak_lower_bound(g),
            "baseline_cost": g.baseline_cost}


# --------------------------------------------------------------- budgets

_BUDGET = re.compile(r"\s*(\d*)(?:\.(\d*))?\s*(%|[A-Za-z]*)\s*", re.ASCII)
_UNITS = {"": 1, "b": 1, "kb": 10 ** 3, "mb": 10 ** 6, "gb": 10 ** 9, "tb": 10 ** 12,
          "kib": 2 ** 10, "mib": 2 ** 20, "gib": 2 ** 30, "tib": 2 ** 40}


def parse_budget(text, no_remat_peak=None):
    """FORMATS.md section 3 in exact arithmetic: bytes, a unit, or a
    percentage of no_remat_peak; fractions of a byte round down."""
    m = _BUDGET.fullmatch(text)
    if not m or not (m.group(1) or m.group(2)) or (m.group(3).lower() not in _UNITS
                                                   and m.group(3) != "%"):
        raise BudgetError("cannot read budget '%s'" % text)
    whole, frac = m.group(1) or "0", m.group(2) or ""
    amount = Fraction(int(whole + frac), 10 ** len(frac))
    unit = m.group(3)
    if unit == "%":
        if no_remat_peak is None:
            raise BudgetError("budget '%s' is a percentage and needs a graph" % text)
        value = amount * no_remat_peak / 100
    else:
        value = amount * _UNITS[unit.lower()]
    b = value.numerator // value.denominator
    if b > MAX_BUDGET:
        raise BudgetError("budget '%s' is too large" % text)
    return b


# --------------------------------------------------------------- schedules

def schedule_from_json(doc, source="<schedule>"):
    """The steps of a remat-schedule document (not yet checked one by one:
    that is replay()'s job)."""
    if not isinstance(doc, dict):
        raise ScheduleError("%s: the top level must be a JSON object" % source)
    if doc.get("format") != "remat-schedule":
        raise ScheduleError("%s: 'format' must be \"remat-schedule\"" % source)
    ver = doc.get("version")
    if not _is_number(ver) or ver != 1:
        raise ScheduleError("%s: 'version' must be 1" % source)
    if not isinstance(doc.get("steps"), list):
        raise ScheduleError("%s: 'steps' must be an array" % source)
    return doc["steps"]


def load_schedule(path):
    """(steps, the whole document)."""
    try:
        doc = read_json(path)
    except (OSError, ValueError) as e:
        raise ScheduleError("%s: cannot read: %s" % (path, e))
    return schedule_from_json(doc, path), doc


def _derived_frees(g, order):
    """The compute-only form: what to free before the first step, and after
    each step.  Every value is followed through its events (computed at a
    step, or read by a step); after an event that is not followed by a read
    (the value is computed again next, or never touched again) it is freed,
    unless it is an output.  An input's first event is the start."""
    events = [[] for _ in range(g.n)]
    for v in range(g.n):
        if g.kind[v] == "input":
            events[v].append((-1, "start"))
    for i, v in enumerate(order):
        for u in g.inputs[v]:
            events[u].append((i, "read"))
        events[v].append((i, "compute"))
    outputs = set(g.outputs)
    before, after = [], [[] for _ in order]
    for u in range(g.n):
        if u in outputs:
            continue
        ev = events[u]
        for k, (step, _) in enumerate(ev):
            if k + 1 == len(ev) or ev[k + 1][1] != "read":
                (before if step < 0 else after[step]).append(u)
    return before, after


def _step_error(r, step, node, msg):
    r["valid"] = False
    r["error_step"] = step
    r["error_node"] = node
    r["error"] = "step %d: %s" % (step, msg)
    return r


def replay(g, steps, budget=None):
    """Replay steps (a list of {"op", "node"} objects, as in a schedule
    file) under FORMATS.md section 2.  Returns a dict with valid, error
    (None or a message), error_step (the index of the first bad step, or
    len(steps) for a failed end condition), error_node, form
    ("explicit" or "compute-only"), peak_mem, peak_step, cost,
    baseline_cost, overhead, computes, recomputes, budget and feasible."""
    r = {"valid": True, "error": None, "error_step": None, "error_node": None,
         "form": None, "peak_mem": None, "peak_step": None, "cost": None,
         "baseline_cost": g.baseline_cost, "overhead": None, "computes": None,
         "recomputes": None, "budget": budget, "feasible": False}
    parsed = []
    for i, st in enumerate(steps):
        if not isinstance(st, dict):
            return _step_error(r, i, None, "a step must be an object")
        op, nid = st.get("op"), st.get("node")
        if op not in ("compute", "free"):
            return _step_error(r, i, None, "'op' must be \"compute\" or \"free\" (got %r)"
                               % (op,))
        if not isinstance(nid, str):
            return _step_error(r, i, None, "'node' must be a node id (got %r)" % (nid,))
        if nid not in g.index:
            return _step_error(r, i, nid, "'node': unknown node '%s'" % nid)
        parsed.append((op, g.index[nid]))

    compute_only = all(op == "compute" for op, _ in parsed)
    r["form"] = "compute-only" if compute_only else "explicit"
    if compute_only:
        before, after = _derived_frees(g, [v for _, v in parsed])
    else:
        before, after = [], None

    resident = {v for v in range(g.n) if g.kind[v] == "input"}
    resident.difference_update(before)
    held = sum(g.mem[v] for v in resident)
    peak, peak_step = None, None
    cost, computes, ever = 0, 0, set()
    for i, (op, v) in enumerate(parsed):
        name = g.ids[v]
        if op == "free":
            if v not in resident:
                return _step_error(r, i, name, "free '%s': it is not resident" % name)
            resident.remove(v)
            held -= g.mem[v]
            continue
        if g.kind[v] == "input":
            return _step_error(r, i, name, "compute '%s': an input node is never computed"
                               % name)
        if v in resident:
            return _step_error(r, i, name, "compute '%s': it is already resident" % name)
        if v in ever and not g.recompute[v]:
            return _step_error(r, i, name, "compute '%s': it has \"recompute\": false and "
                               "was computed before" % name)
        for u in g.inputs[v]:
            if u not in resident:
                return _step_error(r, i, name, "compute '%s': its input '%s' is not resident"
                                   % (name, g.ids[u]))
        during = held + g.mem[v] + g.workspace[v]
        if peak is None or during > peak:
            peak, peak_step = during, i
        resident.add(v)
        held += g.mem[v]
        cost += g.cost[v]
        computes += 1
        ever.add(v)
        if after is not None:
            for u in after[i]:
                resident.remove(u)
                held -= g.mem[u]

    end = len(parsed)
    for o in g.outputs:
        if o not in resident:
            return _step_error(r, end, g.ids[o], "end: output '%s' is not resident" % g.ids[o])
    for v in g.needed():
        # implied by the rules above (an output resident at the end was
        # computed from resident inputs, and so on back), checked anyway
        if g.kind[v] != "input" and v not in ever:
            return _step_error(r, end, g.ids[v], "end: '%s' is needed by an output but "
                               "was never computed" % g.ids[v])
    if peak is None:
        # No compute step: the memory at the end (memory is measured while
        # computes run; an input freed before the first step, written out or
        # by the compute-only rule, does not count).
        peak = held
    base = g.baseline_cost
    r.update({"peak_mem": peak, "peak_step": peak_step, "cost": cost, "computes": computes,
              "recomputes": computes - len(ever),
              "overhead": cost / base - 1.0 if base > 0 else 0.0,
              "feasible": budget is None or peak <= budget})
    return r


def compare_summary(summary, r, file_budget=None, rel=1e-6):
    """Where a schedule file's informative summary disagrees with the
    replay r: a list of 'field: file X, judge Y' strings.  feasible is
    compared only when r was replayed at the file's own budget."""
    if not isinstance(summary, dict):
        return ["summary: not an object"]
    out = []
    for k in ("peak_mem", "computes", "recomputes"):
        if k in summary and summary[k] != r[k]:
            out.append("%s: file %r, judge %r" % (k, summary[k], r[k]))
    for k in ("cost", "baseline_cost", "overhead"):
        if k in summary:
            a, b = summary[k], r[k]
            if not _is_number(a) or b is None or abs(a - b) > max(1e-9, rel * max(abs(a), abs(b))):
                out.append("%s: file %r, judge %r" % (k, a, b))
    if "feasible" in summary and r["budget"] is not None and r["budget"] == file_budget \
            and summary["feasible"] is not r["feasible"]:
        out.append("feasible: file %r, judge %r" % (summary["feasible"], r["feasible"]))
    return out


# --------------------------------------------------------------- command line

REPORT_KEYS = ("valid", "feasible", "peak_mem", "cost", "baseline_cost", "overhead",
               "computes", "recomputes", "budget", "error", "error_step", "error_node", "form")


def main(argv=None):
    ap = argparse.ArgumentParser(description="Replay a remat-schedule on a remat-graph "
                                 "under docs/FORMATS.md, independently of remat.")
    ap.add_argument("graph")
    ap.add_argument("schedule", nargs="?")
    ap.add_argument("--budget", help="bytes, 4GiB, 1.5GB, or a percentage such as 60%%")
    ap.add_argument("--json", action="store_true", help="print one JSON object")
    a = ap.parse_args(argv)
    try:
        g = load_graph(a.graph)
    except GraphError as e:
        print("judge: %s" % e, file=sys.stderr)
        return 1
    nrp = no_remat_peak(g)
    budget = None
    if a.budget is not None:
        try:
            budget = parse_budget(a.budget, nrp)
        except BudgetError as e:
            print("judge: %s" % e, file=sys.stderr)
            return 2
    if a.schedule is None:
        out = graph_figures(g)
        if budget is not None:
            out["budget"] = budget
        if a.json:
            print(json.dumps(out))
        else:
            for k, v in out.items():
                print("%-22s %s" % (k, v))
        return 0
    try:
        steps, doc = load_schedule(a.schedule)
    except ScheduleError as e:
        print("judge: %s" % e, file=sys.stderr)
        return 1
    r = replay(g, steps, budget)
    out = {k: r[k] for k in REPORT_KEYS}
    if r["valid"] and "summary" in doc:
        out["summary_mismatches"] = compare_summary(doc["summary"], r, doc.get("budget"))
    if a.json:
        print(json.dumps(out))
    else:
        for k in REPORT_KEYS + (("summary_mismatches",) if "summary_mismatches" in out else ()):
            print("%-20s %s" % (k, json.dumps(out[k])))
    if not r["valid"]:
        print("judge: %s: %s" % (a.schedule, r["error"]), file=sys.stderr)
        return 1
    return 0 if r["feasible"] else 3


if __name__ == "__main__":
    sys.exit(main())
