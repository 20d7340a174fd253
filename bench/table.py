#!/usr/bin/python3
"""Markdown tables from `remat bench` results (CSV or JSON, from `-o`).

    bench/table.py [options] [LABEL=]RESULTS...

One table per graph, a row per budget and a column per planner by default;
`--rows graph` makes one table over every graph.  A LABEL names the runs of
its file (say `dtr lru` for `remat bench ... --planners dtr --heuristic
lru`): bench rows do not record planner options, so runs of one planner
with different options are told apart by the file they were written to.
Without a label a run is named by its planner.  When the same label,
graph and budget appear more than once (files of repeated runs), the
fastest run that fit is kept, or a run that did not fit.  Budgets below a
graph's memory lower bound, where no schedule exists, are left out.

Cells are Python format strings over the row's fields (`overhead`,
`time_s`, `recomputes`, `peak`, `cost`, ...) plus `overhead_pct` (overhead
in percent); a run that did not fit shows `--nofit`, a run that failed its
status (timeout, crash, error).  Budget rows and columns are named by their
text (`80%`), a byte budget equal to the lower bound as `P% (lb)`.

Used by bench/dynamic_sweep.sh and bench/dynamic_scale.sh; standard library
only.  `remat bench --merge` prints the same runs one per line.
"""
import argparse
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from results import fits, load  # noqa: E402


def budget_name(r):
    spec = r["budget_spec"]
    if spec.endswith("%") or r["budget"] != r["lower_bound"]:
        return spec
    return "%.1f%% (lb)" % r["budget_pct"]


def budget_order(r):
    # Largest first, by the percentage asked for (budgets that round to the
    # same bytes keep their order); a percentage before an equal byte count.
    spec = r["budget_spec"]
    pct = float(spec[:-1]) if spec.endswith("%") else r["budget_pct"]
    return (-pct, not spec.endswith("%"), spec)


def read(args):
    """Runs keyed by (label, file, budget text), duplicates resolved."""
    runs, labels = {}, []
    for a in args:
        label, path = a.split("=", 1) if "=" in a and not os.path.exists(a) else (None, a)
        for r in load(path):
            for k in ("recomputes", "cost"):
                if isinstance(r.get(k), str):
                    r[k] = int(float(r[k])) if r[k] else None
            if r["lower_bound"] is not None and r["budget"] < r["lower_bound"]:
                continue
            lab = label or r["planner"]
            if lab not in labels:
                labels.append(lab)
            key = (lab, r["file"], r["budget_spec"])
            old = runs.get(key)
            if old is None or (fits(old) and (not fits(r) or r["time_s"] < old["time_s"])):
                runs[key] = r
    return runs, labels


def cell(r, fmt, nofit):
    if r is None:
        return "n/a"
    if not fits(r):
        return nofit if r["status"] in ("ok", "nofit") else r["status"]
    return fmt.format(overhead_pct=100.0 * r["overhead"], **r)


def table(runs, keys, rows, cols, a):
    """keys: the runs of this table; rows/cols: 'label', 'budget' or 'graph'."""
    def name(kind, r):
        if kind == "label":
            return r["_label"]
        if kind == "budget":
            return budget_name(r)
        return a.row.format(**r)

    def order(kind, r):
        if kind == "budget":
            return budget_order(r)
        if kind == "label":
            return (a._labels.index(r["_label"]),)
        return (r["nodes"], r["file"])
    row_names, col_names, at = {}, {}, {}
    for k in keys:
        r = dict(runs[k], _label=k[0])
        rn, cn = name(rows, r), name(cols, r)
        row_names.setdefault(rn, order(rows, r))
        col_names.setdefault(cn, order(cols, r))
        at[(rn, cn)] = runs[k]
    rs = sorted(row_names, key=row_names.get)
    cs = sorted(col_names, key=col_names.get)
    corner = a.corner if a.corner is not None else rows
    width = corner.count(" | ") + 1
    out = ["| %s | %s |" % (corner, " | ".join(a.col.format(c) for c in cs)),
           "| --- |" + " ---: |" * (width - 1 + len(cs))]
    for rn in rs:
        out.append("| %s | %s |" % (rn, " | ".join(cell(at.get((rn, c)), a.cell, a.nofit)
                                                  for c in cs)))
    return "\n".join(out) + "\n"


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0],
                                 formatter_class=argparse.RawDescriptionHelpFormatter,
                                 epilog=__doc__.split("\n\n", 2)[2])
    ap.add_argument("results", nargs="+", metavar="[LABEL=]RESULTS")
    ap.add_argument("--rows", choices=["budget", "label", "graph"], default="budget")
    ap.add_argument("--cols", choices=["label", "budget"], default="label")
    ap.add_argument("--cell", default="{overhead_pct:.1f}", help="cell format (default %(default)s)")
    ap.add_argument("--nofit", default="-", help="cell of a run that did not fit (default %(default)s)")
    ap.add_argument("--title", default="#### {graph} (`{file}`)",
                    help="format printed before each graph's table (default %(default)s; "
                    "'' for none): graph, file, base, nodes, no_remat_peak, lower_bound, "
                    "lb_pct and the first run's other fields")
    ap.add_argument("--corner", help="first header cell (default: the rows' name)")
    ap.add_argument("--col", default="{}", help="column header format, {} the column")
    ap.add_argument("--row", default="{graph}", help="row name format for --rows graph")
    a = ap.parse_args()
    if a.rows == a.cols:
        ap.error("--rows and --cols must differ")
    runs, a._labels = read(a.results)
    if not runs:
        sys.exit("table.py: no runs in %s" % " ".join(a.results))
    if a.rows == "graph":
        groups = [sorted(runs)]
    else:
        files = []
        for k in runs:
            if k[1] not in files:
                files.append(k[1])
        groups = [[k for k in runs if k[1] == f] for f in files]
    blocks = []
    for keys in groups:
        text = table(runs, keys, a.rows, a.cols, a)
        if a.title and a.rows != "graph":
            r = runs[keys[0]]
            nrp, lb = r["no_remat_peak"], r["lower_bound"]
            text = a.title.format(base=os.path.basename(r["file"]),
                                  lb_pct=100.0 * lb / nrp if nrp else 0, **r) + "\n\n" + text
        blocks.append(text)
    sys.stdout.write("\n".join(blocks))
    return 0


if __name__ == "__main__":
    sys.exit(main())
