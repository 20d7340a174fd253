#!/usr/bin/python3
"""auto on tiny graphs against brute.py's search of every schedule: at
budgets from one byte below the least peak to the no-remat peak, on the
tests' small graphs and on generated training chains and layered
training graphs, `remat plan --json` costs exactly the optimum brute.py
finds, claims it optimal, its schedule replays in the judge (judge.py)
within the budget at that cost, and it exits 3 exactly where nothing
fits.

Usage: test_brute.py REMAT SOURCE_DIR
"""
import json
import os
import subprocess
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
import brute  # noqa: E402
import judge  # noqa: E402


def graphs(remat, root, tmp):
    for name in ("tiny-out-of-order", "nofast-11", "inorder-17"):
        yield os.path.join(root, "tests", "data", name + ".json")
    for seed in (1, 2, 3):
        path = os.path.join(tmp, "chain%d.json" % seed)
        subprocess.run([remat, "gen", "chain", "4", "--random", "--seed", str(seed),
                        "-o", path], check=True)
        yield path
    for seed in (1, 2):
        fwd = os.path.join(tmp, "layered%d.json" % seed)
        path = os.path.join(tmp, "layered%d-train.json" % seed)
        subprocess.run([remat, "gen", "layered", "6", "--seed", str(seed), "-o", fwd],
                       check=True)
        subprocess.run([remat, "gen", "train", fwd, "-o", path], check=True)
        yield path


def main():
    remat, root = sys.argv[1], sys.argv[2]
    fails = runs = nofit = remat_runs = 0
    with tempfile.TemporaryDirectory() as tmp:
        for path in graphs(remat, root, tmp):
            g = judge.load_graph(path)
            lo, hi = judge.min_peak_lower_bound(g) - 1, judge.no_remat_peak(g)
            step = max(1, (hi - lo) // 5)
            for b in range(lo, hi + 1, step):
                best = brute.least_cost(g, b)
                sched = os.path.join(tmp, "s.json")
                p = subprocess.run([remat, "plan", path, "-b", str(b), "--json", "-o", sched],
                                   capture_output=True, text=True)
                runs += 1
                what = "%s at %d B (optimum %s)" % (os.path.basename(path), b, best)
                if best < 0:
                    nofit += 1
                    if p.returncode != 3:
                        print("FAIL %s: nothing fits, remat exit %d" % (what, p.returncode))
                        fails += 1
                    continue
                r = json.loads(p.stdout) if p.stdout else {}
                if p.returncode != 0 or abs(r["cost"] - best) > 1e-9 * best or \
                        r.get("optimal") is not True:
                    print("FAIL %s: exit %d, %s" % (what, p.returncode, p.stdout.strip()))
                    fails += 1
                    continue
                steps, _ = judge.load_schedule(sched)
                j = judge.replay(g, steps, b)
                if not j["feasible"] or abs(j["cost"] - best) > 1e-9 * best:
                    print("FAIL %s: the judge says %s" % (what, j))
                    fails += 1
                remat_runs += j["recomputes"] > 0
    print("%d budgets, %d where nothing fits, %d with recomputes, %d failed"
          % (runs, nofit, remat_runs, fails))
    if runs < 40 or nofit < 5 or remat_runs < 10:
        print("FAIL: too few cases of each kind to mean something")
        fails += 1
    return 1 if fails else 0


if __name__ == "__main__":
    sys.exit(main())
