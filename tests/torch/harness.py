"""What the torch test scripts share: skipping without torch, pointing
remat_torch at the binary under test, and running named checks."""
import os
import sys
import time


def torch_or_skip(remat, root):
    """torch, with remat_torch importable from root and REMAT set to the
    binary under test; without torch, exit 77 (ctest: skipped) saying how
    to install it."""
    try:
        import torch
    except ImportError:
        print("torch is not installed for /usr/bin/python3: skipped (install it with "
              "scripts/bootstrap-torch.sh)")
        sys.exit(77)
    sys.path.insert(0, root)
    os.environ["REMAT"] = remat
    torch.set_num_threads(1)
    return torch


def run_checks(title, checks):
    """Run (name, fn) pairs, fn() -> list of failures; print each with its
    time, then a total line.  Returns the exit status (1 on any failure)."""
    passed = failed = 0
    for name, fn in checks:
        t0 = time.time()
        fails = fn()
        for f in fails:
            print("FAIL", f)
        print("%s %s (%.0f s)" % ("ok  " if not fails else "FAIL", name, time.time() - t0),
              flush=True)
        passed += not fails
        failed += bool(fails)
    print("%s: %d passed, %d failed" % (title, passed, failed))
    return 1 if failed else 0
