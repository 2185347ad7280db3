"""Shared helpers of the Python package's tests: the repository's datasets,
the command-line tool, and the textbook loop to compare with.

Under CI=true nothing is skipped: a missing `perceptron` binary or GPU
adapter fails the tests that need them. Elsewhere those tests skip and say
why.
"""

import os

# scikit-learn's array-API check (with NumPy inputs, for estimators that do
# not claim array-API support) runs only when SciPy was imported with this.
os.environ.setdefault("SCIPY_ARRAY_API", "1")

import shutil
import subprocess
from pathlib import Path

import numpy as np
import pytest

ROOT = Path(__file__).resolve().parents[2]
DATA = ROOT / "data"
IN_CI = os.environ.get("CI") == "true"


def skip_or_fail(reason):
    if IN_CI:
        pytest.fail(f"{reason} (CI=true: nothing may be skipped)")
    pytest.skip(reason)


@pytest.fixture(scope="session")
def cli():
    """Runs the `perceptron` command (PERCEPTRON_CLI, else the repository's
    release or debug build, else one on PATH) and returns its stdout."""
    candidates = [
        os.environ.get("PERCEPTRON_CLI"),
        ROOT / "target" / "release" / "perceptron",
        ROOT / "target" / "debug" / "perceptron",
        shutil.which("perceptron"),
    ]
    binary = next((Path(c) for c in candidates if c and Path(c).is_file()), None)
    if binary is None:
        skip_or_fail("no `perceptron` binary: run `cargo build --release` first")

    def run(*args):
        done = subprocess.run(
            [str(binary), *map(str, args)], capture_output=True, text=True
        )
        if done.returncode not in (0, 3):
            raise AssertionError(f"perceptron {' '.join(map(str, args))}: {done.stderr}")
        return done.stdout

    return run


def textbook(X, y, *, dtype, max_iter, fit_intercept=True):
    """The definition, written out: for each row in order, s = w.x summed in
    index order (each product and each sum rounded in `dtype`), plus b; a
    mistake iff y*s <= 0, and then w += y*x, b += y. Stops after the first
    epoch without a mistake. y holds -1 and +1. Returns (w, b, mistakes per
    epoch)."""
    X = np.asarray(X.toarray() if hasattr(X, "toarray") else X, dtype=dtype)
    w = np.zeros(X.shape[1], dtype=dtype)
    b = dtype(0)
    history = []
    for _ in range(max_iter):
        mistakes = 0
        for x, yi in zip(X, y):
            s = np.add.accumulate(w * x)[-1] if len(x) else dtype(0)
            if fit_intercept:
                s = dtype(s + b)
            if yi * s <= 0:
                mistakes += 1
                w = w + x if yi > 0 else w - x
                if fit_intercept:
                    b = dtype(b + dtype(yi))
        history.append(mistakes)
        if mistakes == 0:
            break
    return w, b, history


def in_order(**params):
    """The estimator on the textbook loop in file order, what ``perceptron
    train`` runs: no reshuffle, no loss rule, the textbook update on sparse
    input too (scikit-learn's defaults, ``shuffle=True, tol=1e-3`` and its
    sparse update, are the estimator's)."""
    import perceptron

    return perceptron.Perceptron(
        **{"shuffle": False, "tol": None, "intercept_decay": 1.0, **params}
    )


def bits(a):
    """The exact bits of an array, for equality that sees -0.0 and NaN."""
    a = np.ascontiguousarray(a)
    return a.view(np.uint32 if a.dtype == np.float32 else np.uint64)
