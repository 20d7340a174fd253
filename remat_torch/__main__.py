"""python3 -m remat_torch COMMAND [ARGS...]: run one of the package's
commands.  Each command is a module with main(argv, prog) -> exit code."""
import importlib
import sys

from remat_torch import import_torch

# name -> (module, one-line description)
COMMANDS = {
    "export": ("remat_torch.export",
               "export one training step of a PyTorch model as a remat-graph"),
    "run": ("remat_torch.run",
            "execute a remat-schedule on a joint graph (export --joint)"),
    "check": ("remat_torch.check",
              "export, plan, execute and compare a model's training step with PyTorch"),
}

USAGE = "usage: python3 -m remat_torch COMMAND [ARGS...]   (COMMAND --help for its options)"


def main(argv=None):
    argv = sys.argv[1:] if argv is None else argv
    if import_torch() is None:  # every command needs it
        return 1
    if not argv or argv[0] in ("-h", "--help"):
        out = sys.stdout if argv else sys.stderr
        print(USAGE + "\n\ncommands:", file=out)
        for name, (_, text) in COMMANDS.items():
            print("  %-10s %s" % (name, text), file=out)
        return 0 if argv else 2
    if argv[0] not in COMMANDS:
        print("remat_torch: unknown command '%s' (commands: %s)"
              % (argv[0], ", ".join(COMMANDS)), file=sys.stderr)
        return 2
    module = importlib.import_module(COMMANDS[argv[0]][0])
    return module.main(argv[1:], prog="python3 -m remat_torch " + argv[0])


if __name__ == "__main__":
    sys.exit(main())
