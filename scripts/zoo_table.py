#!/usr/bin/python3
"""Rewrite the provenance table of graphs/README.md from the "source" of
every graphs/*.json (between the <!-- zoo --> markers).
Usage: zoo_table.py DIR"""
import glob
import json
import os
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "tests", "zoo"))
import simref  # noqa: E402


def mib(b):
    return "%.1f" % (b / 2 ** 20)


def main():
    d = sys.argv[1]
    rows = ["| file | model | batch | input shape | nodes (fw/bw) | forward MiB | "
            "no-remat peak MiB | params MiB | torch |",
            "| --- | --- | --- | --- | --- | --- | --- | --- | --- |"]
    for path in sorted(glob.glob(os.path.join(d, "*.json"))):
        g = json.load(open(path))
        s = g["source"]
        nodes = g["nodes"]
        fw = sum(1 for n in nodes if n["kind"] in ("forward", "loss"))
        bw = sum(1 for n in nodes if n["kind"] == "backward")
        act = sum(n["mem"] for n in nodes if n["kind"] != "backward")
        rows.append("| `%s` | %s | %d | %s | %d (%d/%d) | %s | %s | %s | %s |" % (
            os.path.basename(path), s["model"], s["batch"],
            "x".join(str(x) for x in s.get("input_shape", [])), len(nodes), fw, bw,
            mib(act), mib(simref.no_remat_peak(g)), mib(s["params_bytes"]), s["torch"] +
            (", torchvision " + s["torchvision"] if "torchvision" in s else "")))
    readme = os.path.join(d, "README.md")
    text = open(readme).read()
    a, b = text.index("<!-- zoo -->"), text.index("<!-- /zoo -->")
    text = text[:a] + "<!-- zoo -->\n" + "\n".join(rows) + "\n" + text[b:]
    open(readme, "w").write(text)


if __name__ == "__main__":
    main()
