"""A schedule compiled to straight-line Python (issue 29).

The executor (remat_torch/executor.py) walks the schedule step by step,
resolving every reference and counting every storage as it goes; that is
what `run` and `check` need, and it costs Python time per node, which on a
GPU (where kernels run asynchronously) is all that shows.  Program turns a
checked schedule into Python source once, as torch.fx turns a graph into
code: one statement per computation (operators resolved, views derived
inline, constants bound once), `del` for every free, and nothing counted.

The program is cut into segments at given steps (wrap() cuts where the
backward begins): segment k takes what was resident at its start and
returns what is resident at its end, so that the forward part runs when
the module is called and the rest when autograd reaches its outputs.  It
does what the executor's Runner does, decided once here instead of at
every step: a write into a parameter or buffer goes to the real tensor on
the node's first computation and to a scratch copy on later ones; a buffer
something reads without writing is snapshotted just before its first
write; random nodes draw through `rng` (a joint.Rng: "global" or "seeded"
policy).  tests/torch/test_wrap_torch.py checks it against the executor
and against eager PyTorch.
"""
import math

from remat_torch.joint import (GRAD_OUTPUT_OP, JointError, decode_const, read_mutated,
                               ref_nodes, resolve_op, written_args, callable_of)

try:
    import torch
except ImportError:
    torch = None


def _literal(x):
    """Python source for a JSON constant, or None when it needs a name."""
    if x is None or isinstance(x, (bool, int, str)):
        return repr(x)
    if isinstance(x, float) and math.isfinite(x):
        return repr(x)
    if isinstance(x, list):
        parts = [_literal(y) for y in x]
        return None if any(p is None for p in parts) else "[" + ", ".join(parts) + "]"
    return None


class Program:
    """Straight-line Python for the steps of a checked schedule (a Plan's
    explicit steps), cut at `cuts`.  segments[k](P, B, X, G, L, rng)
    runs segment k: P and B the parameters and buffers (in J.params and
    J.buffers order), X the input nodes' tensors (J.inputs order), G the
    output gradients (Joint.gouts), L what the previous segment returned.
    Every segment but the last returns its resident values (a list, which
    the next segment empties once it has taken them); the last returns
    (outputs, loss, grads, input_grads).  epilogue_at: the segment after
    which the epilogue runs (default: the last); outs_at: the segment that
    returns the outputs (default: the last).

    release: nodes someone else holds, whom the program lets go after their
    last read (once the outputs are returned) although the schedule keeps
    them to the end: a wrapped module's outputs (the caller holds them, or
    has dropped them: then they go, as in eager) and output gradients
    (autograd holds them through the backward)."""

    def __init__(self, J, plan, cuts=(), epilogue_at=None, outs_at=None, release=()):
        steps = plan.steps
        last = {}
        for i, (op, u) in enumerate(steps):
            if op == "compute":
                for w in J.byid[u].inputs:
                    last[w] = i
        # what the last segment returns is read at its end
        for r in [J.loss] + list(J.grads) + list(J.input_grads):
            if r is not None:
                for w in ref_nodes(r, []):
                    last[w] = len(steps)
        # Only what the schedule computes once and never frees (vjp graphs
        # mark outputs and output gradients "recompute": false).
        seen, freed = set(), set()
        for op, u in steps:
            if op == "free" or u in seen:
                freed.add(u)
            seen.add(u)
        release = set(release) - freed
        dropped = set()
        self.J = J
        self.source = []
        self.globals = {"torch": torch}
        self._ops, self._consts = {}, {}
        index = {n.id: i for i, n in enumerate(J.nodes + J.epilogue)}
        self.index = index
        self.pidx = {nm: i for i, (nm, _, _) in enumerate(J.params)}
        self.bidx = {nm: i for i, (nm, _, _) in enumerate(J.buffers)}
        self.to_snap = read_mutated(J, lambda name, nid: self._op(name, nid)[0])
        self.snapped, self.scratch, self.ran = set(), set(), set()
        bounds = [0] + list(cuts) + [len(steps)]
        nseg = len(bounds) - 1
        epilogue_at = nseg - 1 if epilogue_at is None else epilogue_at
        outs_at = nseg - 1 if outs_at is None else outs_at
        resident = [n.id for n in J.nodes if n.kind == "input"]
        self.segments = []
        for k in range(nseg):
            lines = []
            live_in = list(resident)
            state_in = sorted(self.snapped) + sorted(self.scratch)
            if k == 0:
                for j, nid in enumerate(J.inputs):
                    lines.append("%s = X[%d]" % (self._var(nid), j))
                for nid in J.consts:
                    lines.append("%s = %s" % (self._var(nid), self._const_name(J.consts[nid])))
                for nid in plan.pre_free:
                    lines.append("del " + self._var(nid))
                    resident.remove(nid)
                live_in = list(resident)
            elif live_in or state_in:
                names = [self._var_names(v) for v in live_in]
                flat = [x for ns in names for x in ns] + state_in
                lines.append("(%s,) = L" % ", ".join(flat))
                # the caller's list must not keep them alive: each is freed
                # when the schedule frees it
                lines.append("L.clear()")
            for i in range(bounds[k], bounds[k + 1]):
                op, u = steps[i]
                if op == "free":
                    names = self._var_names(u)
                    if names:
                        lines.append("del " + ", ".join(names))
                    resident.remove(u)
                    continue
                self._compute(J.byid[u], lines)
                resident.append(u)
                if k > outs_at:
                    gone = [w for w in J.byid[u].inputs + [u] if w in release
                            and w not in dropped and last.get(w, -1) <= i]
                    for w in gone:
                        dropped.add(w)
                    if gone:
                        lines.append("del " + ", ".join(x for w in gone
                                                        for x in self._var_names(w)))
            if k == epilogue_at:
                for n in J.epilogue:
                    self._compute(n, lines)
                if J.epilogue:
                    lines.append("del " + ", ".join(x for n in J.epilogue
                                                    for x in self._var_names(n.id)))
            outs = "(%s)" % "".join(self._expr(r) + ", " for r in J.outs) \
                if k == outs_at else "None"
            if k < nseg - 1:
                if k >= outs_at:
                    # not read later: not handed on (the caller has the outputs)
                    dropped.update(v for v in resident if v in release
                                   and last.get(v, -1) < bounds[k + 1])
                resident = [v for v in resident if v not in dropped]
                flat = [x for v in resident for x in self._var_names(v)] + \
                    sorted(self.snapped) + sorted(self.scratch)
                lines.append("return [%s], %s" % (", ".join(flat), outs))
            else:
                loss = self._expr(J.loss) if J.loss is not None else "None"
                grads = "(%s)" % "".join((self._expr(g) if g is not None else "None") + ", "
                                         for g in J.grads)
                igrads = "(%s)" % "".join((self._expr(g) if g is not None else "None") + ", "
                                          for g in J.input_grads)
                lines.append("return %s, %s, %s, %s" % (outs, loss, grads, igrads))
            name = "segment%d" % k
            src = "def %s(P, B, X, G, L, rng):\n" % name + \
                "".join("    " + ln + "\n" for ln in lines)
            self.source.append(src)
            ns = dict(self.globals)
            exec(compile(src, "<remat schedule segment %d>" % k, "exec"), ns)
            self.segments.append(ns[name])
        self.n_lines = sum(s.count("\n") for s in self.source)

    # -- names
    def _var(self, nid, i=None):
        k = self.index[nid]
        return "v%d" % k if i is None else "v%d_%d" % (k, i)

    def _var_names(self, nid):
        n = self.J.byid.get(nid)
        if n is None:
            n = next(m for m in self.J.epilogue if m.id == nid)
        if nid in self.J.side_effects:
            return []
        if n.keep is not None:
            return [self._var(nid, i) for i in n.keep]
        return [self._var(nid)]

    def _op(self, name, nid):
        got = self._ops.get(name)
        if got is None:
            if name == GRAD_OUTPUT_OP:
                return None, None
            o = resolve_op(name)
            if o is None:
                raise JointError("node %s: operator %s cannot be replayed (torch %s has no such "
                                 "operator)" % (nid, name, torch.__version__))
            var = "op%d" % len(self._ops)
            # the operator's C++ callable when it has one (skips a Python frame)
            self.globals[var] = callable_of(name, getattr(o, "_op", o))
            self.globals[var + "_o"] = o
            got = self._ops[name] = (o, var)
        return got

    def _const_name(self, value):
        var = "c%d" % len(self._consts)
        self._consts[var] = value
        self.globals[var] = value
        return var

    # -- expressions
    def _expr(self, r, written=False, first=True, prev=()):
        if isinstance(r, list):
            lit = _literal(r)
            if lit is not None:
                return lit
            return "[" + ", ".join(self._expr(a, prev=prev) for a in r) + "]"
        if not isinstance(r, dict):
            lit = _literal(r)
            return lit if lit is not None else self._const_name(decode_const(r))
        if "node" in r:
            if "index" in r:
                return self._var(r["node"], r["index"])
            return self._var(r["node"])
        if "prev" in r:
            return prev[r["prev"]]
        if "param" in r or "buffer" in r:
            return self._external(r, written, first)
        if "view" in r:
            _, var = self._op(r["view"], "(view)")
            args = ", ".join(self._expr(a, prev=prev) for a in r["args"])
            kw = "".join(", %s=%s" % (k, self._expr(a, prev=prev))
                         for k, a in r.get("kwargs", {}).items())
            e = "%s(%s%s)" % (var, args, kw if args else kw[2:])
            return e + ("[%d]" % r["index"] if "index" in r else "")
        value = decode_const(r)
        return self._const_name(value)

    def _external(self, r, written, first):
        if "param" in r:
            nm = r["param"]
            if nm not in self.pidx:
                raise JointError("the program reads parameter %s, which the model does not "
                                 "have" % nm)
            base = "P[%d]" % self.pidx[nm]
        else:
            nm = r["buffer"]
            if nm not in self.bidx:
                raise JointError("the program reads buffer %s, which the model does not have"
                                 % nm)
            base = "B[%d]" % self.bidx[nm]
        tag = ("p" if "param" in r else "b") + str(self.pidx.get(nm) if "param" in r
                                                   else self.bidx[nm])
        if written:
            if first:
                if nm in self.to_snap and ("S" + tag) not in self.snapped:
                    self._pre.append("S%s = %s.detach().clone()" % (tag, base))
                    self.snapped.add("S" + tag)
                return base
            if ("Z" + tag) not in self.scratch:
                self._pre.append("Z%s = %s.detach().clone()" % (tag, base))
                self.scratch.add("Z" + tag)
            return "Z" + tag
        if ("S" + tag) in self.snapped:
            return "S" + tag
        return base

    # -- a computation
    def _compute(self, n, lines):
        first = n.id not in self.ran
        self.ran.add(n.id)
        prev = []
        for ci, c in enumerate(n.calls):
            o, var = self._op(c["op"], n.id)
            tmp = "_p%d" % ci
            if o is None:
                lines.append("%s = G[%d]" % (tmp, c["args"][0]))
                prev.append(tmp)
                continue
            w = written_args(o, c["args"])
            wi, wn = {i for i, _ in w}, {nm for _, nm in w}
            self._pre = []
            args = [self._expr(a, written=(i in wi), first=first, prev=prev)
                    for i, a in enumerate(c["args"])]
            kwargs = [(k, self._expr(a, written=(k in wn), first=first, prev=prev))
                      for k, a in c["kwargs"].items()]
            lines.extend(self._pre)
            if n.random:
                call = "rng((%r, %d), %s_o, (%s), {%s})" % (
                    n.id, ci, var, "".join(a + ", " for a in args),
                    ", ".join("%r: %s" % kv for kv in kwargs))
            else:
                call = "%s(%s)" % (var, ", ".join(args + ["%s=%s" % kv for kv in kwargs]))
            lines.append("%s = %s" % (tmp, call))
            prev.append(tmp)
        last = prev[-1]
        if n.id in self.J.side_effects:
            pass
        elif n.keep is not None:
            lines.append("%s = %s" % ("".join(self._var(n.id, i) + ", " for i in n.keep),
                                      "".join("%s[%d], " % (last, i) for i in n.keep)))
        else:
            lines.append("%s = %s" % (self._var(n.id), last))
        lines.append("del " + ", ".join(dict.fromkeys(prev)))

