#!/usr/bin/env python3
"""Every way of walking against the textbook loop, epoch by epoch.

    python3 benches/against_textbook.py [--bin target/release/perceptron]
        [--work DIR] [--runs 3] [--backends cpu] [--epochs 10] [--quick]

For each case (the sparse and dense `gen` cases at dev-VM size, the repo's
datasets, and Fashion-MNIST pairs where Debian's dataset-fashion-mnist is
installed) it runs `perceptron bench` once per --passes policy, alternating
the policies run after run, and prints for every policy and epoch its speed
as a multiple of the reference loop measured in the same `bench` process
(the reference always runs first there), the median of the runs (on a
shared machine the best of the runs picks out the luckiest noise, in the
reference's favour as often as not). Above each table it prints the
hardware's own ceiling for a walk that shares the dots among the cores:
one pass of every row's reference dot on all threads against one, which
`bench` measures alongside (`host_dot_pass`). A cell is marked
`!` where the policy is slower than 0.95x the reference and by more than
2 ms: the "never slower than the textbook loop" rule. Not a timed test: a
regression is visible in one command.
"""
import argparse
import json
import os
import statistics
import subprocess
import sys

POLICIES = ["adaptive", "always", "host", "ahead", "reference"]


def fashion_pair(work, a, b):
    """A two-class Fashion-MNIST CSV (classes a and b, 784 pixels; all
    70,000 images), written once by benches/fashion_mnist.py from Debian's
    dataset-fashion-mnist, or None without it."""
    if not os.path.isdir("/usr/share/datasets/fashion-mnist"):
        return None
    out = os.path.join(work, f"fashion_{a}v{b}.csv")
    if not os.path.exists(out):
        here = os.path.dirname(os.path.abspath(__file__))
        subprocess.run([sys.executable, os.path.join(here, "fashion_mnist.py"), out,
                        "--classes", f"{a},{b}"], check=True, stdout=subprocess.DEVNULL)
    return out


def cases(bin_, work, quick):
    def gen(name, args):
        path = os.path.join(work, name)
        if not os.path.exists(path):
            subprocess.run([bin_, "gen", *args, "-o", path], check=True, stdout=subprocess.DEVNULL)
        return path

    yield "sparse 200k x 10^6", gen("sparse200k.pbin", ["--rows", "200000", "--features", "1000000",
                                                        "--density", "sparse", "--nnz", "64",
                                                        "--noise", "0.01", "--seed", "1"])
    yield "dense 300k x 256", gen("dense300k.pbin", ["--rows", "300000", "--features", "256",
                                                     "--planted-margin", "0.002", "--seed", "1"])
    if quick:
        return
    here = os.path.dirname(os.path.abspath(__file__))
    data = os.path.join(here, "..", "data")
    for name in ("digits_3v5.csv", "breast_cancer.csv", "digits_0v1.svm", "heart_scale.svm"):
        yield name, os.path.join(data, name)
    # Trouser vs bag (separable), and shirt vs T-shirt (the hardest pair).
    for a, b in ((1, 8), (0, 6)):
        path = fashion_pair(work, a, b)
        if path:
            yield f"Fashion-MNIST {a} vs {b}", path


def bench(bin_, data, policy, backends, epochs):
    out = subprocess.run([bin_, "bench", data, "--backends", backends, "--passes", policy,
                          "--max-epochs", str(epochs), "--json"],
                         capture_output=True, text=True)
    if out.returncode != 0:
        sys.exit(f"bench {data} --passes {policy} failed: {out.stderr.strip()[-400:]}")
    return json.loads(out.stdout)


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--bin", default="target/release/perceptron")
    ap.add_argument("--work", default="/tmp/against-textbook")
    ap.add_argument("--runs", type=int, default=3)
    ap.add_argument("--backends", default="cpu")
    ap.add_argument("--epochs", type=int, default=10)
    ap.add_argument("--quick", action="store_true", help="the two gen cases only")
    args = ap.parse_args()
    os.makedirs(args.work, exist_ok=True)
    for name, data in cases(args.bin, args.work, args.quick):
        # runs_of[(backend, policy)] = [(per-epoch speed vs the reference, whole-run speed, ms slower per epoch)]
        runs_of = {}
        ceiling = []
        for run in range(args.runs):
            order = POLICIES[run % len(POLICIES):] + POLICIES[:run % len(POLICIES)]
            for policy in order:
                r = bench(args.bin, data, policy, args.backends, args.epochs)
                ref = r["runs"][0]
                ceiling.append(r["host_dot_pass"]["speedup"])
                for x in r["runs"][1:]:
                    key = (x["backend"], policy)
                    if not x["identical"]:
                        sys.exit(f"{name}: {key} is not bit-identical to the reference")
                    speed = [a / b for a, b in zip(ref["epoch_seconds"], x["epoch_seconds"])]
                    slower = [1e3 * (b - a) for a, b in zip(ref["epoch_seconds"], x["epoch_seconds"])]
                    runs_of.setdefault(key, []).append((speed, ref["seconds"] / x["seconds"], slower))
        best = {}
        for key, runs in runs_of.items():
            n = min(len(s) for s, _, _ in runs)
            best[key] = [[statistics.median(s[i] for s, _, _ in runs) for i in range(n)],
                         statistics.median(t for _, t, _ in runs),
                         [statistics.median(d[i] for _, _, d in runs) for i in range(n)]]
        epochs = max(len(v[0]) for v in best.values())
        print(f"\n{name}: speed against the reference loop, epoch by epoch (median of {args.runs}; ! = below 0.95x by over 2 ms)")
        print(f"every row's reference dot on {r['threads']} threads against one (no updates; the most a walk "
              f"sharing the dots can gain): {statistics.median(ceiling):.2f}x, median of {len(ceiling)}")
        print(f"{'backend, --passes':<22} {'all':>6}  " + " ".join(f"{i + 1:>6}" for i in range(epochs)))
        for (backend, policy), (speed, total, slower) in sorted(best.items()):
            cells = " ".join(f"{s:5.2f}" + ("!" if s < 0.95 and d > 2 else " ") for s, d in zip(speed, slower))
            print(f"{backend + ', ' + policy:<22} {total:5.2f}x  {cells}")


if __name__ == "__main__":
    main()
