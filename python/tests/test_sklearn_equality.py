"""With the defaults, on float64 dense data, the model is scikit-learn's
Perceptron(penalty=None, alpha=0, tol=None, shuffle=False, eta0=1.0) bit for
bit: coef_, intercept_ and the predictions, on every dataset of the
repository, binary and one-vs-rest, on every CPU backend."""

import warnings

import numpy as np
import pytest
from sklearn.exceptions import ConvergenceWarning
from sklearn.linear_model import Perceptron as SkPerceptron

import perceptron
from conftest import DATA, bits, in_order

BINARY = [
    "iris_setosa.csv",
    "iris_petals.csv",
    "digits_0v1.csv",
    "digits_3v5.csv",
    "breast_cancer.csv",
    "heart_scale.svm",
    "points_2d.csv",
]


def dense(name):
    if name.endswith(".svm"):
        X, y = perceptron.load_svmlight(DATA / name)
        return X.toarray(), y
    return perceptron.load_csv(DATA / name)


def scikit_learn(X, y, max_iter):
    sk = SkPerceptron(penalty=None, alpha=0, tol=None, shuffle=False, eta0=1.0, max_iter=max_iter)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", ConvergenceWarning)
        return sk.fit(X, y)


@pytest.mark.parametrize("backend", ["auto", "cpu", "reference"])
@pytest.mark.parametrize("name", BINARY)
def test_binary_models_equal_scikit_learn_bit_for_bit(name, backend):
    X, y = dense(name)
    assert X.dtype == np.float64 and X.flags.c_contiguous
    sk = scikit_learn(X, y, 100)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", ConvergenceWarning)
        ours = in_order(max_iter=100, backend=backend).fit(X, y)
    assert ours.coef_.dtype == np.float64
    np.testing.assert_array_equal(bits(ours.coef_), bits(sk.coef_))
    np.testing.assert_array_equal(bits(ours.intercept_), bits(sk.intercept_))
    np.testing.assert_array_equal(ours.classes_, sk.classes_)
    np.testing.assert_array_equal(ours.predict(X), sk.predict(X))
    assert ours.score(X, y) == sk.score(X, y)
    # scikit-learn with tol=None runs every epoch; the model stops changing
    # at the first epoch without a mistake, where ours stops sweeping, and
    # n_iter_ and t_ count as scikit-learn's do.
    assert (ours.n_iter_, ours.t_) == (sk.n_iter_, sk.t_)
    assert ours.epochs_run_ == len(ours.mistakes_per_epoch_) <= 100
    assert ours.converged_ == (ours.mistakes_per_epoch_[-1] == 0)


def test_the_golden_file_is_what_both_give():
    import json

    golden = json.loads((DATA / "golden_classic_perceptron.json").read_text())
    checked = 0
    for name, g in golden.items():
        if name.startswith("_"):
            continue
        X, y = dense(g["file"])
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", ConvergenceWarning)
            ours = in_order(max_iter=g["max_epochs"]).fit(X, y)
        w = np.zeros(max(len(g["weights"]), X.shape[1]))
        w[: X.shape[1]] = ours.coef_[0]
        np.testing.assert_array_equal(bits(w[: len(g["weights"])]), bits(np.array(g["weights"])))
        assert ours.intercept_[0] == g["bias"]
        assert ours.mistakes_per_epoch_.tolist() == g["mistakes_per_epoch"]
        checked += 1
    assert checked >= 5


@pytest.mark.parametrize("backend", ["cpu", "reference"])
def test_one_vs_rest_equals_scikit_learn_bit_for_bit(backend):
    X, y = perceptron.load_csv(DATA / "digits.csv")
    sk = scikit_learn(X, y, 15)
    with pytest.warns(ConvergenceWarning):
        ours = in_order(max_iter=15, backend=backend).fit(X, y)
    assert ours.coef_.shape == (10, 64) and ours.intercept_.shape == (10,)
    np.testing.assert_array_equal(bits(ours.coef_), bits(sk.coef_))
    np.testing.assert_array_equal(bits(ours.intercept_), bits(sk.intercept_))
    np.testing.assert_array_equal(ours.predict(X), sk.predict(X))
    np.testing.assert_array_equal(ours.decision_function(X).shape, (len(y), 10))


def test_string_labels_sort_as_scikit_learn_sorts_them():
    X, y = perceptron.load_csv(DATA / "digits_3v5.csv")
    names = np.where(y == 1, "three", "five")
    sk = scikit_learn(X, names, 50)
    ours = in_order(max_iter=50).fit(X, names)
    assert ours.classes_.tolist() == sk.classes_.tolist() == ["five", "three"]
    np.testing.assert_array_equal(bits(ours.coef_), bits(sk.coef_))
    np.testing.assert_array_equal(ours.predict(X), sk.predict(X))


def test_partial_fit_equals_scikit_learn_partial_fit():
    X, y = dense("heart_scale.svm")
    sk = SkPerceptron(penalty=None, alpha=0, tol=None, shuffle=False, eta0=1.0)
    ours = in_order()
    for part in np.array_split(np.arange(len(y)), 3):
        sk.partial_fit(X[part], y[part], classes=[-1.0, 1.0])
        ours.partial_fit(X[part], y[part], classes=[-1.0, 1.0])
        np.testing.assert_array_equal(bits(ours.coef_), bits(sk.coef_))
        np.testing.assert_array_equal(bits(ours.intercept_), bits(sk.intercept_))
