#!/usr/bin/python3
"""Stress run: every planner x many graphs x many budgets, each schedule
re-judged by the independent judge in tests/judge/judge.py.

    tests/stress/stress.py [--quick | --full] [--remat build/remat] [--jobs 2]
                           [--time-limit T] [--planners a,b] [--only SUBSTR]
                           [--findings FILE] [--keep DIR] [--verbose]

--quick (the ctest case stress/quick): a fixed, small set - three
examples, eight hand-made edge-case graphs, a random layered DAG and a
trained U-Net from `remat gen`, the training graph of kumar-fig1 and one
seeded random graph, all small enough for the exact planners to finish
in well under a second - x every planner x 4 budgets (100%,
halfway to the lower bound, the lower bound and one byte below it), about
570 runs: a few seconds on 2 cores, about 30 s under AddressSanitizer on
a loaded machine.  No time limit is passed and no finding depends on timing (a
run still going after 300 s is reported as a hang).
Default (the sweep, about 6,900 runs, 5 minutes on a shared 2-core machine):
the examples, two zoo graphs, every edge-case graph, small generated
graphs and 40 random ones at 8 budgets, with --time-limit 5.
--full: also graphs/*.json, the larger generated graphs and 400 random
ones, at every budget (100% .. 10% of the no-remat peak, halfway between
it and the lower bound from `remat info --json`, the lower bound + 1, the
lower bound and the lower bound - 1), --time-limit 10.  When the field's
published graphs are next to the repository (../shared/benchmarks), --full
also plans on them and checks that `remat convert` turns each published
networkx file into its published remat-graph conversion, node for node.

Each run is `remat plan GRAPH --budget B --planner P --json -o OUT
[--time-limit T]`.  A finding is any of:
  crash      killed by a signal, or a hang past T + 30 s
  exit       an exit code other than 0 or 3 (the graphs are all valid)
  json       stdout is not one JSON object
  invalid    exit 0 but the judge finds the schedule invalid
  over       exit 0 but the judge's peak is above the budget
  figures    --json figures or the schedule's summary disagree with the judge
  nofile     exit 0 but no schedule was written
  exit3-fit  exit 3 although the budget covers the no-remat peak
  exit3-file exit 3 but a schedule file was written
  slow       the run took more than T + 2 s (not with --quick)
  cliff      with --time-limit 0 (no limit): the run took more than --cliff s
             (not with --quick)
  nondet     the same command twice gave different schedule bytes (a sample
             of the runs; only when both runs finished well inside T; with
             --quick every planner but auto, which keeps a clock of its own)
  info       `remat info --json` disagrees with the judge on the graph's
             figures (no-remat peak, lower bound, nodes, edges, ...)
  judge      the judge cannot read a graph that remat accepted
  nx         (--full) a published networkx file converts differently from
             its published conversion

The judge (tests/judge/judge.py) implements docs/FORMATS.md and shares no
code with remat.  It is part of the repository: if it cannot be loaded the
script stops with an error; nothing falls back to `remat simulate`.
Prints one line per finding and ends with 'N passed, N failed'; exits 1
when anything was found.  Standard library only.
"""
import argparse
import concurrent.futures
import hashlib
import json
import os
import random
import shutil
import signal
import subprocess
import sys
import tempfile
import threading
import time

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(HERE))
SHARED = os.path.join(os.path.dirname(ROOT), "shared")

sys.path.insert(0, os.path.join(ROOT, "tests", "judge"))
import judge  # noqa: E402  (in the repository: no fallback)

QUICK_BUDGETS = ["100%", "mid", "lb", "lb-1"]
SWEEP_BUDGETS = ["100%", "80%", "60%", "40%", "20%", "mid", "lb", "lb-1"]
FULL_BUDGETS = ["100%", "95%", "90%", "80%", "70%", "60%", "50%", "40%", "30%",
                "20%", "10%", "mid", "lb+1", "lb", "lb-1"]


# ---------------------------------------------------------------- edge cases

def node(nid, mem, inputs=(), kind=None, **kw):
    n = {"id": nid, "mem": mem}
    if kind:
        n["kind"] = kind
    if inputs:
        n["inputs"] = list(inputs)
    n.update(kw)
    return n


def graph(name, nodes, outputs=None):
    g = {"format": "remat-graph", "version": 1, "name": name, "nodes": nodes}
    if outputs is not None:
        g["outputs"] = outputs
    return g


def train_chain(name, n, mem=100, **per_node):
    """A small training chain; per_node maps a node id to extra fields."""
    nodes = [node("x", mem, kind="input")]
    prev = "x"
    for i in range(n):
        nodes.append(node("f%d" % i, mem, [prev], kind="forward", cost=1 + i % 3))
        prev = "f%d" % i
    nodes.append(node("loss", 4, [prev], kind="loss", cost=1))
    grad = "loss"
    for i in range(n - 1, -1, -1):
        ins = [grad, "f%d" % i, "f%d" % (i - 1) if i > 0 else "x"]
        nodes.append(node("b%d" % i, mem, ins, kind="backward", cost=2, grad_of="f%d" % i))
        grad = "b%d" % i
    for nd in nodes:
        nd.update(per_node.get(nd["id"], {}))
    return graph(name, nodes, [grad])


def edge_graphs():
    """Hand-made corner cases, each valid per FORMATS.md section 1."""
    G = []
    G.append(graph("only-inputs", [node("a", 10, kind="input"), node("b", 20, kind="input")]))
    G.append(graph("one-input-output", [node("a", 10, kind="input")], ["a"]))
    G.append(graph("inputs-one-unused", [node("a", 10, kind="input"),
                                         node("b", 4000, kind="input")], ["a"]))
    G.append(graph("nothing-needed", [node("a", 10, kind="input"), node("b", 4000, kind="input"),
                                      node("c", 30, ["b"]), node("d", 5, ["c"])], ["a"]))
    G.append(graph("single-node", [node("a", 10)]))
    G.append(graph("single-node-zero", [node("a", 0, cost=0)]))
    G.append(graph("input-and-one", [node("x", 5, kind="input"), node("y", 7, ["x"])]))
    G.append(graph("input-unused", [node("x", 50, kind="input"), node("y", 7)]))
    G.append(graph("input-is-output", [node("x", 5, kind="input"), node("y", 7, ["x"])],
                   ["x", "y"]))
    G.append(graph("multi-output", [
        node("x", 8, kind="input"), node("a", 10, ["x"]), node("b", 20, ["a"]),
        node("c", 30, ["a"]), node("d", 5, ["b", "c"])], ["b", "c", "d"]))
    G.append(graph("output-used-inside", [
        node("x", 8, kind="input"), node("a", 10, ["x"]), node("b", 20, ["a"]),
        node("c", 30, ["b"]), node("d", 5, ["c", "a"])], ["a", "d"]))
    G.append(graph("duplicate-inputs", [
        node("x", 8, kind="input"), node("a", 10, ["x", "x"]), node("b", 20, ["a", "a", "x"]),
        node("c", 5, ["b", "a", "b"])]))
    G.append(graph("dead-nodes", [
        node("x", 8, kind="input"), node("a", 10, ["x"]), node("dead1", 1000, ["a"]),
        node("b", 20, ["a"]), node("dead2", 500, ["dead1", "b"]), node("c", 5, ["b"])], ["c"]))
    G.append(graph("dead-input", [
        node("x", 8, kind="input"), node("unused", 4000, kind="input"),
        node("a", 10, ["x"]), node("b", 20, ["a"])], ["b"]))
    G.append(graph("disconnected", [
        node("x", 8, kind="input"), node("a", 10, ["x"]), node("b", 20, ["a"]), node("c", 5, ["b"]),
        node("y", 9, kind="input"), node("p", 30, ["y"]), node("q", 15, ["p"]),
        node("lone", 3)]))
    G.append(graph("zero-sizes", [
        node("x", 0, kind="input"), node("a", 0, ["x"], cost=0), node("b", 10, ["a"]),
        node("c", 0, ["b"], cost=0), node("d", 0, ["c", "a"])]))
    G.append(graph("zero-cost-all", [
        node("x", 4, kind="input"), node("a", 10, ["x"], cost=0), node("b", 10, ["a"], cost=0),
        node("c", 10, ["b"], cost=0), node("d", 10, ["c", "a"], cost=0)]))
    G.append(graph("huge-workspace", [
        node("x", 8, kind="input"), node("a", 10, ["x"]), node("b", 10, ["a"], workspace=1 << 40),
        node("c", 10, ["b"]), node("d", 10, ["c", "a"])]))
    G.append(graph("huge-mem", [
        node("x", 1 << 50, kind="input"), node("a", 1 << 52, ["x"]), node("b", 1 << 53, ["a"]),
        node("c", 1 << 52, ["b", "x"]), node("d", 1 << 50, ["c", "a"])]))
    G.append(train_chain("train-chain8", 8))
    G.append(train_chain("train-norecompute", 8, f2={"recompute": False},
                         f5={"recompute": False}, f6={"recompute": False}))
    G.append(train_chain("train-all-norecompute", 5,
                         **{"f%d" % i: {"recompute": False} for i in range(5)}))
    G.append(train_chain("train-workspace", 6, f1={"workspace": 400}, b3={"workspace": 900}))
    G.append(train_chain("train-zero-mem", 6, f1={"mem": 0}, f3={"mem": 0}, b2={"mem": 0}))
    G.append(train_chain("train-one", 1))
    tg = train_chain("train-two-losses", 4)
    tg["nodes"].append(node("loss2", 4, ["f1"], kind="loss"))
    tg["outputs"].append("loss2")
    G.append(tg)
    tg = train_chain("train-outputs-inside", 5)
    tg["outputs"] += ["f2", "loss"]
    G.append(tg)
    # a backward node without grad_of, and a forward node with no backward
    tg = train_chain("train-odd-backward", 5)
    for nd in tg["nodes"]:
        if nd["id"] == "b2":
            del nd["grad_of"]
    tg["nodes"].append(node("side", 300, ["f3"], kind="forward"))
    tg["outputs"].append("side")
    G.append(tg)
    # a wide fan-out: one value read by many
    fan = [node("x", 16, kind="input"), node("hub", 100, ["x"])]
    fan += [node("s%d" % i, 10 + i, ["hub"]) for i in range(40)]
    fan.append(node("sum", 8, ["s%d" % i for i in range(40)]))
    G.append(graph("fan-out-in", fan))
    # a long forward chain (deep recursion in anything recursive)
    ch = [node("x", 16, kind="input")]
    ch += [node("n%d" % i, 64 + (i * 37) % 50, ["x" if i == 0 else "n%d" % (i - 1)])
           for i in range(3000)]
    G.append(graph("long-forward-chain", ch))
    return G


def fuzz_graph(seed, big=False):
    """A random valid graph built to break assumptions: shuffled file order,
    duplicate inputs, zero and huge sizes, workspaces, "recompute": false,
    outputs anywhere (inputs and inner nodes too), and every kind, with
    grad_of pointing at any node (itself, a later one, an input)."""
    rng = random.Random(seed)
    size = rng.choice([1, 2, 3, 5, 8, 13, 20, 40, 80, 160 if big else 20, 400 if big else 40])
    n_in = rng.choice([0, 0, 1, 1, 2, 3])
    training = rng.random() < 0.5
    ids = ["i%d" % k for k in range(n_in)] + ["n%d" % k for k in range(size)]
    nodes = []
    for k, nid in enumerate(ids):
        if k < n_in:
            nd = node(nid, rng.choice([0, 1, 64, 1000, 4096]), kind="input")
        else:
            fan = rng.choice([0, 1, 1, 1, 2, 2, 3, 5]) if k > 0 else 0
            ins = [ids[rng.randrange(0, k)] for _ in range(fan)] if k > 0 else []
            if ins and rng.random() < 0.15:
                ins.append(ins[0])              # a duplicate
            r = rng.random()
            mem = 0 if r < 0.1 else (rng.randrange(1, 1 << 40) if r < 0.13
                                     else rng.randrange(1, 2000))
            nd = node(nid, mem, ins, cost=rng.choice([0, 0.5, 1, 1, 2, 7.25, 100]))
            if training:
                pos = (k - n_in) / max(1, size)
                nd["kind"] = ("forward" if pos < 0.45 else "loss" if pos < 0.5
                              else "backward")
                if rng.random() < 0.1:
                    nd["kind"] = rng.choice(["op", "forward", "backward", "loss"])
                if nd["kind"] == "backward" and rng.random() < 0.9:
                    nd["grad_of"] = ids[rng.randrange(0, len(ids))] if rng.random() < 0.2 \
                        else ids[max(n_in, 2 * n_in + size - 1 - k)]
            elif rng.random() < 0.1:
                nd["kind"] = rng.choice(["forward", "op"])
            if rng.random() < 0.1:
                nd["workspace"] = rng.choice([1, 500, 100000, 1 << 45])
            if rng.random() < 0.12:
                nd["recompute"] = False
        nodes.append(nd)
    outputs = None
    r = rng.random()
    if r < 0.4:
        outputs = sorted(set(rng.choice(ids) for _ in range(rng.randint(1, 4))))
    rng.shuffle(nodes)
    return graph("fuzz-%d" % seed, nodes, outputs)


# ---------------------------------------------------------------- graph sets

# The --quick set: edge-case graphs (by name) and seeded random graphs.
QUICK_EDGE = ["only-inputs", "nothing-needed", "input-is-output", "duplicate-inputs",
              "dead-nodes", "huge-mem", "train-norecompute", "train-odd-backward"]
QUICK_FUZZ = [4]
QUICK_EXAMPLES = ["kumar-fig1.json", "train-chain4.json", "workspace.json"]
QUICK_TRAIN = ["gen-train-kumar"]


def gen_specs(mode):
    """(file name, remat gen arguments) for generated graphs."""
    if mode == "quick":
        return [("gen-layered10", ["layered", "10", "--seed", "1"]),
                ("gen-unet1-train", ["unet", "1", "--train"])]
    full = mode == "full"
    s = [("gen-chain1", ["chain", "1"]), ("gen-chain2", ["chain", "2"]),
         ("gen-chain5-fwd", ["chain", "5", "--forward"]),
         ("gen-chain12-rand", ["chain", "12", "--random", "--seed", "3"]),
         ("gen-layered10", ["layered", "10", "--seed", "1"]),
         ("gen-layered30-train", ["layered", "30", "--train", "--seed", "2"]),
         ("gen-unet1", ["unet", "1"]), ("gen-unet2-train", ["unet", "2", "--train"])]
    if full:
        s += [("gen-chain100-rand", ["chain", "100", "--random", "--seed", "7"]),
              ("gen-chain400", ["chain", "400"]),
              ("gen-chain1000-rand", ["chain", "1000", "--random", "--seed", "11"]),
              ("gen-chain50-fwd", ["chain", "50", "--forward", "--random", "--seed", "5"])]
        for seed in (1, 2, 3):
            s.append(("gen-layered60-s%d" % seed, ["layered", "60", "--seed", str(seed)]))
            s.append(("gen-layered120-train-s%d" % seed,
                      ["layered", "120", "--train", "--seed", str(seed)]))
        s += [("gen-layered400", ["layered", "400", "--seed", "4"]),
              ("gen-layered300-train", ["layered", "300", "--train", "--seed", "5"]),
              ("gen-layered80-dense", ["layered", "80", "--edge-density", "0.9",
                                       "--seed", "6"]),
              ("gen-layered80-wide", ["layered", "80", "--width", "2", "--seed", "8"])]
        for d in (3, 4, 6):
            s.append(("gen-unet%d-train" % d, ["unet", str(d), "--train"]))
        s.append(("gen-unet5", ["unet", "5"]))
        # large ones: a dense 4001-node training graph (tree decomposition
        # width in the thousands) and a 40002-node chain
        s += [("gen-layered2000-train", ["layered", "2000", "--train", "--seed", "2"]),
              ("gen-chain20000-rand", ["chain", "20000", "--random", "--seed", "5"])]
    return s


def collect_graphs(remat, mode, tmp, n_fuzz, find):
    full = mode == "full"
    paths = []
    for d in ("examples",) + (("graphs",) if full else ()):
        dd = os.path.join(ROOT, d)
        if os.path.isdir(dd):
            paths += sorted(os.path.join(dd, f) for f in os.listdir(dd) if f.endswith(".json")
                            if mode != "quick" or f in QUICK_EXAMPLES)
    if mode == "sweep":
        # two real networks from the zoo keep the sweep honest
        for f in ("resnet18.json", "vgg11.json"):
            if os.path.exists(os.path.join(ROOT, "graphs", f)):
                paths.append(os.path.join(ROOT, "graphs", f))
    pub = os.path.join(SHARED, "benchmarks", "published")
    if full:
        if os.path.isdir(pub):
            paths += sorted(os.path.join(pub, f) for f in os.listdir(pub) if f.endswith(".json"))
        else:
            print("stress: %s not found: the published graphs are not part of this run" % pub,
                  flush=True)
    edir = os.path.join(tmp, "graphs")
    os.makedirs(edir, exist_ok=True)
    if mode == "quick":
        made = [g for g in edge_graphs() if g["name"] in QUICK_EDGE]
        assert len(made) == len(QUICK_EDGE), "QUICK_EDGE names a graph edge_graphs() lacks"
        made += [fuzz_graph(seed) for seed in QUICK_FUZZ]
    else:
        made = edge_graphs() + [fuzz_graph(seed, full) for seed in range(n_fuzz)]
    for g in made:
        if not full and g["name"] == "long-forward-chain":
            continue
        p = os.path.join(edir, ("" if g["name"].startswith("fuzz-") else "edge-") + g["name"] + ".json")
        with open(p, "w") as f:
            json.dump(g, f)
        paths.append(p)
    for name, args in gen_specs(mode):
        p = os.path.join(edir, name + ".json")
        r = subprocess.run([remat, "gen"] + args + ["-o", p], capture_output=True, text=True,
                           stdin=subprocess.DEVNULL)
        if r.returncode != 0:
            find("exit", "gen " + " ".join(args), "exit %d: %s" % (r.returncode, r.stderr.strip()))
            continue
        paths.append(p)
    # training graphs of forward graphs
    for name, src in (("gen-train-kumar", os.path.join(ROOT, "examples", "kumar-fig1.json")),
                      ("gen-train-layered10", os.path.join(edir, "gen-layered10.json")),
                      ("gen-train-multi-output", os.path.join(edir, "edge-multi-output.json")),
                      ("gen-train-disconnected", os.path.join(edir, "edge-disconnected.json"))):
        if mode == "quick" and name not in QUICK_TRAIN:
            continue
        if not os.path.exists(src):
            find("exit", name, "%s is missing" % src)
            continue
        p = os.path.join(edir, name + ".json")
        r = subprocess.run([remat, "gen", "train", src, "-o", p], capture_output=True,
                           text=True, stdin=subprocess.DEVNULL)
        if r.returncode == 0:
            paths.append(p)
        else:
            find("exit", "gen train " + os.path.basename(src),
                 "exit %d: %s" % (r.returncode, r.stderr.strip()))
    return paths


# ---------------------------------------------------------------- the runs

class Stress:
    def __init__(self, a):
        self.a = a
        self.remat = a.remat
        self.lock = threading.Lock()
        self.findings = []
        self.runs = 0
        self.slowest = {}
        self.info = {}
        self.graphs = {}

    def find(self, kind, what, why):
        with self.lock:
            self.findings.append({"kind": kind, "run": what, "why": why})
            print("FINDING %-10s %s: %s" % (kind, what, why), flush=True)

    def graph_info(self, path):
        """remat info --json, checked against the judge's figures; None when
        either cannot read the graph (a finding)."""
        r = subprocess.run([self.remat, "info", path, "--json"], capture_output=True,
                           text=True, stdin=subprocess.DEVNULL, timeout=300)
        if r.returncode != 0:
            self.find("info", os.path.basename(path), "remat info exit %d: %s"
                      % (r.returncode, r.stderr.strip()[:300]))
            return None
        info = json.loads(r.stdout)
        try:
            g = judge.load_graph(path)
        except judge.GraphError as e:
            self.find("judge", os.path.basename(path), "remat accepts it, the judge does not: %s"
                      % str(e)[:300])
            return None
        self.graphs[path] = g
        want = judge.graph_figures(g)
        diff = ["%s %r, judge %r" % (k, info.get(k), v) for k, v in want.items()
                if not close(info.get(k), v)]
        if diff:
            self.find("info", os.path.basename(path), "remat info: " + "; ".join(diff))
        info["_nrp"] = want["no_remat_peak"]
        info["_lb"] = want["min_peak_lower_bound"]
        return info

    def budget_bytes(self, b, info):
        """The budget text to pass for a budget name; None to skip it."""
        lb, nrp = info["_lb"], info["_nrp"]
        if b == "lb":
            return str(lb)
        if b == "lb+1":
            return str(lb + 1)
        if b == "mid":
            # halfway between the lower bound and the no-remat peak
            return str((lb + nrp) // 2) if nrp > lb + 1 else None
        if b == "lb-1":
            return str(lb - 1) if lb > 0 else None
        return b

    def rescore(self, graph, sched, budget):
        """The judge's replay of a written schedule at budget (bytes):
        (result or None, summary mismatches, message)."""
        try:
            steps, doc = judge.load_schedule(sched)
        except judge.ScheduleError as e:
            return None, [], str(e)
        r = judge.replay(self.graphs[graph], steps, budget)
        mism = judge.compare_summary(doc["summary"], r, doc.get("budget")) \
            if r["valid"] and "summary" in doc else []
        return r, mism, r["error"]

    def plan_cmd(self, graph, budget, planner, out):
        cmd = [self.remat, "plan", graph, "--budget", budget, "--planner", planner, "--json",
               "-q", "-o", out]
        if self.a.time_limit > 0:
            cmd += ["--time-limit", "%g" % self.a.time_limit]
        return cmd

    def timely(self, t1, t2):
        """Both runs ended well before any time limit (else they may differ)."""
        return self.a.time_limit <= 0 or max(t1, t2) < self.a.time_limit / 2

    def hard_timeout(self):
        if self.a.quick:
            return 300
        return self.a.time_limit + 30 if self.a.time_limit > 0 else max(120, 6 * self.a.cliff)

    def run_cmd(self, cmd):
        """(exit code or None on a hang, stdout, stderr, seconds).  Each run
        is a process group of its own, so that a hang is killed with its
        children (checkmate runs CBC in a child process)."""
        t0 = time.monotonic()
        try:
            p = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                                 stdin=subprocess.DEVNULL, text=True, start_new_session=True)
        except OSError as e:  # the binary vanished (rebuilt mid-run)
            return 127, "", "cannot run %s: %s" % (cmd[0], e), time.monotonic() - t0
        try:
            so, se = p.communicate(timeout=self.hard_timeout())
            return p.returncode, so, se, time.monotonic() - t0
        except subprocess.TimeoutExpired:
            try:
                os.killpg(p.pid, signal.SIGKILL)
            except ProcessLookupError:
                pass
            p.communicate()
            return None, "", "", time.monotonic() - t0

    def one(self, graph, planner, btext, budget, tmp, det):
        name = "%s/%s/%s" % (os.path.basename(graph)[:-5], planner, btext)
        info = self.info[graph]
        out = os.path.join(tmp, hashlib.sha1(name.encode()).hexdigest()[:16] + ".json")
        if os.path.exists(out):
            os.unlink(out)
        cmd = self.plan_cmd(graph, budget, planner, out)
        code, so, se, wall = self.run_cmd(cmd)
        with self.lock:
            self.runs += 1
            key = (os.path.basename(graph), planner)
            if wall > self.slowest.get(key, (0, ""))[0]:
                self.slowest[key] = (wall, btext)
        if self.a.verbose:
            print("run %-60s exit %s %.2fs" % (name, code, wall), flush=True)
        if code is None:
            self.find("crash", name, "no exit after %.0f s (hang)" % wall)
            return
        if not self.a.quick and self.a.time_limit > 0 and wall > self.a.time_limit + 2:
            self.find("slow", name, "%.1f s with --time-limit %g" % (wall, self.a.time_limit))
        if not self.a.quick and self.a.time_limit <= 0 and wall > self.a.cliff:
            self.find("cliff", name, "%.1f s without a time limit" % wall)
        if code < 0:
            self.find("crash", name, "killed by signal %d; stderr: %s" % (-code, se.strip()[-300:]))
            return
        if code not in (0, 3):
            self.find("exit", name, "exit %d; stderr: %s" % (code, se.strip()[:300]))
            return
        try:
            got = json.loads(so)
            if not isinstance(got, dict):
                raise ValueError
        except ValueError:
            self.find("json", name, "stdout is not one JSON object: %r" % so[:200])
            return
        nrp = info["_nrp"]
        b = judge.parse_budget(budget, nrp)
        if code == 3:
            if os.path.exists(out):
                self.find("exit3-file", name, "exit 3 but %s was written" % out)
                os.unlink(out)
            if b >= nrp:
                self.find("exit3-fit", name, "exit 3 at budget %d >= no-remat peak %d: %s"
                          % (b, nrp, se.strip()[:200]))
            if got.get("feasible") is not False:
                self.find("json", name, "exit 3 but feasible is %r" % got.get("feasible"))
            return
        if not os.path.exists(out):
            self.find("nofile", name, "exit 0 but no schedule written")
            return
        res, mism, msg = self.rescore(graph, out, b)
        valid = res is not None and res["valid"]
        if not valid:
            self.find("invalid", name, "judge: %s" % msg)
        elif not res["feasible"]:
            self.find("over", name, "judge: peak %s over budget %s" % (res["peak_mem"], b))
        else:
            if mism:
                self.find("figures", name, "schedule summary vs judge: %s" % "; ".join(mism)[:300])
            for k in ("peak_mem", "cost", "baseline_cost", "computes", "recomputes", "feasible"):
                if k not in got or not close(got[k], res[k]):
                    self.find("figures", name, "--json %s = %r, judge says %r"
                              % (k, got.get(k), res[k]))
                    break
            if got.get("budget") != b:
                self.find("figures", name, "--json budget %r, expected %r" % (got.get("budget"), b))
        if det and valid and not (self.a.quick and planner == "auto"):
            t1 = got.get("time_s", wall)
            with open(out, "rb") as f:
                first = f.read()
            out2 = out + ".again"
            code2, so2, se2, wall2 = self.run_cmd(self.plan_cmd(graph, budget, planner, out2))
            with self.lock:
                self.runs += 1
            if code2 != 0 or not os.path.exists(out2):
                if self.timely(t1, wall2):
                    self.find("nondet", name, "first run exit 0, second exit %s" % code2)
            else:
                with open(out2, "rb") as f:
                    second = f.read()
                if first != second and self.timely(t1, wall2):
                    self.find("nondet", name, "two runs wrote different schedules")
                os.unlink(out2)
        os.unlink(out)


def close(a, b):
    if isinstance(a, bool) or isinstance(b, bool):
        return a is b
    if isinstance(a, (int, float)) and isinstance(b, (int, float)):
        return abs(a - b) <= max(1e-9, 1e-6 * max(abs(a), abs(b)))
    return a == b


# The published networkx files (../shared/benchmarks/published-nx) and their
# published remat-graph conversions (../shared/benchmarks/published).
PUBLISHED_NX = [
    ("MobileNet_MLSys_512_224_224_3_test_nx.json", "mobilenet-infer.json", False),
    ("MobileNet_MLSys_512_224_224_3_train_nx.json", "mobilenet-train.json", False),
    ("ResNet50_MLSys_256_224_224_3_test_nx.json", "resnet50-infer.json", False),
    ("ResNet50_MLSys_256_224_224_3_train_nx.json", "resnet50-train.json", False),
    ("VGG16_MLSys_256_224_224_3_test_nx.json", "vgg16-infer.json", False),
    ("VGG16_MLSys_256_224_224_3_train_nx.json", "vgg16-train.json", False),
    ("VGG19_MLSys_256_224_224_3_test_nx.json", "vgg19-infer.json", False),
    ("VGG19_MLSys_256_224_224_3_train_nx.json", "vgg19-train.json", False),
    ("fcn_8_vgg_MLSys_32_416_608_3_test_nx.json", "fcn-8-vgg-infer.json", False),
    ("fcn_8_vgg_MLSys_32_416_608_3_train_nx.json", "fcn-8-vgg-train.json", False),
    ("segnet_MLSys_32_416_608_3_test_nx.json", "segnet-infer.json", False),
    ("segnet_MLSys_32_416_608_3_train_nx.json", "segnet-train.json", False),
    ("vgg_unet_MLSys_32_416_608_3_test_nx.json", "vgg-unet-infer.json", False),
    ("vgg_unet_MLSys_32_416_608_3_train_nx.json", "vgg-unet-train.json", False),
    ("random_layered_n100_w0.27_nlv0.75_ed0.2_scd0.14.json", "random-layered-n100.json", False),
    ("random_layered_n250_w0.43_nlv0.75_ed0.2_scd0.14.json", "random-layered-n250.json", False),
    ("random_layered_n500_w0.36_nlv0.75_ed0.2_scd0.14.json", "random-layered-n500.json", False),
    ("random_layered_n1000_w0.31_nlv0.75_ed0.2_scd0.14.json", "random-layered-n1000.json", False),
    ("random_layered_n100_w0.27_nlv0.75_ed0.2_scd0.14.json",
     "random-layered-n100-paper-order.json", True),
    ("random_layered_n250_w0.43_nlv0.75_ed0.2_scd0.14.json",
     "random-layered-n250-paper-order.json", True),
    ("random_layered_n500_w0.36_nlv0.75_ed0.2_scd0.14.json",
     "random-layered-n500-paper-order.json", True),
    ("random_layered_n1000_w0.31_nlv0.75_ed0.2_scd0.14.json",
     "random-layered-n1000-paper-order.json", True),
]


def same_graph(a, b):
    """Where two judged graphs differ node for node (names aside), or None."""
    if a.ids != b.ids:
        return "node ids or their order differ"
    for v, nid in enumerate(a.ids):
        for field in ("kind", "mem", "workspace", "cost", "recompute", "grad_of"):
            if getattr(a, field)[v] != getattr(b, field)[v]:
                return "node '%s': %s %r, expected %r" % (nid, field, getattr(a, field)[v],
                                                         getattr(b, field)[v])
        if a.inputs[v] != b.inputs[v]:
            return "node '%s': inputs differ" % nid
    if a.outputs != b.outputs:
        return "outputs differ"
    return None


def check_published_nx(st, tmp):
    """remat convert on every published networkx file against its published
    conversion.  Skipped, and said so, when ../shared/benchmarks is absent."""
    nxdir = os.path.join(SHARED, "benchmarks", "published-nx")
    pubdir = os.path.join(SHARED, "benchmarks", "published")
    if not (os.path.isdir(nxdir) and os.path.isdir(pubdir)):
        print("stress: %s not found: the networkx conversion check did not run" % nxdir,
              flush=True)
        return
    listed = {nx for nx, _, _ in PUBLISHED_NX}
    for f in sorted(os.listdir(nxdir)):
        if f.endswith(".json") and f not in listed:
            st.find("nx", f, "a published file that PUBLISHED_NX does not list")
    for nx, conv, order in PUBLISHED_NX:
        out = os.path.join(tmp, "nx-" + conv)
        cmd = [st.remat, "convert", os.path.join(nxdir, nx), "-o", out]
        if order:
            cmd.append("--graph-order")
        r = subprocess.run(cmd, capture_output=True, text=True, stdin=subprocess.DEVNULL)
        with st.lock:
            st.runs += 1
        if r.returncode != 0:
            st.find("nx", conv, "remat convert exit %d: %s" % (r.returncode, r.stderr.strip()))
            continue
        try:
            diff = same_graph(judge.load_graph(out), judge.load_graph(os.path.join(pubdir, conv)))
        except (judge.GraphError, OSError) as e:
            diff = str(e)
        if diff:
            st.find("nx", conv, diff)


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--remat", default=os.path.join(ROOT, "build", "remat"))
    mode = ap.add_mutually_exclusive_group()
    mode.add_argument("--quick", action="store_true",
                      help="the small fixed set ctest runs (no time limit, no timing checks)")
    mode.add_argument("--full", action="store_true", help="every graph and budget")
    ap.add_argument("--jobs", type=int, default=2, help="parallel runs (at most 2)")
    ap.add_argument("--time-limit", type=float, default=None,
                    help="--time-limit for every run (default 5, --full 10; 0: none)")
    ap.add_argument("--cliff", type=float, default=10.0,
                    help="with --time-limit 0 (none): flag runs longer than this (10 s)")
    ap.add_argument("--planners", default=None, help="comma-separated (default: all listed)")
    ap.add_argument("--only", default=None, help="only graphs whose file name contains this")
    ap.add_argument("--budgets", default=None, help="comma-separated budgets (lb, lb-1 allowed)")
    ap.add_argument("--det-every", type=int, default=None,
                    help="repeat every Nth run to check determinism (default 7)")
    ap.add_argument("--fuzz", type=int, default=None,
                    help="random graphs to add (default 40, --full 400)")
    ap.add_argument("--findings", default=None, help="write the findings as JSON here")
    ap.add_argument("--keep", default=None, help="keep the generated graphs in this directory")
    ap.add_argument("--verbose", action="store_true")
    a = ap.parse_args()
    a.jobs = max(1, min(2, a.jobs))
    mode = "quick" if a.quick else "full" if a.full else "sweep"
    if a.quick and a.time_limit:
        ap.error("--quick passes no time limit (it has no timing checks)")
    if a.time_limit is None:
        a.time_limit = {"quick": 0.0, "sweep": 5.0, "full": 10.0}[mode]
    if a.fuzz is None:
        a.fuzz = 400 if a.full else 40
    if a.det_every is None:
        a.det_every = 7
    a.remat = os.path.abspath(a.remat)
    if not os.access(a.remat, os.X_OK):
        print("stress: %s is not an executable" % a.remat, file=sys.stderr)
        return 2
    t_start = time.monotonic()
    p = subprocess.run([a.remat, "planners"], capture_output=True, text=True)
    planners = [ln.split()[0] for ln in p.stdout.splitlines() if ln.strip()]
    if a.planners:
        planners = [x for x in a.planners.split(",") if x]
    budgets = a.budgets.split(",") if a.budgets else \
        {"quick": QUICK_BUDGETS, "sweep": SWEEP_BUDGETS, "full": FULL_BUDGETS}[mode]
    tmp = a.keep or tempfile.mkdtemp(prefix="remat-stress-")
    os.makedirs(tmp, exist_ok=True)
    st = Stress(a)
    try:
        graphs = collect_graphs(a.remat, mode, tmp, a.fuzz, st.find)
        if a.only:
            graphs = [g for g in graphs if a.only in os.path.basename(g)]
        jobs = []
        for g in graphs:
            info = st.graph_info(g)
            if info is None:
                continue
            st.info[g] = info
            for pl in planners:
                for bt in budgets:
                    b = st.budget_bytes(bt, info)
                    if b is None:
                        continue
                    jobs.append((g, pl, bt, b))
        # big graphs first so that the pool ends on short runs
        jobs.sort(key=lambda j: -st.info[j[0]]["nodes"])
        work = os.path.join(tmp, "out")
        os.makedirs(work, exist_ok=True)
        print("stress (%s): %d graphs x %d planners x %d budgets = %d runs, %s, %d jobs"
              % (mode, len(st.info), len(planners), len(budgets), len(jobs),
                 "--time-limit %g" % a.time_limit if a.time_limit > 0 else "no time limit",
                 a.jobs), flush=True)
        with concurrent.futures.ThreadPoolExecutor(max_workers=a.jobs) as ex:
            futs = [ex.submit(st.one, g, pl, bt, b, work, i % a.det_every == 0)
                    for i, (g, pl, bt, b) in enumerate(jobs)]
            for f in futs:
                f.result()
        if a.full and not a.only:
            check_published_nx(st, work)
    finally:
        if not a.keep:
            shutil.rmtree(tmp, ignore_errors=True)
    elapsed = time.monotonic() - t_start
    slow = sorted(st.slowest.items(), key=lambda kv: -kv[1][0])[:10]
    print("slowest (graph, planner): " + ", ".join(
        "%s/%s %.1fs@%s" % (k[0][:-5], k[1], v[0], v[1]) for k, v in slow))
    kinds = {}
    for f in st.findings:
        kinds[f["kind"]] = kinds.get(f["kind"], 0) + 1
    if a.findings:
        with open(a.findings, "w") as f:
            json.dump({"runs": st.runs, "seconds": round(elapsed, 1), "findings": st.findings,
                       "slowest": [[k[0], k[1], v[0], v[1]] for k, v in slow]}, f, indent=1)
    print("stress: %d runs in %.0f s, %d findings%s" % (
        st.runs, elapsed, len(st.findings),
        (" (" + ", ".join("%s %d" % kv for kv in sorted(kinds.items())) + ")") if kinds else ""))
    print("%d passed, %d failed" % (st.runs - len(st.findings), len(st.findings)))
    return 1 if st.findings else 0


if __name__ == "__main__":
    sys.exit(main())
