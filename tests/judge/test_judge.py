#!/usr/bin/python3
"""Unit tests of tests/judge/judge.py.  Every expected figure was worked out
by hand from docs/FORMATS.md (the working is in the comments); nothing here
runs remat.  Run: /usr/bin/python3 tests/judge/test_judge.py"""
import json
import os
import subprocess
import sys
import tempfile
import unittest

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
import judge  # noqa: E402


def G(nodes, outputs=None, **top):
    doc = {"format": "remat-graph", "version": 1, "nodes": nodes}
    if outputs is not None:
        doc["outputs"] = outputs
    doc.update(top)
    return doc


def N(nid, mem, inputs=(), **kw):
    nd = {"id": nid, "mem": mem}
    if inputs:
        nd["inputs"] = list(inputs)
    nd.update(kw)
    return nd


def C(*ids):
    return [{"op": "compute", "node": i} for i in ids]


def F(*ids):
    return [{"op": "free", "node": i} for i in ids]


# Kumar et al. 2019, Fig. 1: A->B->C, (B,C)->D, (A,D)->E, every node 1 byte, cost 1.
KUMAR = G([N("A", 1, cost=1), N("B", 1, ["A"], cost=1), N("C", 1, ["B"], cost=1),
           N("D", 1, ["B", "C"], cost=1), N("E", 1, ["A", "D"], cost=1)])

# An input x (10 B), a (4 B, cost 2, 100 B workspace) reads x, b (6 B, cost 3)
# reads a and x; the output is b.
WS = G([N("x", 10, kind="input"), N("a", 4, ["x"], cost=2, workspace=100),
        N("b", 6, ["a", "x"], cost=3)], ["b"])


def load(doc):
    return judge.graph_from_json(json.loads(json.dumps(doc)), "t.json")


class TopologicalOrder(unittest.TestCase):
    def test_earliest_ready_in_file_first(self):
        # File order c(reads a), a, b, d(reads b).  Ready at first: a, b ->
        # a.  Then c (file position 0) is ready and comes before b: a c b d.
        # (A first-in-first-out queue would give a b c d.)
        g = load(G([N("c", 50, ["a"]), N("a", 1), N("b", 10), N("d", 1, ["b"])], ["d"]))
        self.assertEqual([g.ids[v] for v in g.topo], ["a", "c", "b", "d"])

    def test_no_remat_peak_follows_that_order(self):
        # Same graph; only d is an output, so c is dead but still computed
        # once by the no-remat schedule, then freed at once.
        # a c b d: a 1 | c 1+50=51, free c and a | b 10 | d 10+1=11 -> 51.
        # (In the order a b c d: a 1 | b 11 | c 11+50=61 ... -> 61.)
        g = load(G([N("c", 50, ["a"]), N("a", 1), N("b", 10), N("d", 1, ["b"])], ["d"]))
        self.assertEqual(judge.no_remat_peak(g), 51)
        r = judge.replay(g, C("a", "b", "c", "d"))
        self.assertEqual(r["peak_mem"], 61)

    def test_duplicate_inputs_count_once(self):
        g = load(G([N("x", 3, kind="input"), N("y", 5, ["x", "x"]), N("z", 7, ["y", "x", "y"])]))
        self.assertEqual([g.ids[u] for u in g.inputs[2]], ["y", "x"])
        self.assertEqual(judge.edges(g), 3)
        # z: x 3 + y 5 + z 7 = 15
        self.assertEqual(judge.min_peak_lower_bound(g), 15)

    def test_default_outputs_are_the_unused_nodes(self):
        g = load(G([N("x", 1, kind="input"), N("u", 1), N("a", 1, ["x"]), N("b", 1, ["a"])]))
        self.assertEqual([g.ids[o] for o in g.outputs], ["u", "b"])


class GraphFigures(unittest.TestCase):
    def test_kumar(self):
        # A B C D E: A 1 | B 2 | C 3 | D: A B C + D = 4, then B, C freed |
        # E: A D + E = 3, A, D freed.  Lower bound: D reads B, C: 1+1+1 = 3
        # (E: A, D, E = 3 too).
        g = load(KUMAR)
        self.assertEqual(judge.graph_figures(g), {
            "nodes": 5, "edges": 6, "inputs": 0, "outputs": 1, "total_mem": 5,
            "no_remat_peak": 4, "min_peak_lower_bound": 3, "baseline_cost": 5})

    def test_workspace_and_input(self):
        # a runs with x, a and its workspace: 10 + 4 + 100 = 114; b: 10+4+6 = 20.
        # baseline 2 + 3 (x costs nothing).
        g = load(WS)
        f = judge.graph_figures(g)
        self.assertEqual((f["no_remat_peak"], f["min_peak_lower_bound"], f["baseline_cost"],
                          f["total_mem"], f["inputs"]), (114, 114, 5, 20, 1))

    def test_defaults(self):
        # cost defaults to 1, an input's cost is 0 whatever the file says
        g = load(G([N("x", 1, kind="input", cost=9), N("y", 1, ["x"])], name="n",
                   cost_unit="us"))
        self.assertEqual(g.cost, [0, 1])
        self.assertEqual(g.kind, ["input", "op"])
        self.assertEqual(g.workspace, [0, 0])
        self.assertEqual((g.name, g.cost_unit), ("n", "us"))
        self.assertEqual(load(G([N("y", 1)])).cost_unit, "unit")

    def test_only_inputs(self):
        # Nothing to compute: the no-remat schedule is empty; the inputs
        # are outputs (nobody uses them), so both stay: 10 + 20.
        g = load(G([N("a", 10, kind="input"), N("b", 20, kind="input")]))
        self.assertEqual(judge.no_remat_peak(g), 30)
        self.assertEqual(judge.min_peak_lower_bound(g), 0)


class GraphRules(unittest.TestCase):
    def bad(self, doc, *words):
        with self.assertRaises(judge.GraphError) as cm:
            load(doc)
        msg = str(cm.exception)
        self.assertTrue(msg.startswith("t.json: "), msg)
        for w in words:
            self.assertIn(w, msg)

    def test_top_level(self):
        self.bad([], "top level")
        self.bad(dict(KUMAR, format="remat-schedule"), "'format'")
        self.bad(dict(KUMAR, version=2), "'version'")
        self.bad(dict(KUMAR, version=True), "'version'")
        self.bad(dict(KUMAR, nodes={}), "'nodes'")
        self.bad(dict(KUMAR, name=3), "'name'")
        self.bad(dict(KUMAR, cost_unit=None), "'cost_unit'")

    def test_ids(self):
        self.bad(G([N("", 1)]), "'id'")
        self.bad(G([{"mem": 1}]), "'id'")
        self.bad(G([N("a", 1), N("a", 2)]), "node 'a'", "'id'", "unique")

    def test_references(self):
        self.bad(G([N("a", 1, ["nope"])]), "node 'a'", "'inputs'", "nope")
        self.bad(G([N("a", 1)], ["nope"]), "'outputs'", "nope")
        self.bad(G([N("a", 1, grad_of="nope")]), "node 'a'", "'grad_of'", "nope")

    def test_cycle_is_named(self):
        # p -> q -> r -> p, plus s hanging off it
        doc = G([N("s", 1, ["r"]), N("p", 1, ["r"]), N("q", 1, ["p"]), N("r", 1, ["q"])])
        self.bad(doc, "'inputs'", "cycle")
        try:
            load(doc)
        except judge.GraphError as e:
            cyc = str(e).split("cycle: ")[1].split(" -> ")
            self.assertEqual(cyc[0], cyc[-1])
            self.assertEqual(sorted(cyc[:-1]), ["p", "q", "r"])
        self.bad(G([N("a", 1, ["a"])]), "node 'a'", "cycle")

    def test_inputs_have_no_inputs(self):
        self.bad(G([N("x", 1, kind="input"), N("y", 1, ["x"], kind="input")]),
                 "node 'y'", "'inputs'")

    def test_numbers(self):
        self.bad(G([N("a", -1)]), "node 'a'", "'mem'")
        self.bad(G([N("a", 1.5)]), "'mem'")
        self.bad(G([N("a", "1")]), "'mem'")
        self.bad(G([N("a", True)]), "'mem'")
        self.bad(G([N("a", 2 ** 53 + 1)]), "'mem'")
        self.bad(G([{"id": "a"}]), "node 'a'", "'mem'")
        self.bad(G([N("a", 1, workspace=-3)]), "'workspace'")
        self.bad(G([N("a", 1, cost=-0.5)]), "'cost'")
        self.bad(G([N("a", 1, cost="1")]), "'cost'")
        self.assertEqual(load(G([N("a", 2 ** 53, workspace=2.0)])).mem, [2 ** 53])

    def test_kinds_and_flags(self):
        self.bad(G([N("a", 1, kind="weight")]), "node 'a'", "'kind'")
        self.bad(G([N("a", 1, recompute="no")]), "'recompute'")

    def test_unknown_fields_are_ignored(self):
        g = load(G([N("a", 1, colour="red")], extra={"x": 1}))
        self.assertEqual(g.ids, ["a"])

    def test_not_json_constants(self):
        with tempfile.NamedTemporaryFile("w", suffix=".json", delete=False) as f:
            f.write('{"format": "remat-graph", "version": 1, "nodes": '
                    '[{"id": "a", "mem": 1, "cost": NaN}]}')
        try:
            with self.assertRaises(judge.GraphError):
                judge.load_graph(f.name)
        finally:
            os.unlink(f.name)

    def test_duplicate_keys(self):
        # Python keeps the last of two equal keys; the judge refuses them,
        # in a graph and in a schedule step alike, known field or not.
        for text, loader, error in (
                ('{"format": "remat-graph", "version": 1, "nodes": '
                 '[{"id": "a", "mem": 1, "mem": 2}]}', judge.load_graph, judge.GraphError),
                ('{"format": "remat-graph", "version": 1, "nodes": '
                 '[{"id": "a", "mem": 1, "x": 1, "x": 1}]}', judge.load_graph,
                 judge.GraphError),
                ('{"format": "remat-schedule", "version": 1, "steps": '
                 '[{"op": "free", "node": "f1", "node": "x"}]}', judge.load_schedule,
                 judge.ScheduleError)):
            with tempfile.NamedTemporaryFile("w", suffix=".json", delete=False) as f:
                f.write(text)
            try:
                with self.assertRaisesRegex(error, "given twice"):
                    loader(f.name)
            finally:
                os.unlink(f.name)


class Replay(unittest.TestCase):
    def test_kumar_compute_only(self):
        r = judge.replay(load(KUMAR), C("A", "B", "C", "D", "E"))
        self.assertTrue(r["valid"])
        self.assertEqual((r["form"], r["peak_mem"], r["peak_step"], r["cost"], r["computes"],
                          r["recomputes"], r["overhead"]),
                         ("compute-only", 4, 3, 5, 5, 0, 0.0))

    def test_kumar_recompute_a(self):
        # A B C D A E, frees derived: A after B (its next event is a
        # compute), B and C after D, A and D after E.
        # A 1 | B 2, then A goes: {B} | C 2 | D 3, B C go: {D} | A 2 | E 3.
        # Peak 3 (first at D, step 3), cost 6, 1 recompute, overhead 6/5-1.
        r = judge.replay(load(KUMAR), C("A", "B", "C", "D", "A", "E"), budget=3)
        self.assertTrue(r["valid"])
        self.assertEqual((r["peak_mem"], r["peak_step"], r["cost"], r["computes"],
                          r["recomputes"]), (3, 3, 6, 6, 1))
        self.assertAlmostEqual(r["overhead"], 0.2, places=12)
        self.assertTrue(r["feasible"])          # 3 <= 3
        r = judge.replay(load(KUMAR), C("A", "B", "C", "D", "A", "E"), budget=2)
        self.assertTrue(r["valid"])
        self.assertFalse(r["feasible"])

    def test_same_order_with_explicit_frees(self):
        # Explicit frees the same as the derived ones give the same figures;
        # leaving A resident instead gives the no-remat peak 4 at D.
        g = load(KUMAR)
        steps = C("A", "B") + F("A") + C("C", "D") + F("B", "C") + C("A", "E") + F("A", "D")
        r = judge.replay(g, steps)
        self.assertEqual((r["form"], r["valid"], r["peak_mem"], r["cost"]),
                         ("explicit", True, 3, 6))
        r = judge.replay(g, C("A", "B", "C", "D") + F("B", "C") + C("E"))
        self.assertEqual((r["valid"], r["peak_mem"], r["cost"]), (True, 4, 5))

    def test_workspace(self):
        # compute a: 10 + 4 + 100 = 114; compute b: 10 + 4 + 6 = 20.
        g = load(WS)
        r = judge.replay(g, C("a", "b") + F("a", "x"))
        self.assertEqual((r["valid"], r["peak_mem"], r["peak_step"], r["cost"]),
                         (True, 114, 0, 5))
        self.assertFalse(judge.replay(g, C("a", "b"), budget=113)["feasible"])
        self.assertTrue(judge.replay(g, C("a", "b"), budget=114)["feasible"])

    def test_unused_input_dropped_only_in_compute_only_form(self):
        # x (1000 B) is read by nobody and is not an output; y (7 B) feeds z.
        # Compute-only: x is dropped before the first step: z runs with
        # y + z = 12.  Explicit: nothing drops x, z runs with 1000+7+5.
        g = load(G([N("x", 1000, kind="input"), N("y", 7, kind="input"), N("z", 5, ["y"])],
                   ["z"]))
        self.assertEqual(judge.replay(g, C("z"))["peak_mem"], 12)
        self.assertEqual(judge.replay(g, C("z") + F("y"))["peak_mem"], 1012)
        self.assertEqual(judge.no_remat_peak(g), 12)

    def test_value_nobody_reads_is_freed_at_once(self):
        # d (500 B, dead: no output needs it) reads a; only b is an output.
        # a b d, compute-only: a 10 | b 10+20 = 30 (a stays: d reads it
        # later) | d 30+500 = 530, then d (read by nobody) and a go.
        # a d b: a 10 | d 10+500 = 510, d goes at once, a stays for b |
        # b 10+20 = 30.  Peak 510.
        g = load(G([N("a", 10), N("b", 20, ["a"]), N("d", 500, ["a"])], ["b"]))
        self.assertEqual(judge.replay(g, C("a", "b", "d"))["peak_mem"], 530)
        self.assertEqual(judge.replay(g, C("a", "d", "b"))["peak_mem"], 510)
        # and a dead node need not be computed at all: a b -> 30
        r = judge.replay(g, C("a", "b"))
        self.assertEqual((r["valid"], r["peak_mem"], r["cost"], r["overhead"]),
                         (True, 30, 2, 2 / 3 - 1))

    def test_outputs_are_never_freed_by_the_derived_frees(self):
        # o is an output read later by p: after p, o stays; p is an output.
        g = load(G([N("o", 3), N("p", 4, ["o"])], ["o", "p"]))
        r = judge.replay(g, C("o", "p"))
        self.assertEqual((r["valid"], r["peak_mem"]), (True, 7))

    def test_no_compute_steps(self):
        # Inputs a (5, an output) and b (9, not an output, unused).
        # Empty schedule: compute-only form, b dropped before the start: 5.
        # Frees only: explicit form; memory is measured while computes run,
        # and with none, at the end: 5, what the empty schedule scores (the
        # same plan with its free written out, as planners write it).
        g = load(G([N("a", 5, kind="input"), N("b", 9, kind="input")], ["a"]))
        r = judge.replay(g, [])
        self.assertEqual((r["valid"], r["form"], r["peak_mem"], r["cost"], r["overhead"]),
                         (True, "compute-only", 5, 0, 0.0))
        r = judge.replay(g, F("b"))
        self.assertEqual((r["valid"], r["form"], r["peak_mem"]), (True, "explicit", 5))
        self.assertFalse(judge.replay(g, F("a"))["valid"])   # the output is gone

    def test_zero_baseline(self):
        g = load(G([N("a", 1, cost=0), N("b", 1, ["a"], cost=0)]))
        r = judge.replay(g, C("a", "b"))
        self.assertEqual((r["cost"], r["baseline_cost"], r["overhead"]), (0, 0, 0.0))

    def test_recompute_false_once_is_fine(self):
        g = load(G([N("x", 2, kind="input"), N("r", 3, ["x"], recompute=False),
                    N("s", 4, ["r"])]))
        self.assertTrue(judge.replay(g, C("r", "s"))["valid"])


class InvalidSchedules(unittest.TestCase):
    """One case per rule of FORMATS.md section 2."""

    def invalid(self, doc, steps, step, node, *words):
        r = judge.replay(load(doc), steps)
        self.assertFalse(r["valid"])
        self.assertFalse(r["feasible"])
        self.assertEqual((r["error_step"], r["error_node"]), (step, node), r["error"])
        for w in words:
            self.assertIn(w, r["error"])
        for k in ("peak_mem", "cost", "computes", "recomputes", "overhead"):
            self.assertIsNone(r[k])
        return r

    def test_compute_an_input(self):
        self.invalid(WS, C("x"), 0, "x", "input")

    def test_compute_a_resident_value(self):
        # explicit form (a free is present), so A is still resident at step 1
        self.invalid(KUMAR, C("A", "A") + F("A"), 1, "A", "already resident")

    def test_compute_with_an_input_missing(self):
        self.invalid(KUMAR, C("B"), 0, "B", "'A' is not resident")
        # freed too early: B's input A was freed by hand
        self.invalid(KUMAR, C("A") + F("A") + C("B"), 2, "B", "'A'")

    def test_compute_only_form_frees_what_a_later_step_needs_again(self):
        # A B D: the derived frees drop A after B; D reads B (resident) and
        # C, which was never computed: step 2.
        self.invalid(KUMAR, C("A", "B", "D"), 2, "D", "'C' is not resident")

    def test_recompute_false(self):
        # r computed, freed at once (next event is its compute), computed again
        doc = G([N("x", 2, kind="input"), N("r", 3, ["x"], recompute=False), N("s", 4, ["r"])])
        self.invalid(doc, C("r", "r", "s"), 1, "r", "recompute")

    def test_free_a_value_not_resident(self):
        self.invalid(KUMAR, F("B"), 0, "B", "not resident")
        self.invalid(KUMAR, C("A") + F("A", "A"), 2, "A", "not resident")

    def test_output_not_resident_at_the_end(self):
        self.invalid(KUMAR, C("A", "B", "C", "D", "E") + F("E"), 6, "E", "end", "output")
        self.invalid(KUMAR, C("A", "B"), 2, "E", "end")

    def test_malformed_steps(self):
        self.invalid(KUMAR, ["A"], 0, None, "object")
        self.invalid(KUMAR, [{"op": "drop", "node": "A"}], 0, None, "'op'")
        self.invalid(KUMAR, [{"op": "compute"}], 0, None, "'node'")
        self.invalid(KUMAR, [{"op": "compute", "node": 1}], 0, None, "'node'")
        self.invalid(KUMAR, C("A", "Z"), 1, "Z", "unknown node")

    def test_first_error_wins(self):
        self.invalid(KUMAR, C("A") + F("C") + F("B"), 1, "C")

    def test_malformed_step_anywhere_makes_the_schedule_unreadable(self):
        # checked before the replay (the form depends on every step), so a
        # malformed step 2 is reported although step 1 breaks a rule too
        self.invalid(KUMAR, C("A") + F("C") + C("Q"), 2, "Q", "unknown node")

    def test_schedule_files(self):
        for doc in ([], {"format": "remat-graph", "version": 1, "steps": []},
                    {"format": "remat-schedule", "version": 2, "steps": []},
                    {"format": "remat-schedule", "version": 1}):
            with self.assertRaises(judge.ScheduleError):
                judge.schedule_from_json(doc, "s.json")
        self.assertEqual(judge.schedule_from_json(
            {"format": "remat-schedule", "version": 1, "steps": C("A")}), C("A"))


class Budgets(unittest.TestCase):
    def test_values(self):
        p = judge.parse_budget
        self.assertEqual(p("1073741824"), 1073741824)
        self.assertEqual(p("1.5GiB"), 1610612736)          # 3 * 2^29
        self.assertEqual(p("800MB"), 800000000)
        self.assertEqual(p("800 mb"), 800000000)
        self.assertEqual(p(" 12kB "), 12000)
        self.assertEqual(p("2TiB"), 2 ** 41)
        self.assertEqual(p("1tb"), 10 ** 12)
        self.assertEqual(p(".5KiB"), 512)
        self.assertEqual(p("7."), 7)
        self.assertEqual(p("10.9"), 10)                     # rounds down
        self.assertEqual(p("0.001KB"), 1)
        self.assertEqual(p("0.0009KB"), 0)
        self.assertEqual(p("3B"), 3)

    def test_percentages(self):
        p = judge.parse_budget
        self.assertEqual(p("60%", 7340032), 4404019)       # 4404019.2
        self.assertEqual(p("100%", 7340032), 7340032)
        self.assertEqual(p("33.3%", 1000), 333)
        self.assertEqual(p("0.1%", 999), 0)                 # 0.999
        self.assertEqual(p("150%", 4), 6)
        # exact: 0.7 * 2^53 + ... no float drift
        self.assertEqual(p("70%", 2 ** 53 + 10), (7 * (2 ** 53 + 10)) // 10)
        with self.assertRaises(judge.BudgetError):
            p("60%")

    def test_errors(self):
        for t in ("", "abc", "-5", "1e3", "5 MiBs", "%", ".", "1.2.3", "4 GiB 2", "0x10",
                  "99999999999999999999", "\u0663", "5\u00a0MB"):
            with self.assertRaises(judge.BudgetError, msg=t):
                judge.parse_budget(t, 100)


class Summary(unittest.TestCase):
    def test_mismatches(self):
        r = judge.replay(load(KUMAR), C("A", "B", "C", "D", "A", "E"), budget=3)
        good = {"feasible": True, "peak_mem": 3, "cost": 6, "baseline_cost": 5,
                "overhead": 0.2, "computes": 6, "recomputes": 1}
        self.assertEqual(judge.compare_summary(good, r, 3), [])
        self.assertEqual(judge.compare_summary(dict(good, overhead=0.2000000001), r, 3), [])
        bad = judge.compare_summary(dict(good, peak_mem=4, cost=5.5, feasible=False), r, 3)
        self.assertEqual(len(bad), 3, bad)
        # the file's feasible refers to its own budget: not compared at another
        self.assertEqual(len(judge.compare_summary(dict(good, feasible=False), r, 4)), 0)


class DocumentedExamples(unittest.TestCase):
    """The worked examples of docs/FORMATS.md say what the judge says."""

    def blocks(self):
        with open(os.path.join(HERE, "..", "..", "docs", "FORMATS.md")) as f:
            text = f.read()
        return [json.loads(b.split("```", 1)[0]) for b in text.split("```json\n")[1:]]

    def test_graph_and_schedule(self):
        docs = self.blocks()
        graph = [d for d in docs if d.get("format") == "remat-graph"][0]
        sched = [d for d in docs if d.get("format") == "remat-schedule"][0]
        g = load(graph)
        f = judge.graph_figures(g)
        self.assertEqual((f["no_remat_peak"], f["min_peak_lower_bound"]), (46080, 46080))
        k = load(KUMAR)
        r = judge.replay(k, judge.schedule_from_json(sched), sched["budget"])
        self.assertEqual(judge.compare_summary(sched["summary"], r, sched["budget"]), [])
        self.assertTrue(r["feasible"])
        # "the five computes A B C D A E replay exactly as the explicit schedule"
        r2 = judge.replay(k, C("A", "B", "C", "D", "A", "E"), 3)
        self.assertEqual({x: r2[x] for x in ("peak_mem", "cost", "computes", "recomputes")},
                         {x: r[x] for x in ("peak_mem", "cost", "computes", "recomputes")})
        out = [d for d in docs if "valid" in d][0]
        r3 = judge.replay(k, judge.schedule_from_json(sched), out["budget"])
        for x in ("valid", "feasible", "peak_mem", "cost", "baseline_cost", "computes",
                  "recomputes", "budget"):
            self.assertEqual(out[x], r3[x], x)
        # section 3: 60% of train-chain4's peak
        self.assertEqual(judge.parse_budget("60%", 7340032), 4404019)


class CommandLine(unittest.TestCase):
    def run_judge(self, graph, sched=None, *extra):
        tmp = tempfile.mkdtemp(prefix="judge-test-")
        gp = os.path.join(tmp, "g.json")
        with open(gp, "w") as f:
            json.dump(graph, f)
        args = [sys.executable, os.path.join(HERE, "judge.py"), gp]
        if sched is not None:
            sp = os.path.join(tmp, "s.json")
            with open(sp, "w") as f:
                json.dump(sched, f)
            args.append(sp)
        p = subprocess.run(args + list(extra) + ["--json"], capture_output=True, text=True)
        for name in os.listdir(tmp):
            os.unlink(os.path.join(tmp, name))
        os.rmdir(tmp)
        return p.returncode, (json.loads(p.stdout) if p.stdout.strip() else None), p.stderr

    def sched(self, steps, **kw):
        d = {"format": "remat-schedule", "version": 1, "steps": steps}
        d.update(kw)
        return d

    def test_exit_codes_and_keys(self):
        s = self.sched(C("A", "B", "C", "D", "A", "E"))
        rc, out, _ = self.run_judge(KUMAR, s)
        self.assertEqual(rc, 0)
        self.assertEqual((out["valid"], out["feasible"], out["peak_mem"], out["cost"],
                          out["baseline_cost"], out["computes"], out["recomputes"],
                          out["budget"], out["error"]), (True, True, 3, 6, 5, 6, 1, None, None))
        rc, out, _ = self.run_judge(KUMAR, s, "--budget", "75%")    # 75% of 4 = 3
        self.assertEqual((rc, out["budget"], out["feasible"]), (0, 3, True))
        rc, out, _ = self.run_judge(KUMAR, s, "--budget", "2")
        self.assertEqual((rc, out["valid"], out["feasible"]), (3, True, False))
        rc, out, err = self.run_judge(KUMAR, self.sched(C("B")))
        self.assertEqual((rc, out["valid"], out["error_step"]), (1, False, 0))
        self.assertIn("'A' is not resident", err)
        rc, out, _ = self.run_judge(KUMAR, s, "--budget", "lots")
        self.assertEqual((rc, out), (2, None))
        rc, out, _ = self.run_judge(dict(KUMAR, version=3), s)
        self.assertEqual((rc, out), (1, None))
        rc, out, _ = self.run_judge(KUMAR, {"steps": []})
        self.assertEqual((rc, out), (1, None))

    def test_summary_is_checked(self):
        s = self.sched(C("A", "B", "C", "D", "E"),
                       summary={"peak_mem": 3, "cost": 5, "computes": 5, "recomputes": 0})
        rc, out, _ = self.run_judge(KUMAR, s)
        self.assertEqual(rc, 0)
        self.assertEqual(out["summary_mismatches"], ["peak_mem: file 3, judge 4"])

    def test_graph_only(self):
        rc, out, _ = self.run_judge(KUMAR, None, "--budget", "50%")
        self.assertEqual(rc, 0)
        self.assertEqual((out["no_remat_peak"], out["min_peak_lower_bound"], out["budget"]),
                         (4, 3, 2))


if __name__ == "__main__":
    unittest.main(verbosity=1)
