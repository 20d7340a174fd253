#!/usr/bin/env python3
"""Child processes die with remat (issue: killed remat left CBC solvers
running for an hour), and Ctrl-C keeps the best schedule (the first
SIGINT stops the search and remat finishes with its incumbent, written
with -o as usual; a second one aborts).  Starts `remat plan --planner checkmate` on a graph
whose MILP takes longer than the test waits, waits until CBC's child
process exists, sends the parent SIGTERM (as a job scheduler or a Python
subprocess timeout does), and requires every child to be gone within a
few seconds.  The same with SIGKILL.  Linux only (reads /proc).

Usage: test_processes.py REMAT SOURCE_DIR
"""
import os
import signal
import subprocess
import sys
import tempfile
import time


def children(pid):
    """Pids whose parent is pid (from /proc)."""
    out = []
    for d in os.listdir("/proc"):
        if not d.isdigit():
            continue
        try:
            with open("/proc/%s/stat" % d) as f:
                fields = f.read().rsplit(")", 1)[1].split()
        except OSError:
            continue
        if int(fields[1]) == pid:
            out.append(int(d))
    return out


def alive(pid):
    try:
        with open("/proc/%d/stat" % pid) as f:
            state = f.read().rsplit(")", 1)[1].split()[0]
    except OSError:
        return False
    return state != "Z"


def check(remat, graph, sig):
    p = subprocess.Popen([remat, "plan", graph, "--budget", "50%", "--planner",
                          "checkmate", "--time-limit", "120"],
                         stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    kids = []
    t0 = time.time()
    # Wait (generously: a loaded machine) for the warm start to end and
    # the solver's child to appear.
    while time.time() - t0 < 90 and p.poll() is None:
        kids = children(p.pid)
        if kids:
            break
        time.sleep(0.05)
    if p.poll() is not None:
        print("remat ended (exit %d) before a solver child appeared" % p.returncode)
        return False
    if not kids:
        p.kill()
        print("no solver child appeared within 90 s")
        return False
    time.sleep(0.3)
    os.kill(p.pid, sig)
    p.wait()
    t0 = time.time()
    while time.time() - t0 < 10 and any(alive(k) for k in kids):
        time.sleep(0.05)
    left = [k for k in kids if alive(k)]
    for k in left:
        os.kill(k, signal.SIGKILL)
    if left:
        print("after %s to remat, its children %s were still running" %
              (signal.Signals(sig).name, left))
        return False
    return True


def start_solve(remat, graph, extra=()):
    """remat plan --planner checkmate, once its solver child exists."""
    p = subprocess.Popen([remat, "plan", graph, "--budget", "50%", "--planner",
                          "checkmate", "--time-limit", "120"] + list(extra),
                         stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    t0 = time.time()
    while time.time() - t0 < 90 and p.poll() is None:
        if children(p.pid):
            return p
        time.sleep(0.05)
    return p


def check_interrupt(remat, graph, tmp, judge):
    out = os.path.join(tmp, "interrupted.json")
    p = start_solve(remat, graph, ["-o", out])
    if p.poll() is not None:
        print("remat ended (exit %d) before a solver child appeared" % p.returncode)
        return False
    time.sleep(0.3)
    os.kill(p.pid, signal.SIGINT)
    try:
        stdout, stderr = p.communicate(timeout=30)
    except subprocess.TimeoutExpired:
        p.kill()
        print("SIGINT did not stop the solve within 30 s")
        return False
    if p.returncode != 0 or "interrupted" not in stdout or not os.path.exists(out):
        print("after one SIGINT: exit %d, stdout %r, stderr %r, file %s" %
              (p.returncode, stdout, stderr, os.path.exists(out)))
        return False
    j = subprocess.run(["/usr/bin/python3", judge, graph, out, "--json"],
                       capture_output=True, text=True)
    if j.returncode != 3 and j.returncode != 0:
        print("the interrupted schedule is not valid: %s" % j.stdout)
        return False
    # Two: the second one aborts at once (killed by SIGINT, nothing written).
    out2 = os.path.join(tmp, "aborted.json")
    p = start_solve(remat, graph, ["-o", out2])
    time.sleep(0.3)
    os.kill(p.pid, signal.SIGINT)
    time.sleep(0.05)
    os.kill(p.pid, signal.SIGINT)
    try:
        p.communicate(timeout=30)
    except subprocess.TimeoutExpired:
        p.kill()
        print("two SIGINTs did not end remat within 30 s")
        return False
    if p.returncode == 0 and os.path.exists(out2):
        # The first stop may have finished before the second arrived.
        return True
    if p.returncode != -signal.SIGINT:
        print("after two SIGINTs: exit %d, file %s" % (p.returncode, os.path.exists(out2)))
        return False
    if os.path.exists(out2):
        # The second came after the first stop's schedule was renamed
        # into place: then the file must be whole and valid, never half.
        j = subprocess.run(["/usr/bin/python3", judge, graph, out2, "--json"],
                           capture_output=True, text=True)
        if j.returncode not in (0, 3):
            print("killed after writing, the schedule is not whole: %s" % j.stdout)
            return False
    if [n for n in os.listdir(tmp) if ".tmp." in n]:
        print("a temporary file was left behind: %s" % os.listdir(tmp))
        return False
    return True


def main():
    if not sys.platform.startswith("linux"):
        print("skipped: needs /proc")
        return 77
    remat, src = sys.argv[1], sys.argv[2]
    with tempfile.TemporaryDirectory() as tmp:
        fwd, graph = os.path.join(tmp, "l.json"), os.path.join(tmp, "t.json")
        subprocess.run([remat, "gen", "layered", "80", "--seed", "3", "-o", fwd], check=True)
        subprocess.run([remat, "gen", "train", fwd, "-o", graph], check=True)
        ok = all(check(remat, graph, s) for s in (signal.SIGTERM, signal.SIGKILL))
        ok = check_interrupt(remat, graph, tmp,
                             os.path.join(src, "tests", "judge", "judge.py")) and ok
    print("processes: %s" % ("ok" if ok else "FAILED"))
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
