#!/usr/bin/env python3
"""What output and input paths mean (docs/FORMATS.md, "Files"): `-` is
standard input or output, a symbolic link is written through and stays a
link, a FIFO or a character device is written in place and never
replaced, a directory is refused, a replaced file keeps its mode, and a
write that fails (full disk) or is interrupted (SIGTERM, SIGINT) leaves
the previous file intact and no temporary beside it.

Usage: test_files.py REMAT SOURCE_DIR [WRITE_SHIM.so]
(without the shim, the fault cases are skipped: sanitizer builds cannot
preload it.)
"""
import json
import os
import signal
import stat
import subprocess
import sys
import tempfile
import threading
import unittest

REMAT = SHIM = ROOT = None


def run(*args, stdin=None, env=None, cwd=None):
    e = dict(os.environ)
    e.update(env or {})
    return subprocess.run([REMAT] + list(args), input=stdin, capture_output=True,
                          env=e, cwd=cwd, timeout=120)


class Files(unittest.TestCase):
    def setUp(self):
        self.tmp = tempfile.TemporaryDirectory()
        self.d = self.tmp.name
        self.graph = os.path.join(ROOT, "examples", "train-chain4.json")
        with open(self.graph, "rb") as f:
            self.graph_bytes = f.read()

    def tearDown(self):
        self.tmp.cleanup()

    def p(self, *names):
        return os.path.join(self.d, *names)

    def leftovers(self):
        return [n for n in os.listdir(self.d) if ".tmp." in n]

    # -- standard input and output ----------------------------------------
    def test_output_dash_is_stdout(self):
        r = run("plan", self.graph, "-b", "100%", "-o", "-", "-q")
        self.assertEqual(r.returncode, 0, r.stderr)
        sched = json.loads(r.stdout)          # nothing else on stdout
        self.assertEqual(sched["format"], "remat-schedule")
        self.assertIn(b"peak", r.stderr)      # the summary moved to stderr
        self.assertFalse(os.path.exists("-"))

    def test_gen_and_convert_dash(self):
        r = run("gen", "chain", "3", "-o", "-")
        self.assertEqual(r.returncode, 0, r.stderr)
        self.assertEqual(json.loads(r.stdout)["format"], "remat-graph")
        r2 = run("convert", "-", "-o", "-", stdin=r.stdout)
        self.assertEqual(r2.returncode, 0, r2.stderr)
        self.assertEqual(json.loads(r2.stdout)["nodes"], json.loads(r.stdout)["nodes"])

    def test_input_dash_is_stdin(self):
        by_path = run("info", self.graph, "--json")
        by_stdin = run("info", "-", "--json", stdin=self.graph_bytes)
        self.assertEqual(by_stdin.returncode, 0, by_stdin.stderr)
        self.assertEqual(json.loads(by_stdin.stdout)["no_remat_peak"],
                         json.loads(by_path.stdout)["no_remat_peak"])
        r = run("plan", "-", "-b", "100%", "--json", stdin=self.graph_bytes)
        self.assertEqual(r.returncode, 0, r.stderr)
        self.assertTrue(json.loads(r.stdout)["valid"])

    def test_schedule_from_stdin(self):
        sched = run("plan", self.graph, "-b", "100%", "-o", "-", "-q").stdout
        r = run("simulate", self.graph, "-", "--json", stdin=sched)
        self.assertEqual(r.returncode, 0, r.stderr)
        self.assertTrue(json.loads(r.stdout)["valid"])

    def test_stdin_errors_name_stdin(self):
        r = run("info", "-", stdin=b'{"format": "remat-graph", "version": 1,\n "nodes": [}')
        self.assertEqual(r.returncode, 1)
        self.assertIn(b"<stdin>:2:", r.stderr)
        self.assertEqual(r.stderr.count(b"\n"), 1)

    def test_two_claims_on_stdout_or_stdin(self):
        r = run("plan", self.graph, "-b", "100%", "-o", "-", "--json")
        self.assertEqual(r.returncode, 2)
        self.assertEqual(r.stdout, b"")
        r = run("simulate", "-", "-", stdin=b"")
        self.assertEqual(r.returncode, 2)

    # -- links, devices, FIFOs, directories --------------------------------
    def test_symlink_written_through(self):
        target = self.p("target.json")
        with open(target, "w") as f:
            f.write("old")
        os.symlink("target.json", self.p("link"))
        r = run("plan", self.graph, "-b", "100%", "-o", self.p("link"), "-q")
        self.assertEqual(r.returncode, 0, r.stderr)
        self.assertTrue(os.path.islink(self.p("link")))
        with open(target) as f:
            self.assertEqual(json.load(f)["format"], "remat-schedule")
        self.assertEqual(self.leftovers(), [])

    def test_relative_link_in_another_directory(self):
        os.mkdir(self.p("sub"))
        os.symlink("../out.json", self.p("sub", "rel"))  # dangling: creates it
        r = run("gen", "chain", "2", "-o", self.p("sub", "rel"))
        self.assertEqual(r.returncode, 0, r.stderr)
        self.assertTrue(os.path.islink(self.p("sub", "rel")))
        with open(self.p("out.json")) as f:
            self.assertEqual(json.load(f)["format"], "remat-graph")

    def test_link_loop_refused(self):
        os.symlink("b", self.p("a"))
        os.symlink("a", self.p("b"))
        r = run("gen", "chain", "2", "-o", self.p("a"))
        self.assertEqual(r.returncode, 4)
        self.assertIn(b"cannot write", r.stderr)
        self.assertTrue(os.path.islink(self.p("a")))

    def test_dev_null_not_replaced(self):
        r = run("plan", self.graph, "-b", "100%", "-o", "/dev/null", "-q")
        self.assertEqual(r.returncode, 0, r.stderr)
        self.assertTrue(stat.S_ISCHR(os.stat("/dev/null").st_mode))

    def test_fifo_written_in_place(self):
        fifo = self.p("fifo")
        os.mkfifo(fifo)
        got = {}

        def reader():
            with open(fifo, "rb") as f:
                got["data"] = f.read()
        t = threading.Thread(target=reader)
        t.start()
        r = run("plan", self.graph, "-b", "100%", "-o", fifo, "-q")
        t.join(60)
        self.assertEqual(r.returncode, 0, r.stderr)
        self.assertTrue(stat.S_ISFIFO(os.stat(fifo).st_mode))
        self.assertEqual(json.loads(got["data"])["format"], "remat-schedule")

    def test_directory_refused(self):
        os.mkdir(self.p("dir"))
        r = run("gen", "chain", "2", "-o", self.p("dir"))
        self.assertEqual(r.returncode, 4)
        self.assertIn(b"is a directory", r.stderr)
        self.assertTrue(os.path.isdir(self.p("dir")))
        self.assertEqual(self.leftovers(), [])

    def test_mode_kept(self):
        out = self.p("g.json")
        with open(out, "w") as f:
            f.write("old")
        os.chmod(out, 0o640)
        r = run("gen", "chain", "2", "-o", out)
        self.assertEqual(r.returncode, 0, r.stderr)
        self.assertEqual(stat.S_IMODE(os.stat(out).st_mode), 0o640)

    # -- failures mid-write (LD_PRELOAD shim) ------------------------------
    def faulty(self, mode):
        if not SHIM:
            self.skipTest("no write shim (sanitizer build)")
        out = self.p("plan.json")
        with open(out, "w") as f:
            f.write("previous")
        r = run("plan", self.graph, "-b", "100%", "-o", out, "-q",
                env={"LD_PRELOAD": SHIM, "REMAT_SHIM": mode})
        with open(out) as f:
            self.assertEqual(f.read(), "previous")
        self.assertEqual(self.leftovers(), [])
        return r

    def test_disk_full_keeps_previous(self):
        r = self.faulty("enospc")
        self.assertEqual(r.returncode, 4)
        self.assertIn(b"No space left on device", r.stderr)

    def test_sigterm_mid_write_cleans_up(self):
        r = self.faulty("term")
        self.assertEqual(r.returncode, -signal.SIGTERM)

    def test_sigint_mid_write_cleans_up(self):
        r = self.faulty("int")
        self.assertEqual(r.returncode, -signal.SIGINT)


if __name__ == "__main__":
    REMAT, ROOT = sys.argv[1], sys.argv[2]
    SHIM = sys.argv[3] if len(sys.argv) > 3 else None
    unittest.main(argv=sys.argv[:1], verbosity=1)
