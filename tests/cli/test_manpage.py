#!/usr/bin/python3
"""The man page (man/remat.1) and the bash completion cannot drift from the
program (issue 34).

Man page: it renders without warnings (`man -l`, `groff -ww`); every
command `remat --help` lists, every option each `remat COMMAND --help`
lists (the planners' options included, with their short forms), every
planner `remat planners` lists and every exit code in src/cli/cli.h
appear in it; the commands of its EXAMPLES run and exit 0 (from a folder
holding the source's graphs/ and examples/).

Completion: the file the build wrote is what `remat completion bash`
prints; sourced in bash and driven through COMP_WORDS / COMP_CWORD, it
completes `remat si` to simulate, `remat plan --pl` to --planner, `remat
plan x.json --planner ` to exactly the planners `remat planners` lists,
every command's options, file names for graph arguments and gen's
generators.

Without `man` the rendering is not checked: the other checks still run
and, when they pass, the test exits 77 (skipped) saying so.

Usage: test_manpage.py REMAT SOURCE_DIR COMPLETION_FILE
"""
import os
import re
import shutil
import subprocess
import sys
import tempfile

GUARD_S = 300


def run(args, **kw):
    return subprocess.run(args, capture_output=True, text=True, timeout=GUARD_S,
                          stdin=subprocess.DEVNULL, **kw)


def commands(remat):
    """The commands `remat --help` lists."""
    out = run([remat, "--help"]).stdout
    block = out.split("commands:\n", 1)[1].split("\n\n", 1)[0]
    return [line.split()[0] for line in block.splitlines() if line.strip()]


def options(remat, cmd):
    """(short or None, long, planner's) of every option `remat CMD --help`
    lists; planner's: listed under "options of planner"."""
    out = run([remat, cmd, "--help"]).stdout
    own, _, theirs = out.partition("\noptions of planner")
    pat = r"^  (?:-(\w), |    )--([\w-]+)"
    return ([(m.group(1), m.group(2), False) for m in re.finditer(pat, own, re.M)] +
            [(m.group(1), m.group(2), True) for m in re.finditer(pat, theirs, re.M)])


def planners(remat):
    return [line.split()[0] for line in run([remat, "planners"]).stdout.splitlines()]


def roff_to_text(src):
    """The page's text without rendering (used when man is missing)."""
    lines = []
    for line in src.splitlines():
        m = re.match(r"^\.([A-Z]{1,2})(?: (.*))?$", line)
        if line.startswith(".\\\""):
            continue
        if m:
            args = [a or b for a, b in re.findall(r'"([^"]*)"|(\S+)', m.group(2) or "")]
            # .BR, .IR, ...: alternating fonts, joined; .B, .I, .SS: words.
            sep = "" if len(m.group(1)) == 2 and m.group(1) not in ("SS", "SH", "TP", "PP",
                                                                     "EX", "EE", "TH") else " "
            line = sep.join(args)
            if m.group(1) == "SH":
                lines.append(line)
                continue
            if m.group(1) == "SS":
                lines.append("   " + line)
                continue
        elif line.startswith("."):
            continue
        lines.append("       " + line)  # indented as man indents the body
    s = "\n".join(lines)
    s = s.replace("\\-", "-").replace("\\&", "").replace("\\~", " ")
    s = re.sub(r"\\f[BIRP]", "", s)
    return re.sub(r"\\\(..", "", s)


def word(text, w):
    return re.search(r"(?<![\w-])" + re.escape(w) + r"(?![\w-])", text) is not None


def section(text, title, following):
    m = re.search(r"^" + title + r"\n(.*?)^" + following + r"\n", text, re.M | re.S)
    return m.group(1) if m else ""


def command_sections(text):
    """COMMANDS cut at each "remat NAME" heading: {NAME: its text}."""
    parts, cur = {}, None
    for line in section(text, "COMMANDS", "PLANNERS").splitlines():
        m = re.match(r"^ {0,3}remat (\S+)", line)
        if m:
            cur = m.group(1)
            parts.setdefault(cur, [])
        elif cur:
            parts[cur].append(line)
    return {k: "\n".join(v) for k, v in parts.items()}


def complete(script, words, cwd=None):
    """COMPREPLY of the completion function for words (the last one is being typed)."""
    driver = ('source "$1" || exit 1; shift; complete -p remat | grep -q -- "-F _remat" '
              '|| { echo "no complete -F _remat remat" >&2; exit 1; }; '
              'COMP_WORDS=("$@"); COMP_CWORD=$(($# - 1)); COMP_LINE="$*"; '
              'COMP_POINT=${#COMP_LINE}; COMPREPLY=(); _remat; '
              'for w in "${COMPREPLY[@]}"; do printf "%s\\n" "$w"; done')
    p = run(["bash", "--norc", "--noprofile", "-c", driver, "bash", script] + words, cwd=cwd)
    if p.returncode != 0 or p.stderr:
        return ["<bash failed: %s>" % (p.stderr.strip() or p.returncode)]
    return p.stdout.splitlines()


def main():
    remat, src, script = (os.path.abspath(a) for a in sys.argv[1:4])
    page = os.path.join(src, "man", "remat.1")
    failed = []

    def check(cond, what):
        if not cond:
            failed.append(what)
            print("FAIL " + what)
        return cond

    cmds = commands(remat)
    check(len(cmds) >= 8, "remat --help lists %d commands: %s" % (len(cmds), cmds))
    names = planners(remat)
    check(len(names) >= 10, "remat planners lists %d planners" % len(names))

    # --- The man page -----------------------------------------------------
    with open(page, encoding="utf-8") as f:
        roff = f.read()
    have_man = shutil.which("man") is not None and not os.environ.get("REMAT_TEST_NO_MAN")
    if have_man:
        env = dict(os.environ, MANWIDTH="200", LC_ALL="C.UTF-8", MAN_KEEP_FORMATTING="")
        env.pop("MANPAGER", None)
        env.pop("PAGER", None)
        p = run(["man", "-l", page], env=env)
        check(p.returncode == 0 and not p.stderr.strip(),
              "man -l man/remat.1: exit %d, %s" % (p.returncode, p.stderr.strip()))
        text = re.sub(r".\x08", "", p.stdout)
        text = text.replace("\u2212", "-").replace("\u2010", "-")
    else:
        print("man is not installed: the rendering is not checked")
        text = roff_to_text(roff)
    if shutil.which("groff"):
        p = run(["groff", "-man", "-Tutf8", "-ww", "-z", page])
        check(p.returncode == 0 and not p.stderr.strip(),
              "groff -ww warns: " + p.stderr.strip())

    sections = command_sections(text)
    popts = section(text, "PLANNER OPTIONS", "BUDGETS")
    for c in cmds:
        check(c in sections, "the man page's COMMANDS lack 'remat %s'" % c)
        opts = options(remat, c)
        check(any(lng == "help" for _, lng, _ in opts), "remat %s --help lists no --help" % c)
        for short, lng, theirs in opts:
            if lng == "help":
                continue
            where = popts if theirs else sections.get(c, "")
            if check(word(where, "--" + lng), "the man page lacks %s's --%s%s"
                     % (c, lng, " (PLANNER OPTIONS)" if theirs else "")) and short:
                check(re.search(r"-%s, --%s(?![\w-])" % (short, re.escape(lng)), where),
                      "the man page lacks %s's -%s, --%s" % (c, short, lng))
    listed = section(text, "PLANNERS", "PLANNER OPTIONS")
    for n in names:
        check(word(listed, n), "the man page's PLANNERS lack '%s'" % n)
    with open(os.path.join(src, "src", "cli", "cli.h"), encoding="utf-8") as f:
        codes = re.findall(r"CLI_EXIT_\w+ = (\d+)", f.read())
    check(len(codes) >= 6, "no exit codes found in src/cli/cli.h")
    status = section(text, "EXIT STATUS", "ENVIRONMENT")
    for code in codes:
        check(re.search(r"^\s+%s\s" % code, status, re.M),
              "the man page's EXIT STATUS lacks %s" % code)

    # The EXAMPLES, run as written.
    examples = []
    for block in re.findall(r"^\.EX\n(.*?)^\.EE\n", roff, re.M | re.S):
        examples += [line.replace("\\-", "-") for line in block.splitlines() if line.strip()]
    check(len(examples) >= 4, "the man page has %d examples" % len(examples))
    with tempfile.TemporaryDirectory() as tmp:
        os.mkdir(tmp + "/bin")
        os.symlink(remat, tmp + "/bin/remat")
        for d in ("graphs", "examples"):
            os.symlink(os.path.abspath(os.path.join(src, d)), os.path.join(tmp, d))
        env = dict(os.environ, PATH=tmp + "/bin:" + os.environ.get("PATH", "/usr/bin:/bin"))
        for line in examples:
            p = run(["bash", "-o", "pipefail", "-c", line], cwd=tmp, env=env)
            print("  example: %-70s exit %d" % (line, p.returncode))
            check(p.returncode == 0, "example '%s' exits %d: %s"
                  % (line, p.returncode, p.stderr.strip()[-300:]))

    # --- The completion ---------------------------------------------------
    p = run([remat, "completion", "bash"])
    check(p.returncode == 0, "remat completion bash exits %d" % p.returncode)
    with open(script, encoding="utf-8") as f:
        check(f.read() == p.stdout, "%s is not what 'remat completion bash' prints" % script)
    check(run([remat, "completion", "tcsh"]).returncode == 2,
          "remat completion tcsh is not a usage error")

    def expect(words, want, cwd=None):
        got = complete(script, words, cwd)
        check(got == want, "completing %s: %s, not %s" % (words, got, want))

    expect(["remat", "si"], ["simulate"])
    expect(["remat", "plan", "--pl"], ["--planner"])
    expect(["remat", "plan", "x.json", "--planner", ""], names)
    expect(["remat", "plan", "x.json", "-p", ""], names)
    expect(["remat", "plan", "x.json", "--planner", "=", ""], names)  # --planner=
    expect(["remat", "plan", "x.json", "--planner", "chen-"], ["chen-greedy"])
    got = complete(script, ["remat", ""])
    check(set(cmds) <= set(got), "completing 'remat ': %s lacks some of %s" % (got, cmds))
    for c in cmds:
        got = complete(script, ["remat", c, "--"])
        for _, lng, _ in options(remat, c):
            check("--" + lng in got, "completing 'remat %s --' lacks --%s" % (c, lng))
    got = complete(script, ["remat", "order", "g.json", "--method", ""])
    check("best" in got and "file" in got, "completing order --method: %s" % got)
    got = complete(script, ["remat", "bench", "g", "--planners", "auto,-ch"])
    check(got and all(w.startswith("auto,-ch") for w in got) and "auto,-chen" in got,
          "completing bench --planners auto,-ch: %s" % got)
    expect(["remat", "gen", ""], ["chain", "layered", "unet", "train"])
    expect(["remat", "planners", ""], [])
    expect(["remat", "plan", "g.json", "--budget", ""], [])
    with tempfile.TemporaryDirectory() as tmp:
        for n in ("graph1.json", "sched.json"):
            open(os.path.join(tmp, n), "w").close()
        expect(["remat", "plan", "gr"], ["graph1.json"], cwd=tmp)
        expect(["remat", "simulate", "graph1.json", "s"], ["sched.json"], cwd=tmp)
        expect(["remat", "plan", "-b", "60%", "gr"], ["graph1.json"], cwd=tmp)
        expect(["remat", "plan", "graph1.json", "-o", "s"], ["sched.json"], cwd=tmp)
        expect(["remat", "plan", "graph1.json", ""], [], cwd=tmp)  # one graph only

    if failed:
        print("%d failed" % len(failed))
        return 1
    if not have_man:
        print("skipped: man is not installed (apt-get install man-db groff-base); "
              "everything else passed")
        return 77
    print("man page and completion ok")
    return 0


if __name__ == "__main__":
    sys.exit(main())
