#!/usr/bin/env python3
"""Keep the README and docs/ true: run the commands their code blocks show,
and follow their links.

README.md first, then every docs/*.md in name order.  Every line of a
fenced block that starts with `build/remat`, `bench/` or
`/usr/bin/python3 tests/judge/` (one line, no continuation) is run, in
the order the README gives them, in one scratch directory that sees the
repository's folders (a copy of docs/, which it writes into; so `-o
chain8.json` lands there and a later line
can read it), with `build/remat` the binary under test. Each must exit 0.
Lines that need PyTorch or an exported model (their input comes from a
`remat_torch export` line), long sweeps (`stress.py` without --quick is
a benchmark; so is a bench/fuzz.sh campaign) and usage synopses
(upper-case placeholders) are skipped and counted.

Every relative link of those pages, and of bench/RESULTS.md and
bench/results/*.md, must name a file that exists, and a #fragment a
heading of that page (GitHub's anchors: lower case, punctuation dropped,
spaces to hyphens).

Usage: test_readme.py REMAT SOURCE_DIR
"""
import os
import re
import shlex
import shutil
import subprocess
import sys
import tempfile

RUN = re.compile(r"^(build/remat |bench/\S+\.(sh|py) |/usr/bin/python3 tests/judge/)")
NEEDS_TORCH = ("resnet18.json", "mymodel.json", "gpt.json", "gpt.schedule.json", "llama7b.json.gz")


def commands(readme):
    text = open(readme, encoding="utf-8").read()
    for block in re.findall(r"```[a-z]*\n(.*?)```", text, re.S):
        lines = block.split("\n")
        for i, line in enumerate(lines):
            line = line.strip()
            if not RUN.match(line):
                continue
            if line.endswith("\\"):
                yield None, line, "continued on the next line"
                continue
            cmd = line.split("  #")[0].split(" # ")[0].strip()
            if re.search(r"\b[A-Z]{2,}\b|\[|\|", cmd):
                yield None, line, "a synopsis"
            elif any(t in shlex.split(cmd) for t in NEEDS_TORCH):
                yield None, line, "needs a model exported with PyTorch"
            elif "update-baseline" in cmd or "results.sh" in cmd:
                yield None, line, "rewrites committed benchmark data"
            elif "fuzz.sh" in cmd:
                yield None, line, "a fuzzing campaign (minutes per target)"
            elif " parts" in cmd:
                yield None, line, "needs the cluster jobs run first"
            else:
                yield cmd, line, None


LINK = re.compile(r"\]\(([^)\s]+)\)")


def anchors(path):
    """The #fragments GitHub gives the headings of a markdown file."""
    out, block = set(), False
    for line in open(path, encoding="utf-8"):
        if line.startswith("```"):
            block = not block
        elif not block and line.startswith("#"):
            h = line.lstrip("#").strip().lower().replace("`", "")
            out.add(re.sub(r"[^\w\- ]", "", h).replace(" ", "-"))
    return out


def broken_links(path):
    """Relative links in path that name no file, or no heading."""
    bad, block = [], False
    for line in open(path, encoding="utf-8"):
        if line.startswith("```"):
            block = not block
            continue
        if block:
            continue
        for target in LINK.findall(line):
            if re.match(r"[a-z]+:", target):
                continue
            file, _, frag = target.partition("#")
            dest = os.path.normpath(os.path.join(os.path.dirname(path), file)) if file else path
            if not os.path.exists(dest):
                bad.append("%s: %s: no such file" % (path, target))
            elif frag and dest.endswith(".md") and frag not in anchors(dest):
                bad.append("%s: %s: no such heading" % (path, target))
    return bad


def pages(root):
    docs = os.path.join(root, "docs")
    return [os.path.join(root, "README.md")] + sorted(
        os.path.join(docs, f) for f in os.listdir(docs) if f.endswith(".md"))


def main():
    remat, root = os.path.abspath(sys.argv[1]), os.path.abspath(sys.argv[2])
    ran = failed = 0
    skipped = {}
    with tempfile.TemporaryDirectory() as tmp:
        for name in os.listdir(root):
            if name == "docs":  # the README writes into it: a copy
                shutil.copytree(os.path.join(root, name), os.path.join(tmp, name))
            elif name != "build":
                os.symlink(os.path.join(root, name), os.path.join(tmp, name))
        os.mkdir(os.path.join(tmp, "build"))
        os.symlink(remat, os.path.join(tmp, "build", "remat"))
        for cmd, line, why in (c for page in pages(root) for c in commands(page)):
            if cmd is None:
                skipped[why] = skipped.get(why, 0) + 1
                continue
            argv = shlex.split(cmd)
            p = subprocess.run(argv, cwd=tmp, capture_output=True, text=True, timeout=300)
            ran += 1
            if p.returncode != 0:
                failed += 1
                print("FAIL (exit %d) %s\n  %s" % (p.returncode, line,
                                                  (p.stderr or p.stdout).strip()[-400:]))
            else:
                print("ok   %s" % cmd)
    results = os.path.join(root, "bench", "results")
    linked = pages(root) + [os.path.join(root, "bench", "RESULTS.md")] + (
        sorted(os.path.join(results, f) for f in os.listdir(results) if f.endswith(".md"))
        if os.path.isdir(results) else [])
    for page in linked:
        for b in broken_links(page):
            failed += 1
            print("FAIL link %s" % os.path.relpath(b, root) if b.startswith(root) else "FAIL link " + b)
    print("readme: %d commands run, %d failed; skipped: %s" %
          (ran, failed, ", ".join("%d %s" % (n, w) for w, n in sorted(skipped.items()))))
    return 1 if failed or ran < 10 else 0


if __name__ == "__main__":
    sys.exit(main())
