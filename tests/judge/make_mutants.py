#!/usr/bin/python3
"""make_mutants.py - write the corpus of schedule mutants that
tests/judge/test_mutants.py replays through `remat simulate` and the
independent judge (issue 18).  Run once; the output is committed:

    /usr/bin/python3 tests/judge/make_mutants.py [--remat build/remat]

It rewrites tests/judge/mutants/ (the schedules, a small graph of its own
and manifest.json).  Base schedules of small graphs (examples/ and
mutants/graphs/) are the judge's own topological order, in the
compute-only and the explicit form, and schedules `remat plan` wrote (with
recomputations); each is then mutated: a compute or a free dropped, steps
swapped, a compute or a free repeated, a free moved before a use, the end
cut off, an output freed, an input computed, a "recompute": false node
recomputed, frees stripped, a recomputation added (at most PER_BASE of
these per base, a seeded choice); and at the level of
the document: a key given twice, `version` missing or 2, a wrong
`format`, `steps` not an array, a step that is not an object, an unknown
op or node, a node id with a NUL, a wrong `summary`, JSON syntax errors.

Each manifest entry records what the judge said when the corpus was made
(`expect`): valid or not, and the figures or the first bad step.  The
random choices are seeded: the same remat gives the same corpus.
"""
import argparse
import json
import os
import random
import shutil
import subprocess
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(HERE))
sys.path.insert(0, HERE)
import judge  # noqa: E402

OUT = os.path.join(HERE, "mutants")

# A graph of its own: an input, a "recompute": false node, a workspace,
# two outputs (one of them read by a later node).
NORECOMPUTE = {
    "format": "remat-graph", "version": 1, "name": "norecompute", "cost_unit": "unit",
    "nodes": [
        {"id": "x", "kind": "input", "mem": 8},
        {"id": "drop", "mem": 8, "cost": 3, "inputs": ["x"], "recompute": False},
        {"id": "a", "mem": 4, "cost": 2, "inputs": ["drop"]},
        {"id": "b", "mem": 2, "cost": 1, "inputs": ["a", "x"], "workspace": 16},
        {"id": "c", "mem": 4, "cost": 5, "inputs": ["b", "drop"]},
        {"id": "d", "mem": 1, "cost": 1, "inputs": ["c", "a"]}
    ],
    "outputs": ["d", "b"]
}


def explicit(g, order):
    """The compute-only order with the judge's derived frees written out."""
    before, after = judge._derived_frees(g, order)
    steps = [{"op": "free", "node": g.ids[u]} for u in before]
    for i, v in enumerate(order):
        steps.append({"op": "compute", "node": g.ids[v]})
        steps.extend({"op": "free", "node": g.ids[u]} for u in after[i])
    return steps


def doc(steps, graph_name, budget=None):
    d = {"format": "remat-schedule", "version": 1, "graph": graph_name,
         "planner": "mutant"}
    if budget is not None:
        d["budget"] = budget
    d["steps"] = steps
    return d


def text_of(d):
    """One step per line, as remat writes schedules."""
    head = {k: v for k, v in d.items() if k != "steps"}
    lines = json.dumps(head)[:-1] + ', "steps": [\n'
    lines += ",\n".join("  " + json.dumps(s) for s in d["steps"])
    return lines + "\n]}\n"


# ---- mutations of the steps: each returns (name, steps) or None ----

def m_drop(rnd, g, steps, op):
    idx = [i for i, s in enumerate(steps) if s["op"] == op]
    if not idx:
        return None
    i = rnd.choice(idx)
    return "drop-%s-%d" % (op, i), steps[:i] + steps[i + 1:]


def m_swap_adjacent(rnd, g, steps):
    if len(steps) < 2:
        return None
    i = rnd.randrange(len(steps) - 1)
    s = list(steps)
    s[i], s[i + 1] = s[i + 1], s[i]
    return "swap-adjacent-%d" % i, s


def m_swap_any(rnd, g, steps):
    if len(steps) < 3:
        return None
    i, j = sorted(rnd.sample(range(len(steps)), 2))
    s = list(steps)
    s[i], s[j] = s[j], s[i]
    return "swap-%d-%d" % (i, j), s


def m_repeat(rnd, g, steps, op):
    idx = [i for i, s in enumerate(steps) if s["op"] == op]
    if not idx:
        return None
    i = rnd.choice(idx)
    return "repeat-%s-%d" % (op, i), steps[:i + 1] + [dict(steps[i])] + steps[i + 1:]


def m_free_early(rnd, g, steps):
    """Move a free to just before the last compute that reads its node."""
    cands = []
    for i, s in enumerate(steps):
        if s["op"] != "free":
            continue
        v = g.index[s["node"]]
        for j in range(i - 1, -1, -1):
            t = steps[j]
            if t["op"] == "compute" and v in g.inputs[g.index[t["node"]]]:
                cands.append((i, j))
                break
    if not cands:
        return None
    i, j = rnd.choice(cands)
    s = list(steps)
    f = s.pop(i)
    s.insert(j, f)
    return "free-before-use-%d-to-%d" % (i, j), s


def m_truncate(rnd, g, steps):
    if len(steps) < 2:
        return None
    k = rnd.randrange(1, min(4, len(steps)))
    return "truncate-last-%d" % k, steps[:-k]


def m_free_output(rnd, g, steps):
    o = g.ids[rnd.choice(g.outputs)]
    return "free-output-%s" % o, steps + [{"op": "free", "node": o}]


def m_compute_input(rnd, g, steps):
    ins = [v for v in range(g.n) if g.kind[v] == "input"]
    if not ins:
        return None
    v = g.ids[rnd.choice(ins)]
    return "compute-input-%s" % v, [{"op": "free", "node": v},
                                    {"op": "compute", "node": v}] + steps


def m_strip_frees(rnd, g, steps):
    s = [t for t in steps if t["op"] == "compute"]
    if len(s) == len(steps):
        return None
    return "strip-frees", s


def m_recompute(rnd, g, steps):
    """Free a value right after it is computed and compute it again just
    before its next use (valid when its inputs are still resident there;
    invalid for a "recompute": false node)."""
    cands = []
    for i, s in enumerate(steps):
        if s["op"] != "compute":
            continue
        v = g.index[s["node"]]
        for j in range(i + 1, len(steps)):
            t = steps[j]
            if t["op"] == "compute" and v in g.inputs[g.index[t["node"]]]:
                cands.append((i, j))
                break
    if not cands:
        return None
    i, j = rnd.choice(cands)
    node = steps[i]["node"]
    s = steps[:i + 1] + [{"op": "free", "node": node}] + steps[i + 1:j] + \
        [{"op": "compute", "node": node}] + steps[j:]
    return "recompute-%s" % node, s


def m_recompute_forbidden(rnd, g, steps):
    """Free a "recompute": false node right after computing it and compute
    it again at once (its inputs are still resident: the rule alone is
    broken)."""
    idx = [i for i, t in enumerate(steps)
           if t["op"] == "compute" and not g.recompute[g.index[t["node"]]]]
    if not idx:
        return None
    i = idx[0]
    node = steps[i]["node"]
    return "recompute-forbidden-%s" % node, steps[:i + 1] + [
        {"op": "free", "node": node}, {"op": "compute", "node": node}] + steps[i + 1:]


STEP_MUTATIONS = [
    lambda r, g, s: m_drop(r, g, s, "compute"),
    lambda r, g, s: m_drop(r, g, s, "free"),
    m_swap_adjacent,
    m_swap_any,
    lambda r, g, s: m_repeat(r, g, s, "compute"),
    lambda r, g, s: m_repeat(r, g, s, "free"),
    m_free_early,
    m_truncate,
    m_free_output,
    m_compute_input,
    m_strip_frees,
    m_recompute,
    m_recompute_forbidden,
]
# At most this many step mutations per base (a seeded choice), so that the
# corpus stays small: each kind still appears on several bases.
PER_BASE = 7


# ---- mutations of the document text: (name, text) ----

def text_mutations(g, steps, name):
    d = doc(steps, name)
    base = text_of(d)
    first = json.dumps(steps[0])
    node0 = steps[0]["node"]
    other = g.ids[-1]
    out = [
        ("dup-key-node", base.replace(first, '{"op": "%s", "node": "%s", "node": "%s"}'
                                      % (steps[0]["op"], node0, other), 1)),
        ("dup-key-op", base.replace(first, '{"op": "free", "op": "%s", "node": "%s"}'
                                    % (steps[0]["op"], node0), 1)),
        ("dup-key-version", base.replace('"version": 1', '"version": 1, "version": 1', 1)),
        ("dup-key-unknown", base.replace(first, first[:-1] + ', "note": 1, "note": 2}', 1)),
        ("missing-version", base.replace('"version": 1, ', "", 1)),
        ("version-2", base.replace('"version": 1', '"version": 2', 1)),
        ("format-graph", base.replace('"remat-schedule"', '"remat-graph"', 1)),
        ("steps-object", text_of(doc([], name)).replace('"steps": [\n\n]', '"steps": {}', 1)),
        ("step-string", base.replace(first, '"compute %s"' % node0, 1)),
        ("op-evict", base.replace(first, '{"op": "evict", "node": "%s"}' % node0, 1)),
        ("node-unknown", base.replace(first, '{"op": "%s", "node": "%s_"}'
                                      % (steps[0]["op"], node0), 1)),
        ("node-number", base.replace(first, '{"op": "%s", "node": 0}' % steps[0]["op"], 1)),
        ("node-missing", base.replace(first, '{"op": "%s"}' % steps[0]["op"], 1)),
        ("node-nul", base.replace(first, '{"op": "%s", "node": "%s\\u0000zzz"}'
                                  % (steps[0]["op"], node0), 1)),
        ("unknown-field", base.replace(first, first[:-1] + ', "note": "ignored"}', 1)),
        ("summary-wrong", base.replace('"planner": "mutant"', '"planner": "mutant", '
                                       '"summary": {"feasible": true, "peak_mem": 1, '
                                       '"cost": 0, "computes": 0}', 1)),
        ("trailing-comma", base.replace("\n]}", ",\n]}", 1)),
        ("leading-zero-budget", base.replace('"planner": "mutant"',
                                             '"planner": "mutant", "budget": 01', 1)),
        ("truncated-file", base[:len(base) // 2]),
    ]
    return out


def judge_verdict(g, path, budget):
    """What the judge says of the file: the expectation recorded."""
    try:
        steps, _ = judge.load_schedule(path)
    except judge.ScheduleError as e:
        return {"valid": False, "error_step": None, "why": str(e).split(": ", 1)[-1]}
    r = judge.replay(g, steps, budget)
    if not r["valid"]:
        return {"valid": False, "error_step": r["error_step"], "why": r["error"]}
    return {"valid": True, "feasible": r["feasible"], "peak_mem": r["peak_mem"],
            "cost": r["cost"], "computes": r["computes"], "recomputes": r["recomputes"]}


def planned(remat, graph, budget):
    """The steps of the schedule `remat plan` writes at budget."""
    tmp = os.path.join(OUT, ".plan.json")
    subprocess.run([remat, "plan", graph, "--budget", str(budget), "-o", tmp, "-q",
                    "--time-limit", "5"], check=True, capture_output=True)
    with open(tmp) as f:
        steps = json.load(f)["steps"]
    os.unlink(tmp)
    return steps


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--remat", default=os.path.join(ROOT, "build", "remat"))
    ap.add_argument("--seed", type=int, default=18)
    a = ap.parse_args()
    rnd = random.Random(a.seed)
    if os.path.isdir(OUT):
        shutil.rmtree(OUT)
    os.makedirs(os.path.join(OUT, "graphs"))
    with open(os.path.join(OUT, "graphs", "norecompute.json"), "w") as f:
        json.dump(NORECOMPUTE, f, indent=1)
        f.write("\n")

    # (graph path relative to the root, base name, steps, budget or None)
    bases = []
    for rel in ("examples/kumar-fig1.json", "examples/train-chain4.json",
                "examples/workspace.json", "tests/judge/mutants/graphs/norecompute.json"):
        g = judge.load_graph(os.path.join(ROOT, rel))
        stem = os.path.basename(rel)[:-5]
        order = [v for v in g.topo if g.kind[v] != "input"]
        bases.append((rel, stem + "-topo", explicit(g, order), None))
        if stem in ("kumar-fig1", "norecompute"):
            bases.append((rel, stem + "-computes", [{"op": "compute", "node": g.ids[v]}
                                                     for v in order], None))
    bases.append(("examples/kumar-fig1.json", "kumar-fig1-plan3",
                  planned(a.remat, os.path.join(ROOT, "examples/kumar-fig1.json"), 3), 3))
    bases.append(("examples/train-chain4.json", "train-chain4-plan5MiB",
                  planned(a.remat, os.path.join(ROOT, "examples/train-chain4.json"), "5MiB"),
                  5 * 1024 * 1024))

    manifest = []

    def emit(rel, g, fname, text, budget, mutation):
        path = os.path.join(OUT, fname)
        with open(path, "w", encoding="utf-8", newline="") as f:
            f.write(text)
        manifest.append({"schedule": fname, "graph": rel, "budget": budget,
                         "mutation": mutation, "expect": judge_verdict(g, path, budget)})

    for rel, bname, steps, budget in bases:
        g = judge.load_graph(os.path.join(ROOT, rel))
        emit(rel, g, bname + ".json", text_of(doc(steps, g.name, budget)), budget,
             "none (the base schedule)")
        # Every step mutation that applies, one each, in a seeded order.
        made, results = set(), []
        for mut in STEP_MUTATIONS:
            r = mut(rnd, g, steps)
            if r is None or r[0] in made:
                continue
            made.add(r[0])
            results.append(r)
        keep = sorted(rnd.sample(range(len(results)), min(PER_BASE, len(results))))
        # the rule only this graph can break is always kept
        keep += [k for k, r in enumerate(results)
                 if r[0].startswith("recompute-forbidden") and k not in keep]
        for r in (results[k] for k in keep):
            emit(rel, g, "%s--%s.json" % (bname, r[0]), text_of(doc(r[1], g.name, budget)),
                 budget, r[0])
        # A tight budget on the base: valid, over it (simulate exits 3).
        if bname.endswith("-topo"):
            peak = judge.replay(g, steps)["peak_mem"]
            emit(rel, g, bname + "--budget-below-peak.json",
                 text_of(doc(steps, g.name, peak - 1)), peak - 1, "budget one byte below the peak")
    # Document-level mutations: all of them on one base, the reader's
    # cases of issue 18 on a second.
    for (rel, bname, steps, budget), only in ((bases[0], None),
                                              (bases[-1], ("dup-key-node", "dup-key-version",
                                                           "missing-version", "node-nul"))):
        g = judge.load_graph(os.path.join(ROOT, rel))
        for name, text in text_mutations(g, steps, g.name):
            if only is None or name in only:
                emit(rel, g, "%s--%s.json" % (bname, name), text, None, name)

    with open(os.path.join(OUT, "manifest.json"), "w") as f:
        json.dump(manifest, f, indent=1)
        f.write("\n")
    valid = sum(m["expect"]["valid"] for m in manifest)
    print("%d mutants (%d valid, %d invalid) in %s" % (len(manifest), valid,
                                                        len(manifest) - valid, OUT))


if __name__ == "__main__":
    main()
