#!/usr/bin/python3
"""End-to-end tests of `remat bench`, `--plot` and `--timeline` through the
binary, checked with parsers that share no code with remat (csv, json,
xml.etree from the standard library).

    run_bench_tests.py PATH/TO/remat PROJECT_ROOT

Expected figures come from examples/README: kumar-fig1 peaks at 4 bytes
with cost 5 in its no-remat order and no schedule peaks below 3;
train-chain4's no-remat peak is 7 MiB and its lower bound 4 MiB.
"""
import csv
import json
import os
import shutil
import signal
import subprocess
import sys
import tempfile
import time
import xml.etree.ElementTree as ET

COLUMNS = ["graph", "file", "nodes", "planner", "budget_spec", "budget", "budget_pct",
           "status", "feasible", "peak", "cost", "overhead", "recomputes", "time_s",
           "no_remat_peak", "lower_bound", "chosen", "error"]
SVG = "{http://www.w3.org/2000/svg}"

failures = []


def check(cond, what):
    if not cond:
        failures.append(what)
        print("FAIL " + what)


def run(remat, args, cwd, **kw):
    return subprocess.run([remat] + args, capture_output=True, text=True, cwd=cwd,
                          stdin=subprocess.DEVNULL, timeout=120, **kw)


def rows_of(path):
    if path.endswith(".csv"):
        with open(path, newline="") as f:
            r = csv.DictReader(f)
            return r.fieldnames, list(r)
    with open(path) as f:
        d = json.load(f)
    return d, d["rows"]


def key(r):
    return (r["file"], r["planner"], r["budget_spec"])


def svg_texts(path):
    root = ET.parse(path).getroot()   # raises on malformed XML
    check(root.tag == SVG + "svg", "%s: root is %s" % (path, root.tag))
    return " | ".join("".join(t.itertext()) for t in root.iter(SVG + "text"))


def main():
    remat, root = os.path.abspath(sys.argv[1]), os.path.abspath(sys.argv[2])
    tmp = tempfile.mkdtemp(prefix="remat-bench-test-")
    # A folder of its own with three examples, so that new example graphs
    # do not change the counts below.
    ex = os.path.join(tmp, "examples")
    os.mkdir(ex)
    for name in ("kumar-fig1.json", "train-chain4.json", "workspace.json"):
        shutil.copy(os.path.join(root, "examples", name), ex)
    kumar = os.path.join(ex, "kumar-fig1.json")
    chain = os.path.join(ex, "train-chain4.json")

    # 1. A sweep to CSV and JSON: the columns and the figures.
    p = run(remat, ["bench", kumar, chain, "-p", "none,auto", "-b", "50%..100%:6",
                    "-j", "2", "-o", "r.csv", "-o", "r.json"], tmp)
    check(p.returncode == 0, "sweep exit %d: %s" % (p.returncode, p.stderr))
    check("bench: [1/24] " in p.stderr, "a plain line per run when stderr is not a terminal")
    check("remat bench: 24 runs in" in p.stderr, "summary line: %r" % p.stderr[-200:])
    header, crows = rows_of(os.path.join(tmp, "r.csv"))
    check(header == COLUMNS, "CSV columns %r" % header)
    doc, jrows = rows_of(os.path.join(tmp, "r.json"))
    check(doc["format"] == "remat-bench" and doc["version"] == 1, "JSON header")
    check(len(crows) == 24 and len(jrows) == 24, "24 rows each (%d, %d)" % (len(crows), len(jrows)))
    check(all(list(r.keys()) == COLUMNS for r in jrows), "JSON keys")
    j = {key(r): r for r in jrows}
    for r in crows:   # the two files say the same
        q = j[key(r)]
        for c in COLUMNS:
            v = q[c]
            v = "" if v is None else ("true" if v is True else "false" if v is False else str(v))
            if c in ("overhead", "cost", "time_s", "budget_pct") and r[c] and v:
                check(abs(float(r[c]) - float(v)) < 1e-12, "%s %s: csv %s json %s" % (key(r), c, r[c], v))
            else:
                check(r[c] == v, "%s %s: csv %r json %r" % (key(r), c, r[c], v))
    k = j[(kumar, "none", "100%")]
    check(k["status"] == "ok" and k["feasible"] is True and k["peak"] == 4 and k["cost"] == 5
          and k["overhead"] == 0 and k["recomputes"] == 0 and k["nodes"] == 5
          and k["no_remat_peak"] == 4 and k["lower_bound"] == 3 and k["budget"] == 4,
          "kumar none 100%%: %r" % k)
    # 80% of 4 bytes is 3.2 -> 3: none's schedule (peak 4) is over it.
    k = j[(kumar, "none", "80%")]
    check(k["budget"] == 3 and k["status"] == "nofit" and k["feasible"] is False and k["peak"] == 4,
          "kumar none 80%%: %r" % k)
    # 50%, 60%, 70% of 4 are 2 bytes: below the lower bound, no schedule at all.
    k = j[(kumar, "auto", "60%")]
    check(k["budget"] == 2 and k["peak"] is None and "lower bound" in k["error"], "kumar auto 60%%: %r" % k)
    c = j[(chain, "auto", "50%")]
    check(c["budget"] == 3670016 and c["no_remat_peak"] == 7340032 and c["lower_bound"] == 4194304
          and c["budget_pct"] == 50, "chain4 auto 50%%: %r" % c)
    check(j[(kumar, "auto", "100%")]["chosen"] == "exhaustive",
          "auto says what it chose: on a 5-node graph, its search of every schedule")

    # 2. Usage errors and bad input.
    for args, code, msg in [
            (["bench", kumar, "-b", "30%..100%"], 2, "needs ':N'"),
            (["bench", kumar, "-o", "r.txt"], 2, "name results files .csv or .json"),
            (["bench", kumar, "-p", "magic"], 2, "unknown planner 'magic'"),
            (["bench", kumar, "--update-baseline"], 2, "needs '--baseline FILE'"),
            (["bench", kumar, "--jobs", "0"], 2, "'--jobs'"),
            (["bench", "--merge", "r.csv", "-p", "none"], 2, "does not apply to --merge"),
            (["bench", os.path.join(tmp, "nope.json")], 1, "nope.json: cannot read"),
            (["bench", "--merge", os.path.join(root, "examples", "kumar-fig1.json")], 1,
             "not a remat bench results file")]:
        p = run(remat, args, tmp)
        check(p.returncode == code and msg in p.stderr,
              "%s: exit %d, stderr %r" % (args, p.returncode, p.stderr))

    # 3. --emit-jobs, run by a shell, then --merge: the same rows as one sweep.
    p = run(remat, ["bench", ex, "-p", "none,auto", "-b", "100%,75%", "-t", "30",
                    "--emit-jobs", "parts"], tmp)
    lines = p.stdout.splitlines()
    check(p.returncode == 0 and len(lines) == 12, "emit-jobs: %d lines, %r" % (len(lines), p.stderr))
    check(all(" bench " in l and " -o parts/" in l and "--time-limit 30" in l for l in lines),
          "emitted commands: %r" % lines[:2])
    for l in lines:
        q = subprocess.run(l, shell=True, cwd=tmp, capture_output=True, text=True)
        check(q.returncode == 0, "job %r: %s" % (l, q.stderr))
    p = run(remat, ["bench", "--merge", "parts", "-o", "merged.csv", "-o", "merged.json"], tmp)
    check(p.returncode == 0 and "merged 12 runs from 12 files" in p.stderr, "merge: %r" % p.stderr)
    p = run(remat, ["bench", ex, "-p", "none,auto", "-b", "100%,75%", "-q", "-o", "direct.csv"], tmp)
    _, merged = rows_of(os.path.join(tmp, "merged.csv"))
    _, direct = rows_of(os.path.join(tmp, "direct.csv"))
    strip = lambda rs: [{c: r[c] for c in COLUMNS if c != "time_s"} for r in rs]
    check(strip(merged) == strip(direct), "merged rows equal a single sweep's")
    # Merging a run twice keeps one copy.
    p = run(remat, ["bench", "--merge", "merged.json", "parts", "-o", "twice.csv"], tmp)
    check("12 runs appeared more than once" in p.stderr and len(rows_of(os.path.join(tmp, "twice.csv"))[1]) == 12,
          "duplicates dropped: %r" % p.stderr)

    # 4. Baselines: write, pass, catch a hand-made regression, accept an improvement.
    base = os.path.join(tmp, "baseline.json")
    p = run(remat, ["bench", ex, "-p", "none,auto", "-b", "100%,90%", "-q", "--baseline", base,
                    "--update-baseline"], tmp)
    check(p.returncode == 0 and os.path.exists(base), "update-baseline: %r" % p.stderr)
    doc, brows = rows_of(base)
    check("date" not in doc and all(r["time_s"] is None for r in brows),
          "a baseline holds no times, so regenerating it changes nothing")
    bench = ["bench", ex, "-p", "none,auto", "-b", "100%,90%", "-q", "--baseline", base]
    p = run(remat, bench, tmp)
    check(p.returncode == 0 and "12 runs compared, 0 regressions" in p.stderr, "clean check: %r" % p.stderr)

    def edit(fn):
        with open(base) as f:
            d = json.load(f)
        for r in d["rows"]:
            fn(r)
        with open(base, "w") as f:
            json.dump(d, f)

    def cheaper(r):   # the baseline claims kumar/none at 100% cost half as much
        if r["graph"] == "kumar-fig1" and r["planner"] == "none" and r["budget_spec"] == "100%":
            r["overhead"], r["cost"] = -0.5, 2.5

    edit(cheaper)
    p = run(remat, bench, tmp)
    check(p.returncode == 5 and "regression: kumar-fig1 none 100%: overhead +0.00%, baseline -50.00%"
          in p.stderr, "overhead regression caught: %d %r" % (p.returncode, p.stderr))

    def fits(r):      # ... and that chain4/none fit at 90%
        if r["graph"] == "train-chain4" and r["planner"] == "none" and r["budget_spec"] == "90%":
            r.update(status="ok", feasible=True, peak=r["budget"], overhead=0.0, cost=13, error=None)

    edit(fits)
    p = run(remat, bench, tmp)
    check(p.returncode == 5 and "regression: train-chain4 none 90%: feasible in the baseline "
          "(overhead +0.00%), now nofit" in p.stderr and "2 regressions" in p.stderr,
          "feasibility regression caught: %r" % p.stderr)
    run(remat, bench + ["--update-baseline"], tmp)

    def worse(r):     # the baseline says kumar/auto did not fit at 100%, and was dearer
        if r["graph"] == "kumar-fig1" and r["planner"] == "auto" and r["budget_spec"] == "100%":
            r.update(status="nofit", feasible=False, peak=None, cost=None, overhead=None)
        if r["graph"] == "kumar-fig1" and r["planner"] == "none" and r["budget_spec"] == "100%":
            r["overhead"] = 0.25

    edit(worse)
    p = run(remat, bench, tmp)
    check(p.returncode == 0 and "improved: kumar-fig1 auto 100%: now feasible" in p.stderr
          and "improved: kumar-fig1 none 100%: overhead +0.00%, baseline +25.00%" in p.stderr,
          "improvements pass: %d %r" % (p.returncode, p.stderr))
    run(remat, bench + ["--update-baseline"], tmp)

    def slightly(r):  # within 1%: cost 1/0.995 = +0.503%
        if r["graph"] == "kumar-fig1" and r["planner"] == "none" and r["budget_spec"] == "100%":
            r["overhead"] = -0.005

    edit(slightly)
    p = run(remat, bench, tmp)
    check(p.returncode == 0, "+0.5%% is within the default 1%%: %r" % p.stderr)
    p = run(remat, bench + ["--tolerance", "0.1%"], tmp)
    check(p.returncode == 5 and "cost up 0.50% (tolerance 0.10%)" in p.stderr,
          "+0.5%% is beyond 0.1%%: %r" % p.stderr)
    # Runs not in the baseline are new, not regressions.
    p = run(remat, ["bench", ex, "-p", "none", "-b", "80%", "-q", "--baseline", base], tmp)
    check(p.returncode == 0 and "3 new" in p.stderr, "new runs: %r" % p.stderr)

    # 5. Pictures: well-formed XML with the labels a reader needs, written atomically.
    p = run(remat, ["bench", "--merge", "merged.json", "--plot", "plots"], tmp)
    plots = sorted(os.listdir(os.path.join(tmp, "plots")))
    check(plots == ["kumar-fig1.svg", "train-chain4.svg", "workspace.svg"], "plots %r" % plots)
    for f in plots:
        t = svg_texts(os.path.join(tmp, "plots", f))
        for want in ("compute overhead vs memory budget", "no-remat peak", "memory budget (%",
                     "auto", "none"):
            check(want in t, "%s lacks %r" % (f, want))
    p = run(remat, ["plan", chain, "--budget", "100%", "--planner", "none", "--timeline", "t.svg"], tmp)
    check(p.returncode == 0, "plan --timeline: %r" % p.stderr)
    t = svg_texts(os.path.join(tmp, "t.svg"))
    check("train-chain4: memory at every step" in t and "budget 7.00 MiB" in t and "memory (MiB)" in t
          and "planner none" in t, "plan timeline labels: %r" % t[:300])
    p = run(remat, ["plan", chain, "--budget", "80%", "--planner", "none", "--timeline", "over.svg"], tmp)
    check(p.returncode == 3 and "over budget" in svg_texts(os.path.join(tmp, "over.svg")),
          "an over-budget plan still draws its timeline")
    p = run(remat, ["simulate", kumar, os.path.join(root, "tests/cli/data/kumar-remat.json"),
                    "--budget", "3", "--timeline", "s.svg"], tmp)
    t = svg_texts(os.path.join(tmp, "s.svg"))
    check(p.returncode == 0 and "1 recomputation" in t and "peak 3 B (step 3)" in t,
          "simulate timeline: %r" % t[:300])
    p = run(remat, ["simulate", kumar, os.path.join(root, "tests/cli/data/kumar-bad.json"),
                    "--timeline", "bad.svg"], tmp)
    check(p.returncode == 1 and not os.path.exists(os.path.join(tmp, "bad.svg")),
          "no timeline for an invalid schedule")
    p = run(remat, ["simulate", kumar, os.path.join(root, "tests/cli/data/kumar-remat.json"),
                    "--timeline", os.path.join(tmp, "no/dir/s.svg")], tmp)
    check(p.returncode == 4 and "cannot write" in p.stderr, "unwritable timeline: %r" % p.stderr)
    check(not [n for n in os.listdir(tmp) if ".tmp." in n], "no temporary files left")

    # 6. Interrupted: every finished row is kept, the JSON file is complete.
    pr = subprocess.Popen([remat, "bench", ex, "-p", "none,auto", "-b", "1%..100%:3000", "-q",
                           "-o", "int.json", "-o", "int.csv"], cwd=tmp,
                          stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
    time.sleep(0.8)
    pr.send_signal(signal.SIGINT)
    err = pr.communicate(timeout=60)[1]
    check(pr.returncode == 130 and "interrupted:" in err, "SIGINT: exit %d %r" % (pr.returncode, err))
    _, irows = rows_of(os.path.join(tmp, "int.json"))
    _, icsv = rows_of(os.path.join(tmp, "int.csv"))
    check(0 < len(irows) < 18000 and len(icsv) == len(irows),
          "interrupted sweep kept %d JSON and %d CSV rows" % (len(irows), len(icsv)))
    check(all(r["status"] in ("ok", "nofit") for r in irows), "no run reported as crashed")

    print("bench: %d failures" % len(failures))
    subprocess.run(["rm", "-rf", tmp])
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
