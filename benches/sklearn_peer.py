#!/usr/bin/env python3
"""The peer: scikit-learn's classic perceptron on the same data (CSV, LIBSVM or .pbin).

    python3 benches/sklearn_peer.py DATA (--epochs N) [--positive LABEL] [--model M.json]

Runs Perceptron(penalty=None, alpha=0, tol=None, shuffle=False, eta0=1,
max_iter=N) - the classic algorithm in float64 - and prints one JSON line:
rows, features, epochs, seconds, seconds_per_epoch. DATA is CSV (label
first, no header) or LIBSVM (.svm). Labels: --positive L makes L the +1
class (others -1); otherwise the two labels map as perceptron maps them
(the larger is +1). With --model, also checks the weights equal those of a
perceptron model file trained with --precision f64 (bit for bit).
"""
import argparse
import json
import time
import warnings

import numpy as np
from sklearn.exceptions import ConvergenceWarning
from sklearn.linear_model import Perceptron


def load_pbin(path):
    """Reads perceptron's .pbin format (layout in src/data/binary/mod.rs) with
    numpy: dense as an ndarray, CSR as a scipy matrix; values widened to f64
    exactly."""
    import struct

    import scipy.sparse

    with open(path, "rb") as f:
        head = f.read(192)
        magic, version, _, layout, vsize, rows, cols, nnz, classes = struct.unpack("<8sIIIIQQQQ", head[:56])
        if magic != b"\x89PBN\r\n\x1a\n" or version != 1:
            raise SystemExit(f"{path}: not a version-1 .pbin file")
        sections = struct.unpack("<10Q", head[56:136])
        (o_ids, n_ids, o_val, n_val, o_idx, n_idx, o_ptr, n_ptr, o_tab, n_tab) = sections

        def read(off, n, dtype):
            if n == 0:
                return np.zeros(0, dtype)
            f.seek(off)
            return np.frombuffer(f.read(n), dtype=dtype)

        ids = read(o_ids, n_ids, "<u4")
        values = read(o_val, n_val, "<f4" if vsize == 4 else "<f8").astype(np.float64)
        f.seek(o_tab)
        table, raw = [], f.read(n_tab)
        pos = 0
        while pos < len(raw):
            (n,) = struct.unpack("<I", raw[pos : pos + 4])
            table.append(raw[pos + 4 : pos + 4 + n].decode())
            pos += 4 + n
        if layout == 0:
            X = values.reshape(rows, cols)
        else:
            indices = read(o_idx, n_idx, "<u4")
            indptr = read(o_ptr, n_ptr, "<u8")
            X = scipy.sparse.csr_matrix((values, indices, indptr), shape=(rows, cols))
    return X, np.array(table)[ids]


def load(path):
    if path.endswith(".pbin"):
        return load_pbin(path)
    if path.endswith((".svm", ".libsvm", ".svmlight")):
        from sklearn.datasets import load_svmlight_file

        X, y = load_svmlight_file(path, dtype=np.float64)
        return X, y.astype(str)
    raw = np.loadtxt(path, delimiter=",", dtype=str)
    return raw[:, 1:].astype(np.float64), raw[:, 0]


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("data")
    ap.add_argument("--epochs", type=int, required=True)
    ap.add_argument("--positive", default=None)
    ap.add_argument("--model", default=None)
    args = ap.parse_args()
    X, labels = load(args.data)
    if args.positive is not None:
        y = np.where(labels == args.positive, 1, -1)
    else:
        values = sorted(set(labels), key=lambda v: float(v))
        y = np.where(labels == values[-1], 1, -1)
    clf = Perceptron(penalty=None, alpha=0.0, tol=None, shuffle=False, eta0=1.0, max_iter=args.epochs)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", ConvergenceWarning)
        t0 = time.perf_counter()
        clf.fit(X, y)
        seconds = time.perf_counter() - t0
    out = {
        "peer": "scikit-learn Perceptron",
        "rows": X.shape[0],
        "features": X.shape[1],
        "epochs": int(clf.n_iter_),
        "seconds": seconds,
        "seconds_per_epoch": seconds / clf.n_iter_,
    }
    if args.model:
        with open(args.model) as f:
            m = json.load(f)
        w = np.array(m["weights"], dtype=np.float64)
        same = w.shape == clf.coef_[0].shape and np.array_equal(w, clf.coef_[0]) and m["bias"] == clf.intercept_[0]
        out["identical_to_model"] = bool(same)
    print(json.dumps(out))


if __name__ == "__main__":
    main()
