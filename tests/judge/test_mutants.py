#!/usr/bin/python3
"""The mutation corpus (tests/judge/mutants/, written by make_mutants.py)
replayed through `remat simulate --json` and the independent judge
(tests/judge/judge.py): both must say the same (issue 18).

For every entry of mutants/manifest.json:
- remat and the judge agree on valid or not, and each agrees with what
  the judge said when the corpus was made (`expect`), so that neither can
  drift alone;
- exit codes follow FORMATS.md section 4: 1 when invalid; when valid, 0
  within the budget (or without one) and 3 over it;
- valid: peak_mem, cost, computes, recomputes, baseline_cost and
  feasible are equal;
- invalid at a step: when both name the first bad step, it is the same.

Usage: test_mutants.py REMAT SOURCE_DIR
"""
import json
import os
import subprocess
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
import judge  # noqa: E402

FIGURES = ("peak_mem", "cost", "computes", "recomputes", "baseline_cost", "feasible")


def judge_says(graph, path, budget):
    try:
        steps, _ = judge.load_schedule(path)
    except judge.ScheduleError as e:
        return {"valid": False, "error_step": None, "error": str(e)}
    return judge.replay(graph, steps, budget)


def main():
    remat, root = sys.argv[1], sys.argv[2]
    corpus = os.path.join(HERE, "mutants")
    with open(os.path.join(corpus, "manifest.json")) as f:
        manifest = json.load(f)
    graphs = {}
    failed = 0
    counts = {True: 0, False: 0}
    steps_compared = 0
    for m in manifest:
        gpath = os.path.join(root, m["graph"])
        if gpath not in graphs:
            graphs[gpath] = judge.load_graph(gpath)
        g = graphs[gpath]
        spath = os.path.join(corpus, m["schedule"])
        args = [remat, "simulate", gpath, spath, "--json"]
        if m["budget"] is not None:
            args += ["--budget", str(m["budget"])]
        p = subprocess.run(args, capture_output=True, text=True, timeout=60,
                           stdin=subprocess.DEVNULL)
        why = []
        try:
            got = json.loads(p.stdout)
        except ValueError:
            got = {}
            why.append("remat's stdout is not JSON: %r" % p.stdout[:200])
        j = judge_says(g, spath, m["budget"])
        exp = m["expect"]
        if got.get("valid") is not j["valid"]:
            why.append("remat says valid=%r, the judge %r (%s)" % (
                got.get("valid"), j["valid"], got.get("error") or j.get("error")))
        if j["valid"] is not exp["valid"]:
            why.append("the judge says valid=%r, the corpus expects %r" % (j["valid"],
                                                                            exp["valid"]))
        if j["valid"]:
            want = 3 if not j["feasible"] else 0
            if p.returncode != want:
                why.append("exit %d, expected %d" % (p.returncode, want))
            for k in FIGURES:
                a, b = got.get(k), j[k]
                same = (a == b) if k != "cost" else (
                    isinstance(a, (int, float)) and abs(a - b) <= 1e-9 * max(1, abs(b)))
                if not same:
                    why.append("%s: remat %r, judge %r" % (k, a, b))
                if k in exp and exp[k] != b:
                    why.append("%s: judge %r, corpus %r" % (k, b, exp[k]))
        else:
            if p.returncode != 1:
                why.append("exit %d for an invalid schedule, expected 1" % p.returncode)
            rs, js = got.get("error_step"), j.get("error_step")
            if rs is not None and js is not None:
                steps_compared += 1
            if rs is not None and js is not None and rs != js:
                why.append("first bad step: remat %r, judge %r (remat: %s; judge: %s)" % (
                    rs, js, got.get("error"), j.get("error")))
            if js != exp.get("error_step"):
                why.append("the judge's first bad step %r, the corpus expects %r" % (
                    js, exp.get("error_step")))
        counts[bool(j["valid"])] += 1
        if why:
            failed += 1
            print("FAIL %s (%s): %s" % (m["schedule"], m["mutation"], "; ".join(why)))
        else:
            print("ok   %-58s %s" % (m["schedule"], "valid" if j["valid"] else
                                      "invalid: " + (got.get("error") or "").replace(
                                          spath, "FILE")[:70]))
    # A corpus of one kind only would not test agreement.
    if not counts[True] or not counts[False]:
        print("FAIL the corpus needs valid and invalid mutants: %r" % counts)
        failed += 1
    print("mutants: %d (%d valid, %d invalid; first bad step compared on %d), %d failed" % (
        len(manifest), counts[True], counts[False], steps_compared, failed))
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
