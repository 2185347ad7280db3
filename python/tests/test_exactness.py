"""Exactness beyond scikit-learn: float32 data trains the textbook loop in
float32, sparse data the textbook loop with ``intercept_decay=1.0`` (by
default scikit-learn's sparse update), and partial_fit is one epoch of it,
as `perceptron online` is; every backend gives the same bits."""

import warnings

import numpy as np
import pytest
import scipy.sparse as sp
from sklearn.exceptions import ConvergenceWarning
from sklearn.linear_model import Perceptron as SkPerceptron

import perceptron
from conftest import DATA, bits, textbook, in_order

SETS = ["iris_setosa.csv", "digits_3v5.csv", "heart_scale.svm"]


def load(name, dtype=np.float64):
    if name.endswith(".svm"):
        return perceptron.load_svmlight(DATA / name, dtype=dtype)
    return perceptron.load_csv(DATA / name, dtype=dtype)


def signs(y):
    classes = np.unique(y)
    return np.where(y == classes[1], 1, -1)


def fit_quietly(clf, X, y):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", ConvergenceWarning)
        return clf.fit(X, y)


@pytest.mark.parametrize("name", SETS)
def test_float32_data_trains_the_textbook_loop_in_float32(name):
    X, y = load(name, np.float32)
    X = X.toarray() if sp.issparse(X) else X
    assert X.dtype == np.float32
    clf = fit_quietly(in_order(max_iter=30), X, y)
    assert clf.coef_.dtype == np.float32
    w, b, history = textbook(X, signs(y), dtype=np.float32, max_iter=30)
    np.testing.assert_array_equal(bits(clf.coef_[0]), bits(w))
    np.testing.assert_array_equal(bits(clf.intercept_), bits(np.array([b], np.float32)))
    assert clf.mistakes_per_epoch_.tolist() == history
    # scikit-learn (since it keeps float32 data in float32) trains the same
    # loop, and precision="float64" is its float64 model again.
    sk = dict(penalty=None, alpha=0, tol=None, shuffle=False, max_iter=30)
    sk32 = fit_quietly(SkPerceptron(**sk), X, y)
    if sk32.coef_.dtype == np.float32:
        np.testing.assert_array_equal(bits(clf.coef_), bits(sk32.coef_))
    wide = fit_quietly(in_order(max_iter=30, precision="float64"), X, y)
    sk64 = fit_quietly(SkPerceptron(**sk), X.astype(np.float64), y)
    assert wide.coef_.dtype == np.float64
    np.testing.assert_array_equal(bits(wide.coef_), bits(sk64.coef_))


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
@pytest.mark.parametrize("name", SETS)
def test_sparse_input_trains_the_textbook_loop(name, dtype):
    X, y = load(name, dtype)
    X = sp.csr_matrix(X)
    clf = fit_quietly(in_order(max_iter=30), X, y)
    w, b, history = textbook(X, signs(y), dtype=dtype, max_iter=30)
    np.testing.assert_array_equal(bits(clf.coef_[0]), bits(w))
    assert clf.intercept_[0] == b and clf.mistakes_per_epoch_.tolist() == history
    dense = fit_quietly(in_order(max_iter=30), X.toarray(), y)
    np.testing.assert_array_equal(bits(clf.coef_), bits(dense.coef_))
    np.testing.assert_array_equal(clf.predict(X), dense.predict(X.toarray()))
    np.testing.assert_array_equal(
        bits(clf.decision_function(X)), bits(dense.decision_function(X.toarray()))
    )


def test_sparse_input_trains_scikit_learns_sparse_update_unless_told_otherwise():
    # scikit-learn moves the intercept by 0.01 per update on sparse input,
    # so its sparse model differs from its dense one; so does ours by
    # default ("auto"), and intercept_decay=1.0 is the textbook loop.
    X, y = load("heart_scale.svm")
    sk = dict(penalty=None, alpha=0, tol=None, shuffle=False, max_iter=20)
    sparse = fit_quietly(SkPerceptron(**sk), X, y)
    dense = fit_quietly(SkPerceptron(**sk), X.toarray(), y)
    assert sparse.intercept_[0] != dense.intercept_[0]
    ours = fit_quietly(in_order(max_iter=20, intercept_decay="auto"), X, y)
    np.testing.assert_array_equal(bits(ours.coef_), bits(sparse.coef_))
    np.testing.assert_array_equal(bits(ours.intercept_), bits(sparse.intercept_))
    assert ours.mistake_bound_ is None  # the theorem's x~ is [x, 1], not [x, 0.01]
    textbook_run = fit_quietly(in_order(max_iter=20, intercept_decay=1.0), X, y)
    np.testing.assert_array_equal(bits(textbook_run.coef_), bits(dense.coef_))
    assert textbook_run.intercept_[0] == dense.intercept_[0]
    # float32 cannot reproduce it (scikit-learn sums the decayed steps in
    # float64 beside float32 weights): "auto" is the textbook update there,
    # and a number other than 1.0 is refused.
    X32 = X.astype(np.float32)
    auto32 = fit_quietly(in_order(max_iter=20, intercept_decay="auto"), X32, y)
    plain32 = fit_quietly(in_order(max_iter=20, intercept_decay=1.0), X32, y)
    np.testing.assert_array_equal(bits(auto32.coef_), bits(plain32.coef_))
    assert auto32.intercept_[0] == plain32.intercept_[0]
    with pytest.raises(ValueError, match="needs f64 precision"):
        fit_quietly(in_order(max_iter=20, intercept_decay=0.01), X32, y)
    for bad in (0, -1.0, float("nan"), "0.01"):
        with pytest.raises((ValueError, TypeError), match="intercept_decay"):
            in_order(intercept_decay=bad).fit(X, y)


@pytest.mark.parametrize("params", [{}, {"average": True}, {"pocket": True}, {"margin": 0.5},
                                    {"fit_intercept": False}, {"shuffle": True, "random_state": 7},
                                    {"shuffle": True, "tol": 1e-3, "average": True}])
def test_every_cpu_backend_and_order_gives_the_same_bits(params):
    X, y = load("digits_3v5.csv", np.float32)
    models = [
        fit_quietly(in_order(max_iter=20, backend=b, **params), X, y)
        for b in ("reference", "cpu", "auto")
    ]
    fortran = fit_quietly(in_order(max_iter=20, **params), np.asfortranarray(X), y)
    for m in models[1:] + [fortran]:
        np.testing.assert_array_equal(bits(m.coef_), bits(models[0].coef_))
        np.testing.assert_array_equal(bits(m.intercept_), bits(models[0].intercept_))
        assert m.mistakes_per_epoch_.tolist() == models[0].mistakes_per_epoch_.tolist()
    if not params.get("fit_intercept", True):
        assert models[0].intercept_.tolist() == [0.0]


def test_partial_fit_is_one_epoch_of_the_loop_over_its_rows():
    X, y = load("heart_scale.svm")
    online = in_order()
    for part in np.array_split(np.arange(len(y)), 4):
        online.partial_fit(X[part], y[part], classes=np.array([-1.0, 1.0]))
    assert online.n_iter_ == 1
    w, b, _ = textbook(X, signs(y), dtype=np.float64, max_iter=1)
    np.testing.assert_array_equal(bits(online.coef_[0]), bits(w))
    assert online.intercept_[0] == b
    once = fit_quietly(in_order(max_iter=1), X, y)
    np.testing.assert_array_equal(bits(online.coef_), bits(once.coef_))


def test_partial_fit_continues_like_perceptron_online(cli, tmp_path):
    # `perceptron online` over the file, split in two runs with --init,
    # against partial_fit over the same two halves.
    X, y = perceptron.load_csv(DATA / "digits_3v5.csv", dtype=np.float32)
    half = len(y) // 2
    lines = (DATA / "digits_3v5.csv").read_text().splitlines(keepends=True)
    (tmp_path / "a.csv").write_text("".join(lines[:half]))
    (tmp_path / "b.csv").write_text("".join(lines[half:]))
    cli("online", tmp_path / "a.csv", "-o", tmp_path / "a.json")
    cli("online", tmp_path / "b.csv", "--init", tmp_path / "a.json", "-o", tmp_path / "b.json")
    clf = in_order()
    clf.partial_fit(X[:half], y[:half], classes=[-1.0, 1.0])
    clf.partial_fit(X[half:], y[half:])
    cli_model = perceptron.load(tmp_path / "b.json")
    assert cli_model.coef_.dtype == clf.coef_.dtype == np.float32
    np.testing.assert_array_equal(bits(clf.coef_), bits(cli_model.coef_))
    np.testing.assert_array_equal(bits(clf.intercept_), bits(cli_model.intercept_))


def test_partial_fit_one_vs_rest_keeps_every_class_from_the_first_call():
    X, y = perceptron.load_csv(DATA / "digits.csv")
    clf = in_order()
    first = y < 5
    clf.partial_fit(X[first], y[first], classes=np.arange(10))
    assert clf.coef_.shape == (10, 64)
    clf.partial_fit(X[~first], y[~first])
    both = fit_quietly(in_order(max_iter=1), np.vstack([X[first], X[~first]]),
                       np.concatenate([y[first], y[~first]]))
    np.testing.assert_array_equal(bits(clf.coef_), bits(both.coef_))


def test_warm_start_continues_from_coef():
    X, y = load("digits_3v5.csv")
    cold = fit_quietly(in_order(max_iter=4), X, y)
    warm = in_order(max_iter=2, warm_start=True)
    fit_quietly(warm, X, y)
    fit_quietly(warm, X, y)
    np.testing.assert_array_equal(bits(warm.coef_), bits(cold.coef_))
    assert warm.mistake_bound_ is None  # the theorem counts from zero


def test_verbose_prints_one_line_per_epoch(capsys):
    X, y = load("iris_setosa.csv")
    clf = in_order(verbose=1).fit(X, y)
    lines = capsys.readouterr().out.splitlines()
    assert len(lines) == clf.epochs_run_ == 4
    assert lines[0] == "-- Epoch 1: 2 mistakes in 150 rows (2 in total)"
    assert lines[-1] == "-- Epoch 4: 0 mistakes in 150 rows (5 in total)"
