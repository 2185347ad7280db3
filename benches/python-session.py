#!/usr/bin/env python3
"""The Python package against scikit-learn, in one run, as ratios.

    python benches/python-session.py [--epochs 20] [--rows 500000] [--repeat 3] [--work DIR]

Needs the package installed (`pip install ./python`), scikit-learn, a
release build of the CLI (for `perceptron gen`) and Debian's
dataset-fashion-mnist. Prints markdown tables:

1. fit time of `perceptron.Perceptron` against scikit-learn's
   `Perceptron(penalty=None, alpha=0, tol=None, shuffle=False, eta0=1)` on
   the same arrays: Fashion-MNIST class pairs (dense float64, 14,000 x 784;
   the models are checked bit-identical) and a large sparse CSR matrix
   (`perceptron gen --density sparse`; on it both move the intercept by 0.01
   per update, scikit-learn's sparse update, and the models are checked
   bit-identical);
2. both estimators with scikit-learn's defaults (`Perceptron()`, models
   checked bit-identical) on the pairs, on all 10 classes and on the sparse
   matrix;
3. `perceptron.load_svmlight` against scikit-learn's `load_svmlight_file` on
   that matrix's LIBSVM file (from the page cache).

Every figure is the best of --repeat runs. `--only sparse` (or `dense`,
`defaults`) prints one part.
"""

import argparse
import gzip
import os
import platform
import subprocess
import time
import warnings
from pathlib import Path

import numpy as np
import sklearn
from sklearn.datasets import load_svmlight_file
from sklearn.exceptions import ConvergenceWarning
from sklearn.linear_model import Perceptron as SkPerceptron

import perceptron

ROOT = Path(__file__).resolve().parents[1]
FASHION = Path("/usr/share/datasets/fashion-mnist")
PAIRS = [(0, 6, "T-shirt vs shirt"), (2, 4, "pullover vs coat"), (4, 6, "coat vs shirt"),
         (7, 9, "sneaker vs ankle boot"), (1, 8, "trouser vs bag")]


def idx(path):
    with gzip.open(path, "rb") as f:
        data = f.read()
    dims = data[3]
    shape = np.frombuffer(data[4 : 4 + 4 * dims], dtype=">u4").astype(int)
    return np.frombuffer(data[4 + 4 * dims :], dtype=np.uint8).reshape(shape)


def fashion_mnist():
    parts = [(idx(FASHION / f"{p}-images-idx3-ubyte.gz"), idx(FASHION / f"{p}-labels-idx1-ubyte.gz"))
             for p in ("train", "t10k")]
    images = np.concatenate([i.reshape(len(i), -1) for i, _ in parts])
    labels = np.concatenate([l for _, l in parts])
    return images, labels


def best(repeat, run):
    times, result = [], None
    for _ in range(repeat):
        t0 = time.perf_counter()
        result = run()
        times.append(time.perf_counter() - t0)
    return min(times), result


def quiet(fit):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", ConvergenceWarning)
        return fit()


def sk_model(epochs):
    return SkPerceptron(penalty=None, alpha=0, tol=None, shuffle=False, eta0=1.0, max_iter=epochs)


def machine():
    model = next((l.split(":", 1)[1].strip() for l in open("/proc/cpuinfo") if l.startswith("model name")),
                 platform.processor())
    commit = subprocess.run(["git", "-C", str(ROOT), "log", "-1", "--format=%h"],
                            capture_output=True, text=True).stdout.strip()
    return (f"{model}, {os.cpu_count()} cores; commit {commit}; Python {platform.python_version()}, "
            f"NumPy {np.__version__}, scikit-learn {sklearn.__version__}, perceptron "
            f"{perceptron.__version__}")


def dense_table(args):
    images, labels = fashion_mnist()
    print(f"### Fit, dense: Fashion-MNIST pairs, 14,000 x 784, {args.epochs} epochs at most\n")
    print("Time per epoch (the fit's time over the epochs it ran: scikit-learn with "
          "`tol=None` runs every epoch, ours stops after one without a mistake).\n")
    print("| pair | epochs (ours / scikit-learn) | scikit-learn | perceptron f64 | ratio | "
          "bit-identical | perceptron f32 | ratio |")
    print("|---|---|---:|---:|---:|---|---:|---:|")
    for a, b, name in PAIRS:
        keep = (labels == a) | (labels == b)
        X = np.ascontiguousarray(images[keep], dtype=np.float64)
        y = labels[keep]
        t_sk, sk = best(args.repeat, lambda: quiet(lambda: sk_model(args.epochs).fit(X, y)))
        ours_fit = lambda data: quiet(
            lambda: perceptron.Perceptron(max_iter=args.epochs, shuffle=False, tol=None).fit(data, y)
        )
        t_64, ours = best(args.repeat, lambda: ours_fit(X))
        X32 = X.astype(np.float32)
        t_32, ours32 = best(args.repeat, lambda: ours_fit(X32))
        same = (np.array_equal(ours.coef_.view(np.uint64), sk.coef_.view(np.uint64))
                and ours.intercept_[0] == sk.intercept_[0])
        per = lambda t, epochs: 1000 * t / epochs
        sk_ms = per(t_sk, sk.n_iter_)
        ms64, ms32 = per(t_64, ours.epochs_run_), per(t_32, ours32.epochs_run_)
        print(f"| {a} vs {b} ({name}) | {ours.epochs_run_} / {sk.n_iter_} | {sk_ms:.1f} ms | "
              f"{ms64:.1f} ms | {sk_ms / ms64:.2f}x | {'yes' if same else 'NO'} | "
              f"{ms32:.1f} ms | {sk_ms / ms32:.2f}x |")
    print()


def sparse_tables(args):
    work = Path(args.work)
    work.mkdir(parents=True, exist_ok=True)
    svm = work / f"sparse-{args.rows}.svm"
    if not svm.exists():
        cli = os.environ.get("PERCEPTRON_CLI", str(ROOT / "target" / "release" / "perceptron"))
        subprocess.run([cli, "gen", "-o", str(svm), "--rows", str(args.rows), "--features",
                        "1000000", "--density", "sparse", "--nnz", "64", "--noise", "0.01",
                        "--seed", "3"], check=True, capture_output=True)
    size = svm.stat().st_size
    svm.read_bytes()  # into the page cache, for both readers
    t_ours, (X, y) = best(args.repeat, lambda: perceptron.load_svmlight(svm))
    t_sk, (Xs, ys) = best(max(1, args.repeat - 1), lambda: load_svmlight_file(str(svm)))
    same = (np.array_equal(y, ys) and X.nnz == Xs.nnz
            and np.array_equal(X.data, Xs.data) and np.array_equal(X.indptr, Xs.indptr))
    print(f"### Reading LIBSVM: {svm.name}, {size / 1e6:.0f} MB, {X.shape[0]:,} rows, "
          f"{X.nnz:,} non-zeros\n")
    print("| reader | seconds | MB/s | ratio | same arrays |")
    print("|---|---:|---:|---:|---|")
    print(f"| scikit-learn `load_svmlight_file` | {t_sk:.2f} | {size / 1e6 / t_sk:.0f} | 1.0x | |")
    print(f"| `perceptron.load_svmlight` | {t_ours:.2f} | {size / 1e6 / t_ours:.0f} | "
          f"{t_sk / t_ours:.1f}x | {'yes' if same else 'NO'} |")
    print()
    del Xs, ys
    epochs = args.sparse_epochs
    t_sk, sk = best(args.repeat, lambda: quiet(lambda: sk_model(epochs).fit(X, y)))
    t_ours, ours = best(args.repeat,
                        lambda: quiet(lambda: perceptron.Perceptron(
                            max_iter=epochs, shuffle=False, tol=None).fit(X, y)))
    print(f"### Fit, sparse CSR: {X.shape[0]:,} x {X.shape[1]:,}, {X.nnz:,} non-zeros (float64, "
          f"int32 indices), {epochs} epochs\n")
    print("| fit | seconds | ratio | epochs | bit-identical |")
    print("|---|---:|---:|---:|---|")
    print(f"| scikit-learn | {t_sk:.2f} | 1.0x | {sk.n_iter_} | |")
    print(f"| perceptron (`{ours.backend_}`) | {t_ours:.2f} | {t_sk / t_ours:.1f}x | "
          f"{ours.epochs_run_} | {identical(ours, sk)} |")
    print()
    t_sk, sk = best(args.repeat, lambda: quiet(lambda: SkPerceptron().fit(X, y)))
    t_ours, ours = best(args.repeat, lambda: quiet(lambda: perceptron.Perceptron().fit(X, y)))
    print("With both estimators' defaults (`Perceptron()`):\n")
    print("| fit | seconds | ratio | n_iter_ | bit-identical |")
    print("|---|---:|---:|---:|---|")
    print(f"| scikit-learn | {t_sk:.2f} | 1.0x | {sk.n_iter_} | |")
    print(f"| perceptron (`{ours.backend_}`) | {t_ours:.2f} | {t_sk / t_ours:.1f}x | "
          f"{ours.n_iter_} | {identical(ours, sk)} |")
    print()


def identical(ours, sk):
    """Whether two fitted models have the same bits, as a table's word."""
    same = (np.array_equal(ours.coef_.view(np.uint64), sk.coef_.view(np.uint64))
            and np.array_equal(np.asarray(ours.intercept_, np.float64).view(np.uint64),
                               np.asarray(sk.intercept_, np.float64).view(np.uint64))
            and ours.n_iter_ == sk.n_iter_)
    return "yes" if same else "NO"


def defaults_table(args):
    """Both estimators with scikit-learn's defaults, `Perceptron()`, where the
    models are bit-identical (checked)."""
    images, labels = fashion_mnist()
    print("### Fit with the defaults, `Perceptron()` against `Perceptron()`\n")
    print("scikit-learn's defaults: reshuffled every epoch, `random_state=0`, "
          "`tol=1e-3`, `n_iter_no_change=5`. Whole fits.\n")
    print("| data | n_iter_ | scikit-learn | perceptron | ratio | bit-identical |")
    print("|---|---:|---:|---:|---:|---|")
    cases = [(f"{a} vs {b} ({name}), 14,000 x 784", (labels == a) | (labels == b))
             for a, b, name in PAIRS]
    cases.append(("all 10 classes, one-vs-rest, 70,000 x 784", np.ones(len(labels), dtype=bool)))
    for name, keep in cases:
        X = np.ascontiguousarray(images[keep], dtype=np.float64)
        y = labels[keep]
        t_sk, sk = best(args.repeat, lambda: quiet(lambda: SkPerceptron().fit(X, y)))
        t_ours, ours = best(args.repeat, lambda: quiet(lambda: perceptron.Perceptron().fit(X, y)))
        same = (np.array_equal(ours.coef_.view(np.uint64), sk.coef_.view(np.uint64))
                and np.array_equal(np.asarray(ours.intercept_), np.asarray(sk.intercept_))
                and ours.n_iter_ == sk.n_iter_)
        print(f"| {name} | {sk.n_iter_} | {t_sk:.2f} s | {t_ours:.2f} s | {t_sk / t_ours:.2f}x | "
              f"{'yes' if same else 'NO'} |")
    print()


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--epochs", type=int, default=20, help="epochs at most, dense pairs")
    ap.add_argument("--sparse-epochs", type=int, default=10)
    ap.add_argument("--rows", type=int, default=500_000, help="rows of the sparse matrix")
    ap.add_argument("--repeat", type=int, default=3)
    ap.add_argument("--work", default="/tmp/perceptron-python-bench")
    ap.add_argument("--only", choices=["dense", "defaults", "sparse"], help="one part of the tables")
    args = ap.parse_args()
    print(f"Machine: {machine()}; load average at the start "
          f"{open('/proc/loadavg').read().split()[0]}\n")
    for name, table in (("dense", dense_table), ("defaults", defaults_table), ("sparse", sparse_tables)):
        if args.only in (None, name):
            table(args)
    print(f"Load average at the end: {open('/proc/loadavg').read().split()[0]}")


if __name__ == "__main__":
    main()
