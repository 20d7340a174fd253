#!/usr/bin/python3
"""End-to-end tests of the remat binary: data-driven cases in cases.json.

    run_cli_tests.py PATH/TO/remat PROJECT_ROOT

Each case runs `remat ARGS...` (with {root} replaced by the project root and
{tmp} by a fresh temporary directory) and checks the exit code and, where
given, exact stdout/stderr, substrings of them, JSON fields of stdout, and
files that must or must not exist afterwards.
"""
import json
import os
import subprocess
import sys
import tempfile


def strict_constant(name):
    raise ValueError("%s is not JSON" % name)


def main():
    remat, root = sys.argv[1], sys.argv[2]
    here = os.path.dirname(os.path.abspath(__file__))
    cases = json.load(open(os.path.join(here, "cases.json")))
    failed = 0
    for c in cases:
        with tempfile.TemporaryDirectory() as tmp:
            def sub(s):
                return s.replace("{root}", root).replace("{tmp}", tmp)
            args = [remat] + [sub(a) for a in c["args"]]
            p = subprocess.run(args, capture_output=True, timeout=120,
                               stdin=subprocess.DEVNULL, cwd=root)
            why = []
            # Everything remat prints is UTF-8 (RFC 8259 for the JSON).
            for stream in ("stdout", "stderr"):
                raw = getattr(p, stream)
                try:
                    setattr(p, stream, raw.decode("utf-8"))
                except UnicodeDecodeError as e:
                    setattr(p, stream, raw.decode("utf-8", "replace"))
                    why.append("%s is not UTF-8: %s" % (stream, e))
            # Every --json output parses with a strict parser: UTF-8, no
            # NaN or Infinity, one value.
            if "--json" in c["args"] and p.stdout.strip():
                try:
                    json.loads(p.stdout, parse_constant=strict_constant)
                except ValueError as e:
                    why.append("--json stdout is not strict JSON: %s" % e)
            if p.returncode != c.get("exit", 0):
                why.append("exit %d, expected %d" % (p.returncode, c.get("exit", 0)))
            for stream, text in (("stdout", p.stdout), ("stderr", p.stderr)):
                if stream + "_exact" in c and text != sub(c[stream + "_exact"]):
                    why.append("%s is %r, expected %r" % (stream, text, sub(c[stream + "_exact"])))
                for s in c.get(stream + "_has", []):
                    if sub(s) not in text:
                        why.append("%s lacks %r" % (stream, sub(s)))
                for s in c.get(stream + "_lacks", []):
                    if sub(s) in text:
                        why.append("%s has %r" % (stream, sub(s)))
            if "json" in c:
                try:
                    got = json.loads(p.stdout)
                except ValueError:
                    got = None
                    why.append("stdout is not JSON: %r" % p.stdout[:200])
                for k, v in (c["json"] or {}).items():
                    v = sub(v) if isinstance(v, str) else v
                    if got is not None and got.get(k, "<missing>") != v:
                        why.append("json %s = %r, expected %r" % (k, got.get(k, "<missing>"), v))
            for f in c.get("files_exist", []):
                if not os.path.exists(sub(f)):
                    why.append("file %s was not written" % f)
            for f in c.get("files_absent", []):
                if os.path.exists(sub(f)):
                    why.append("file %s exists" % f)
            if c.get("no_tmp_leftovers") and any(".tmp." in n for n in os.listdir(tmp)):
                why.append("temporary files left behind: %s" % os.listdir(tmp))
            if "then" in c and not why:
                q = subprocess.run([remat] + [sub(a) for a in c["then"]["args"]],
                                   capture_output=True, text=True, timeout=120, cwd=root)
                if q.returncode != c["then"].get("exit", 0):
                    why.append("follow-up exit %d: %s" % (q.returncode, q.stderr.strip()))
                elif "json" in c["then"]:
                    got = json.loads(q.stdout)
                    for k, v in c["then"]["json"].items():
                        if got.get(k) != v:
                            why.append("follow-up json %s = %r, expected %r" % (k, got.get(k), v))
        if why:
            failed += 1
            print("FAIL %s: %s" % (c["name"], "; ".join(why)))
            print("  stdout: %r\n  stderr: %r" % (p.stdout[:500], p.stderr[:500]))
        else:
            print("ok   %s" % c["name"])
    print("cli: %d cases, %d failed" % (len(cases), failed))
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
