#!/usr/bin/env python3
"""Peers side by side: perceptron, scikit-learn, Vowpal Wabbit, mlpack and
river on the same data, in the same run.

    python3 benches/peers.py [--work DIR] [--runs N] [--out FILE.json]

Needs a release build (target/release/perceptron), `pip install scikit-learn
vowpalwabbit mlpack river pandas`, and Debian's dataset-fashion-mnist. Data,
made on the first run and reused after (in --work, /tmp/perceptron-peers):

  big.svm    500,000 x 10^6 LIBSVM, 64 non-zeros a row, 1% label noise:
             perceptron gen --rows 500000 --features 1000000 --density sparse
             --nnz 64 --noise 0.01 --seed 3 (604 MB)
  big.vw     the same rows in Vowpal Wabbit's text format (awk)
  fm18.csv   Fashion-MNIST trouser (1) against bag (8), 14,000 x 784 integer
             pixels, label first (benches/fashion_mnist.py --classes 1,8)
  sub.svm    the first 20,000 rows of big.svm, for river (pure Python)
  small.svm  the first 3,000 rows of big.svm, for the identity checks

Every tool runs as a process of its own, timed from outside (wall, and CPU:
user + system of the process and its threads): the time to a model from the
text file, interpreter start and imports included for the Python tools.
Inside, each reports its load and training times; time per epoch is the
training time over the epochs. Each tool's model is then checked against the
textbook loop (perceptron's reference backend): bit for bit where both
compute in the same precision, else the differences are named (loss,
learning rate, tie rule at s = 0, intercept, hashing, classes).

Prints markdown tables and the load average; --out also writes the raw
figures as JSON.
"""
import argparse
import json
import os
import resource
import statistics
import subprocess
import sys
import time

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
P = os.path.join(ROOT, "target", "release", "perceptron")
SPARSE_EPOCHS = 10
RIVER_EPOCHS = 3
CHECK_EPOCHS = 3


# ---------------------------------------------------------------- children
# Each peer's work, run as `peers.py --child NAME ARGS...` so that it is timed
# as a whole process; prints one JSON line.


def child_sklearn(path, epochs, model=None):
    import warnings

    import numpy as np
    import pandas as pd
    import scipy.sparse
    from sklearn.datasets import load_svmlight_file
    from sklearn.exceptions import ConvergenceWarning
    from sklearn.linear_model import Perceptron

    t0 = time.perf_counter()
    if path.endswith(".svm"):
        X, y = load_svmlight_file(path, dtype=np.float64)
        # scikit-learn's fit refuses the int64 indices the loader gives
        # files with many features.
        X = scipy.sparse.csr_matrix(
            (X.data, X.indices.astype(np.int32), X.indptr.astype(np.int32)), shape=X.shape
        )
    else:
        raw = pd.read_csv(path, header=None).to_numpy()
        X, y = raw[:, 1:].astype(np.float64), raw[:, 0]
    load = time.perf_counter() - t0
    y = np.where(y == max(set(y.tolist())), 1, -1)
    clf = Perceptron(penalty=None, alpha=0.0, tol=None, shuffle=False, eta0=1.0, max_iter=epochs)
    t1 = time.perf_counter()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", ConvergenceWarning)
        clf.fit(X, y)
    fit = time.perf_counter() - t1
    out = {"load": load, "train": fit, "epochs": int(clf.n_iter_)}
    if model:
        out.update(same_as(model, clf.coef_[0], clf.intercept_[0]))
    print(json.dumps(out))


def child_vw(path, passes, check=None):
    from vowpalwabbit import pyvw

    args = f"-d {path} --sgd --loss_function hinge -l 1 --holdout_off -b 20 --quiet"
    if passes > 1:
        # -k and a fresh cache: every run parses the text, as the first did.
        if os.path.exists(f"{path}.cache"):
            os.remove(f"{path}.cache")
        args += f" --passes {passes} -c -k --cache_file {path}.cache"
    t0 = time.perf_counter()
    ws = pyvw.Workspace(args)
    out = {"load": None, "train": time.perf_counter() - t0, "epochs": passes}
    if check:
        import numpy as np

        names = sorted({t.split(":")[0] for line in open(path) for t in line.split("|")[1].split()}, key=int)
        w = np.zeros(max(int(n) for n in names))
        for n in names:
            w[int(n) - 1] = ws.get_weight_from_name(n)
        # The constant feature's weight (VW's fixed hash for it, under -b 20):
        # it shares that slot with feature 116,060 when there is one.
        out.update(same_as(check, w, ws.get_weight(11650396 & ((1 << 20) - 1))))
    ws.finish()
    print(json.dumps(out))


def child_mlpack(path, epochs, check=None):
    import mlpack
    import numpy as np
    import pandas as pd

    t0 = time.perf_counter()
    raw = pd.read_csv(path, header=None).to_numpy()
    X, y = raw[:, 1:].astype(np.float64), raw[:, 0]
    load = time.perf_counter() - t0
    labels = (y == y.max()).astype(np.int64)
    t1 = time.perf_counter()
    model = mlpack.perceptron(training=X, labels=labels, max_iterations=epochs)["output_model"]
    out = {"load": load, "train": time.perf_counter() - t1, "epochs": epochs}
    if check:
        p = model.get_cpp_params()["PerceptronModel"]["p"]
        # Two classes: a weight vector and a bias each; the +1 class's.
        out.update(same_as(check, p["weights"][1], p["biases"][0][1]))
    print(json.dumps(out))


def child_river(path, epochs, check=None):
    from river import linear_model

    t0 = time.perf_counter()
    rows = []
    for line in open(path):
        t = line.split()
        rows.append((float(t[0]) > 0, {int(k) - 1: float(v) for k, v in (p.split(":") for p in t[1:])}))
    load = time.perf_counter() - t0
    model = linear_model.Perceptron()
    t1 = time.perf_counter()
    for _ in range(epochs):
        for y, x in rows:
            model.learn_one(x, y)
    out = {"load": load, "train": time.perf_counter() - t1, "epochs": epochs, "rows": len(rows)}
    if check:
        import numpy as np

        w = np.zeros(max(max(x) for _, x in rows) + 1)
        for k, v in model._weights.items():
            w[k] = v
        out.update(same_as(check, w, model.intercept))
    print(json.dumps(out))


def same_as(model_path, w, b):
    """Compares weights `w` and bias `b` with a perceptron model file (f64)."""
    import numpy as np

    m = json.load(open(model_path))
    ref = np.array(m["weights"], dtype=np.float64)
    w = np.asarray(w, dtype=np.float64)
    n = max(len(ref), len(w))
    ref = np.pad(ref, (0, n - len(ref)))
    w = np.pad(w, (0, n - len(w)))
    same = bool(np.array_equal(ref, w) and float(b) == float(m["bias"]))
    return {
        "identical": same,
        "max_weight_difference": float(np.abs(ref - w).max()),
        "bias": float(b),
        "reference_bias": float(m["bias"]),
    }


CHILDREN = {"sklearn": child_sklearn, "vw": child_vw, "mlpack": child_mlpack, "river": child_river}


# ------------------------------------------------------------------ parent


def timed(cmd):
    """Runs cmd; returns (wall s, CPU s, stdout)."""
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    t0 = time.perf_counter()
    p = subprocess.run(cmd, capture_output=True, text=True)
    wall = time.perf_counter() - t0
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    cpu = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
    if p.returncode not in (0, 3):  # 3: perceptron's "not converged"
        sys.exit(f"{' '.join(cmd)} failed ({p.returncode}):\n{p.stderr}")
    return wall, cpu, p.stdout


def child(name, *args):
    return [sys.executable, os.path.abspath(__file__), "--child", name, *map(str, args)]


def median_run(cmd, runs):
    """The run with the median wall time of `runs` runs, parsed."""
    results = []
    for _ in range(runs):
        wall, cpu, out = timed(cmd)
        results.append((wall, cpu, json.loads(out.strip().splitlines()[-1]) if out.strip() else {}))
    results.sort(key=lambda r: r[0])
    return results[len(results) // 2]


def ours(data, model, runs, *extra):
    """perceptron train, whole process; the JSON summary gives the loop time."""
    wall, cpu, j = median_run([P, "train", data, "--json", "-o", model, *extra], runs)
    return {"wall": wall, "cpu": cpu, "load": None, "train": j["seconds"], "epochs": j["epochs"]}


def weights_of(model):
    m = json.load(open(model))
    return m["weights"], m["bias"]


def prepare(work):
    os.makedirs(work, exist_ok=True)
    f = lambda name: os.path.join(work, name)  # noqa: E731
    if not os.path.exists(f("big.svm")):
        subprocess.run([P, "gen", "--rows", "500000", "--features", "1000000", "--density", "sparse",
                        "--nnz", "64", "--noise", "0.01", "--seed", "3", "-o", f("big.svm")], check=True,
                       capture_output=True)
    if not os.path.exists(f("big.vw")):
        awk = r'{printf "%s |", $1; for(i=2;i<=NF;i++) printf " %s", $i; printf "\n"}'
        with open(f("big.vw"), "w") as out:
            subprocess.run(["awk", awk, f("big.svm")], stdout=out, check=True)
    if not os.path.exists(f("fm18.csv")):
        subprocess.run([sys.executable, os.path.join(ROOT, "benches", "fashion_mnist.py"), f("fm18.csv"),
                        "--classes", "1,8"], check=True, capture_output=True)
    for name, rows in (("sub.svm", 20000), ("small.svm", 3000)):
        if not os.path.exists(f(name)):
            with open(f("big.svm")) as src, open(f(name), "w") as out:
                for _, line in zip(range(rows), src):
                    out.write(line)
    for name in ("small.vw",):
        if not os.path.exists(f(name)):
            awk = r'{printf "%s |", $1; for(i=2;i<=NF;i++) printf " %s", $i; printf "\n"}'
            with open(f(name), "w") as out:
                subprocess.run(["awk", awk, f("small.svm")], stdout=out, check=True)
    return f


def row(tool, data, r, note, ident):
    per_epoch = 1e3 * r["train"] / r["epochs"]
    load = "" if r.get("load") is None else f"{r['load']:.2f}"
    return (f"| {tool} | {data} | {r['epochs']} | {r['wall']:.2f} | {r['cpu']:.2f} | {load} | "
            f"{r['train']:.2f} | {per_epoch:.1f} | {ident} | {note} |")


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--work", default="/tmp/perceptron-peers")
    ap.add_argument("--runs", type=int, default=1, help="runs of each timed command (the median is kept)")
    ap.add_argument("--out", default=None)
    ap.add_argument("--child", nargs="+", help=argparse.SUPPRESS)
    a = ap.parse_args()
    if a.child:
        name, *args = a.child
        args = [int(x) if x.isdigit() else x for x in args]
        CHILDREN[name](*args)
        return
    f = prepare(a.work)
    runs = a.runs
    load_before = os.getloadavg()
    res = {}
    m = lambda name: os.path.join(a.work, name)  # noqa: E731

    # --- sparse: 500k x 10^6, 10 epochs
    res["ours_sparse"] = ours(f("big.svm"), m("big-cpu.json"), runs, "--max-epochs", str(SPARSE_EPOCHS))
    res["ours_sparse_ref"] = ours(f("big.svm"), m("big-ref.json"), 1, "--max-epochs", str(SPARSE_EPOCHS),
                                 "--backend", "reference")
    res["ours_sparse_ref"]["identical"] = weights_of(m("big-cpu.json")) == weights_of(m("big-ref.json"))
    w, c, j = median_run(child("sklearn", f("big.svm"), SPARSE_EPOCHS), runs)
    res["sk_sparse"] = {"wall": w, "cpu": c, **j}
    w, c, j = median_run(child("vw", f("big.vw"), 1), runs)
    res["vw_sparse_1"] = {"wall": w, "cpu": c, **j}
    w, c, j = median_run(child("vw", f("big.vw"), SPARSE_EPOCHS), runs)
    res["vw_sparse"] = {"wall": w, "cpu": c, **j}
    w, c, j = median_run(child("river", f("sub.svm"), RIVER_EPOCHS), runs)
    res["river_sub"] = {"wall": w, "cpu": c, **j}
    res["ours_sub"] = ours(f("sub.svm"), m("sub.json"), runs, "--max-epochs", str(RIVER_EPOCHS))

    # --- dense: Fashion-MNIST trouser vs bag, until separated (our epochs for every peer)
    res["ours_dense"] = ours(f("fm18.csv"), m("fm18-cpu.json"), runs)
    epochs = res["ours_dense"]["epochs"]
    res["ours_dense_f64"] = ours(f("fm18.csv"), m("fm18-f64.json"), 1, "--precision", "f64")
    res["ours_dense_ref"] = ours(f("fm18.csv"), m("fm18-ref.json"), 1, "--backend", "reference")
    res["ours_dense_ref"]["identical"] = weights_of(m("fm18-cpu.json")) == weights_of(m("fm18-ref.json"))
    w, c, j = median_run(child("sklearn", f("fm18.csv"), epochs, m("fm18-f64.json")), runs)
    res["sk_dense"] = {"wall": w, "cpu": c, **j}
    w, c, j = median_run(child("mlpack", f("fm18.csv"), epochs), runs)
    res["mlpack_dense"] = {"wall": w, "cpu": c, **j}

    # --- identity checks on small data, against the textbook loop in f64
    subprocess.run([P, "train", f("small.svm"), "--precision", "f64", "--backend", "reference", "--max-epochs",
                    str(CHECK_EPOCHS), "-o", m("small-ref64.json")], capture_output=True)
    digits = os.path.join(ROOT, "data", "digits_3v5.csv")
    subprocess.run([P, "train", digits, "--precision", "f64", "--backend", "reference", "--max-epochs",
                    str(CHECK_EPOCHS), "-o", m("digits-ref64.json")], capture_output=True)
    checks = {
        "sklearn_sparse": timed(child("sklearn", f("small.svm"), CHECK_EPOCHS, m("small-ref64.json")))[2],
        "vw": timed(child("vw", f("small.vw"), CHECK_EPOCHS, m("small-ref64.json")))[2],
        "mlpack": timed(child("mlpack", digits, CHECK_EPOCHS, m("digits-ref64.json")))[2],
        "river": timed(child("river", f("small.svm"), CHECK_EPOCHS, m("small-ref64.json")))[2],
    }
    checks = {k: json.loads(v.strip().splitlines()[-1]) for k, v in checks.items()}
    load_after = os.getloadavg()

    yes_no = lambda b: "**yes** (checked)" if b else "no (checked)"  # noqa: E731
    head = ("| tool | data | epochs | to model, wall s | CPU s | load s | train s | per epoch ms | "
            "same as the textbook loop | notes |\n|---|---|---:|---:|---:|---:|---:|---:|---|---|")
    print(f"load average before {load_before[0]:.1f}, after {load_after[0]:.1f}; "
          f"{os.cpu_count()} CPUs; runs per command {runs} (median)")
    print()
    print("Sparse: big.svm, 500,000 x 10^6, 64 non-zeros a row (604 MB of text)")
    print(head)
    print(row("perceptron train (f32, cpu)", "big.svm", res["ours_sparse"], "whole process; train s is the loop alone",
              yes_no(res["ours_sparse_ref"]["identical"]) + " against --backend reference"))
    print(row("scikit-learn load_svmlight_file + Perceptron.fit (f64)", "big.svm", res["sk_sparse"],
              "indices converted to int32", "no: on sparse input its intercept moves by 0.01 per update"
              + (" (checked: differs)" if not checks["sklearn_sparse"]["identical"] else " (checked: equal)")))
    print(row("Vowpal Wabbit, 1 pass", "big.vw", res["vw_sparse_1"], "parse and learn in one pass", "no: see below"))
    print(row(f"Vowpal Wabbit, {SPARSE_EPOCHS} passes (cache)", "big.vw", res["vw_sparse"],
              "first pass writes the cache", "no (checked): hinge loss, decaying rate, hashing"))
    r = res["river_sub"]
    print(row(f"river Perceptron (pure Python, {r['rows']} rows)", "sub.svm", r,
              f"x{500000 / r['rows']:.0f} rows for big.svm", yes_no(checks["river"]["identical"]) + " in f64"))
    print(row("perceptron train, the same subset", "sub.svm", res["ours_sub"], "", "yes"))
    print("| mlpack perceptron | big.svm | | | | | | | | dense only: 500,000 x 10^6 dense is 2 TB |")
    print()
    print(f"Dense: Fashion-MNIST trouser vs bag, 14,000 x 784 CSV (31 MB), {epochs} epochs (until separated)")
    print(head)
    print(row("perceptron train (f32, cpu)", "fm18.csv", res["ours_dense"], "whole process",
              yes_no(res["ours_dense_ref"]["identical"]) + " against --backend reference"))
    print(row("perceptron train --precision f64", "fm18.csv", res["ours_dense_f64"], "", "yes"))
    print(row("scikit-learn pandas.read_csv + Perceptron.fit (f64)", "fm18.csv", res["sk_dense"], "",
              yes_no(res["sk_dense"].get("identical")) + " against ours in f64"))
    print(row("mlpack perceptron (pandas.read_csv)", "fm18.csv", res["mlpack_dense"], "",
              "no (checked): a weight vector per class, ties go to the first"))
    print()
    print("Identity checks on small data (3 epochs, against perceptron --backend reference --precision f64):")
    for k, v in checks.items():
        print(f"- {k}: identical {v['identical']}, largest weight difference {v['max_weight_difference']:.3g}, "
              f"bias {v['bias']:.6g} against {v['reference_bias']:.6g}")
    sk, vw1, vw = res["sk_sparse"], res["vw_sparse_1"], res["vw_sparse"]
    o, od, skd = res["ours_sparse"], res["ours_dense"], res["sk_dense"]
    print()
    print("Ratios (same run):")
    print(f"- sparse loop: scikit-learn fit {sk['train']:.2f} s / ours {o['train']:.2f} s = {sk['train'] / o['train']:.2f}x")
    print(f"- sparse whole process: scikit-learn load + fit {sk['wall']:.1f} s / ours {o['wall']:.2f} s = "
          f"{sk['wall'] / o['wall']:.1f}x wall, {sk['cpu'] / o['cpu']:.1f}x CPU")
    print(f"- against Vowpal Wabbit: {SPARSE_EPOCHS} passes {vw['wall']:.1f} s / ours = {vw['wall'] / o['wall']:.1f}x; "
          f"one pass {vw1['wall']:.1f} s / ours = {vw1['wall'] / o['wall']:.1f}x")
    mld = res["mlpack_dense"]
    print(f"- dense loop: scikit-learn fit {skd['train']:.2f} s / ours {od['train']:.2f} s = "
          f"{skd['train'] / od['train']:.2f}x; mlpack {mld['train']:.2f} s / ours = {mld['train'] / od['train']:.2f}x")
    print(f"- dense whole process: scikit-learn {skd['wall']:.2f} s / ours {od['wall']:.2f} s = "
          f"{skd['wall'] / od['wall']:.1f}x; mlpack {mld['wall']:.2f} s / ours = {mld['wall'] / od['wall']:.1f}x; "
          f"scikit-learn's fit alone / our whole process = {skd['train'] / od['wall']:.2f}x")
    rs, osub = res["river_sub"], res["ours_sub"]
    print(f"- river, same subset and epochs: loop {rs['train']:.2f} s / ours {osub['train']:.3f} s = "
          f"{rs['train'] / osub['train']:.0f}x; whole process {rs['wall']:.2f} / {osub['wall']:.2f} = "
          f"{rs['wall'] / osub['wall']:.0f}x")
    if a.out:
        with open(a.out, "w") as out:
            json.dump({"results": res, "checks": checks, "load_before": load_before, "load_after": load_after}, out,
                      indent=1)


if __name__ == "__main__":
    main()
