#!/usr/bin/python3
"""Every graph of the model zoo (graphs/*.json) is small enough for the
repository, has its provenance in graphs/README.md, loads in remat with the
figures (no-remat peak, lower bound, nodes, edges, ...) that the
independent judge tests/judge/judge.py computes, and the 'none' planner
reproduces that no-remat peak.

    check_zoo.py PATH/TO/remat PROJECT_ROOT
"""
import glob
import json
import os
import subprocess
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))),
                                "judge"))
import judge  # noqa: E402

MAX_BYTES = 5 * 1024 * 1024
REQUIRED = ["resnet18", "resnet101", "vgg11", "vgg19", "mobilenet_v3_large", "densenet169",
            "regnet_x_3_2gf", "convnext_tiny", "vit_b_16", "gpt2_small", "unet", "lstm64"]


def run(remat, *args):
    p = subprocess.run([remat] + list(args), capture_output=True, text=True, timeout=600)
    return p.returncode, p.stdout, p.stderr


def check(remat, path, readme):
    name = os.path.basename(path)
    fails = []
    if os.path.getsize(path) > MAX_BYTES:
        fails.append("%d bytes, more than %d" % (os.path.getsize(path), MAX_BYTES))
    if "`%s`" % name not in readme:
        fails.append("no provenance row in graphs/README.md")
    doc = judge.read_json(path)
    src = doc.get("source", {})
    for k in ("model", "batch", "torch", "params_bytes"):
        if k not in src:
            fails.append("'source' lacks '%s'" % k)
    try:
        g = judge.graph_from_json(doc, path)
    except judge.GraphError as e:
        return fails + ["the judge rejects it: %s" % e]
    want = judge.graph_figures(g)
    peak = want["no_remat_peak"]
    rc, out, err = run(remat, "info", path, "--json")
    if rc != 0:
        return fails + ["remat info: exit %d: %s" % (rc, err.strip())]
    info = json.loads(out)
    if not info["training"]:
        fails.append("remat info: not a training graph")
    for k, v in want.items():
        got = info.get(k)
        if k == "baseline_cost" and isinstance(got, (int, float)):
            if abs(got - v) <= 1e-9 * max(abs(got), abs(v)):   # printed with 12 digits
                continue
        if got != v:
            fails.append("remat info: %s %r, judge %r" % (k, info.get(k), v))
    rc, out, err = run(remat, "plan", path, "--planner", "none", "--budget", str(peak), "--json")
    res = json.loads(out) if out.strip() else {}
    if rc != 0 or res.get("peak_mem") != peak or res.get("recomputes") != 0:
        fails.append("none at %d: exit %d, %s" % (peak, rc, out.strip()[:200]))
    rc, out, err = run(remat, "plan", path, "--planner", "none", "--budget", str(peak - 1), "--json")
    if rc != 3:
        fails.append("none at %d (one byte short): exit %d, expected 3" % (peak - 1, rc))
    return fails


def main():
    remat, root = sys.argv[1], sys.argv[2]
    paths = sorted(glob.glob(os.path.join(root, "graphs", "*.json")))
    readme = open(os.path.join(root, "graphs", "README.md")).read()
    passed = failed = 0
    have = {os.path.basename(p)[:-5] for p in paths}
    for m in REQUIRED:
        if m not in have:
            print("FAIL graphs/%s.json is missing" % m)
            failed += 1
    for p in paths:
        fails = check(remat, p, readme)
        for f in fails:
            print("FAIL %s: %s" % (os.path.basename(p), f))
        if not fails:
            print("ok   %s" % os.path.basename(p))
        passed += not fails
        failed += bool(fails)
    print("zoo: %d passed, %d failed" % (passed, failed))
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
