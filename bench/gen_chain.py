#!/usr/bin/python3
"""Write a training chain of N layers as remat-graph JSON (one node per line).

    gen_chain.py N OUT.json [--inference]

x -> f1 -> ... -> fN -> loss -> bN -> ... -> b1, with b_i reading b_{i+1}
(or loss), f_{i-1} (or x) and f_i, as Checkmate's training graphs do.
Sizes 1 MiB, forward cost 1, backward cost 2.  Used by bench/loader.sh.
"""
import sys


def main():
    n = int(sys.argv[1])
    out = sys.argv[2]
    inference = "--inference" in sys.argv
    mib = 1 << 20
    with open(out, "w") as f:
        f.write('{"format":"remat-graph","version":1,"name":"chain-%d","nodes":[\n' % n)
        f.write('{"id":"x","kind":"input","mem":%d}' % mib)
        prev = "x"
        for i in range(1, n + 1):
            f.write(',\n{"id":"f%d","kind":"forward","mem":%d,"cost":1,"inputs":["%s"]}'
                    % (i, mib, prev))
            prev = "f%d" % i
        if not inference:
            f.write(',\n{"id":"loss","kind":"loss","mem":4,"cost":1,"inputs":["%s"]}' % prev)
            grad = "loss"
            for i in range(n, 0, -1):
                below = "f%d" % (i - 1) if i > 1 else "x"
                f.write(',\n{"id":"b%d","kind":"backward","grad_of":"f%d","mem":%d,"cost":2,'
                        '"inputs":["%s","%s","f%d"]}' % (i, i, mib, grad, below, i))
                grad = "b%d" % i
        f.write("\n]}\n")


if __name__ == "__main__":
    main()
