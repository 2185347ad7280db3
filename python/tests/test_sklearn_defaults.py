"""With scikit-learn's defaults (shuffle=True, random_state=0, tol=1e-3,
n_iter_no_change=5, max_iter=1000), ``perceptron.Perceptron()`` is the
installed scikit-learn's ``Perceptron()`` bit for bit: coef_, intercept_,
n_iter_ and t_, binary and one-vs-rest, for several random_state values,
in float64 (dense and sparse: scikit-learn's sparse update moves the
intercept by 0.01, and so does ``intercept_decay="auto"``), and in float32
on dense data (see docs/python.md for where float32 can differ)."""

import warnings

import numpy as np
import pytest
import scipy.sparse as sp
from sklearn.datasets import load_svmlight_file
from sklearn.exceptions import ConvergenceWarning
from sklearn.linear_model import Perceptron as SkPerceptron

import perceptron
from conftest import DATA, bits

DATASETS = ["breast_cancer.csv", "digits_3v5.csv", "heart_scale.svm", "iris_petals.csv", "digits.csv"]


def dense(name, dtype):
    if name.endswith(".svm"):
        X, y = perceptron.load_svmlight(DATA / name)
        X = X.toarray()
    else:
        X, y = perceptron.load_csv(DATA / name)
    return np.ascontiguousarray(X, dtype=dtype), y


def quietly(fit):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", ConvergenceWarning)
        return fit()


def assert_same_model(ours, sk):
    assert ours.coef_.dtype == sk.coef_.dtype
    np.testing.assert_array_equal(bits(ours.coef_), bits(sk.coef_))
    np.testing.assert_array_equal(
        bits(np.asarray(ours.intercept_, dtype=np.float64)),
        bits(np.asarray(sk.intercept_, dtype=np.float64)),
    )
    np.testing.assert_array_equal(ours.classes_, sk.classes_)
    assert (ours.n_iter_, ours.t_) == (sk.n_iter_, sk.t_)


@pytest.mark.parametrize("dtype", [np.float64, np.float32])
@pytest.mark.parametrize("random_state", [0, 1, 42])
@pytest.mark.parametrize("name", DATASETS)
def test_the_defaults_give_scikit_learns_model(name, random_state, dtype):
    X, y = dense(name, dtype)
    sk = quietly(lambda: SkPerceptron(random_state=random_state).fit(X, y))
    ours = quietly(lambda: perceptron.Perceptron(random_state=random_state).fit(X, y))
    assert_same_model(ours, sk)
    np.testing.assert_array_equal(ours.predict(X), sk.predict(X))


@pytest.mark.parametrize("backend", ["reference", "cpu", "auto"])
def test_every_backend_gives_the_same_defaults_model(backend):
    X, y = dense("digits.csv", np.float64)
    sk = quietly(lambda: SkPerceptron().fit(X, y))
    ours = quietly(lambda: perceptron.Perceptron(backend=backend).fit(X, y))
    assert_same_model(ours, sk)


@pytest.mark.parametrize(
    "params",
    [
        {"tol": None},
        {"shuffle": False},
        {"tol": 1e-2, "n_iter_no_change": 2},
        {"max_iter": 3},
        {"fit_intercept": False},
    ],
)
def test_the_schedule_options_match_too(params):
    X, y = dense("breast_cancer.csv", np.float64)
    sk = quietly(lambda: SkPerceptron(random_state=3, **params).fit(X, y))
    ours = quietly(lambda: perceptron.Perceptron(random_state=3, **params).fit(X, y))
    assert_same_model(ours, sk)


def test_a_random_state_instance_is_drawn_from_as_scikit_learn_draws():
    X, y = dense("digits.csv", np.float64)
    sk = quietly(lambda: SkPerceptron(random_state=np.random.RandomState(5)).fit(X, y))
    ours = quietly(lambda: perceptron.Perceptron(random_state=np.random.RandomState(5)).fit(X, y))
    assert_same_model(ours, sk)
    # None draws from NumPy's global generator, as there.
    np.random.seed(11)
    sk = quietly(lambda: SkPerceptron(random_state=None).fit(X, y))
    np.random.seed(11)
    ours = quietly(lambda: perceptron.Perceptron(random_state=None).fit(X, y))
    assert_same_model(ours, sk)


def test_the_rule_warns_as_scikit_learn_does():
    X, y = dense("heart_scale.svm", np.float64)
    with pytest.warns(ConvergenceWarning, match="Maximum number of iteration reached"):
        SkPerceptron(max_iter=2).fit(X, y)
    with pytest.warns(ConvergenceWarning, match="Maximum number of iteration reached"):
        ours = perceptron.Perceptron(max_iter=2).fit(X, y)
    assert ours.n_iter_ == 2 and ours.converged_ is False


def test_partial_fit_with_the_defaults_equals_scikit_learn():
    X, y = dense("heart_scale.svm", np.float64)
    sk, ours = SkPerceptron(random_state=2), perceptron.Perceptron(random_state=2)
    for part in np.array_split(np.arange(len(y)), 3):
        sk.partial_fit(X[part], y[part], classes=[-1.0, 1.0])
        ours.partial_fit(X[part], y[part], classes=[-1.0, 1.0])
        assert_same_model(ours, sk)


@pytest.mark.parametrize("random_state", [0, 7])
@pytest.mark.parametrize("name, multiclass", [("breast_cancer.csv", False), ("digits.csv", True)])
def test_the_command_line_reproduces_scikit_learn_from_a_file(cli, tmp_path, name, multiclass, random_state):
    X, y = dense(name, np.float64)
    sk = quietly(lambda: SkPerceptron(random_state=random_state).fit(X, y))
    model = tmp_path / "m.json"
    cli("train", DATA / name, "-o", model, "--precision", "f64", "--shuffle-every-epoch",
        "--seed", random_state, "--tol-on", "mean-loss", "--tol", "1e-3",
        "--n-iter-no-change", "5", "--max-epochs", "1000",
        *(["--multiclass", "ovr"] if multiclass else []))
    loaded = perceptron.load(model)
    np.testing.assert_array_equal(bits(loaded.coef_), bits(sk.coef_))
    np.testing.assert_array_equal(bits(loaded.intercept_), bits(sk.intercept_))
    assert loaded.n_iter_ == sk.n_iter_
    # The model file records the schedule.
    assert (loaded.shuffle, loaded.random_state, loaded.tol) == (True, random_state, 1e-3)


def weights_for(y, seed):
    """Row weights of every kind: zeros, fractions, integers, large."""
    rng = np.random.RandomState(seed)
    return rng.choice([0.0, 0.25, 1.0, 1.5, 3.0, 10.0], size=len(y))


@pytest.mark.parametrize(
    "params",
    [
        {"class_weight": "balanced"},
        {"class_weight": {1: 3.0}},
        {"class_weight": "balanced", "shuffle": False, "tol": None, "max_iter": 7},
    ],
)
@pytest.mark.parametrize("name", ["breast_cancer.csv", "digits.csv"])
def test_class_and_sample_weights_give_scikit_learns_model(name, params):
    X, y = dense(name, np.float64)
    if isinstance(params.get("class_weight"), dict):
        params = {**params, "class_weight": {y[0]: 3.0}}
    for sample_weight in (None, weights_for(y, 1)):
        sk = quietly(lambda: SkPerceptron(**params).fit(X, y, sample_weight=sample_weight))
        ours = quietly(lambda: perceptron.Perceptron(**params).fit(X, y, sample_weight=sample_weight))
        assert_same_model(ours, sk)


def test_sample_weights_are_checked():
    X, y = dense("breast_cancer.csv", np.float64)
    w = np.ones(len(y))
    w[3] = -1.0
    with pytest.raises(ValueError, match=r"sample_weight\[3\] is -1"):
        perceptron.Perceptron().fit(X, y, sample_weight=w)
    with pytest.raises(ValueError):
        perceptron.Perceptron().fit(X, y, sample_weight=np.ones(len(y) + 1))
    with pytest.raises(ValueError, match="'balanced' is not supported for partial_fit"):
        perceptron.Perceptron(class_weight="balanced").partial_fit(X, y, classes=np.unique(y))


SPARSE = ["heart_scale.svm", "digits_0v1.svm", "breast_cancer.svm"]


@pytest.mark.parametrize("random_state", [0, 1, 42])
@pytest.mark.parametrize("name", SPARSE)
def test_the_defaults_give_scikit_learns_model_on_sparse_input(name, random_state):
    # scikit-learn's sparse update moves the intercept by 0.01·y; so does
    # intercept_decay="auto" on sparse float64 input.
    X, y = perceptron.load_svmlight(DATA / name)
    assert sp.issparse(X) and X.dtype == np.float64
    sk = quietly(lambda: SkPerceptron(random_state=random_state).fit(X, y))
    ours = quietly(lambda: perceptron.Perceptron(random_state=random_state).fit(X, y))
    assert_same_model(ours, sk)
    np.testing.assert_array_equal(ours.predict(X), sk.predict(X))
    if name == "heart_scale.svm":
        # Where the intercept moves, the sparse model is not the dense one.
        dense_sk = quietly(lambda: SkPerceptron(random_state=random_state).fit(X.toarray(), y))
        assert dense_sk.intercept_[0] != sk.intercept_[0]


@pytest.mark.parametrize(
    "params",
    [
        {},
        {"class_weight": "balanced"},
        {"early_stopping": True},
        {"shuffle": False, "tol": None, "max_iter": 9},
        {"fit_intercept": False},
    ],
)
@pytest.mark.parametrize("weighted", [False, True])
def test_sparse_one_vs_rest_and_weights_give_scikit_learns_model(params, weighted):
    X, y = dense("digits.csv", np.float64)
    X = sp.csr_matrix(X)
    sample_weight = weights_for(y, 4) if weighted else None
    sk = quietly(lambda: SkPerceptron(random_state=5, **params).fit(X, y, sample_weight=sample_weight))
    ours = quietly(
        lambda: perceptron.Perceptron(random_state=5, **params).fit(X, y, sample_weight=sample_weight)
    )
    assert_same_model(ours, sk)


def test_sparse_partial_fit_equals_scikit_learn():
    X, y = perceptron.load_svmlight(DATA / "heart_scale.svm")
    sk, ours = SkPerceptron(random_state=2), perceptron.Perceptron(random_state=2)
    for part in np.array_split(np.arange(len(y)), 3):
        sk.partial_fit(X[part], y[part], classes=[-1.0, 1.0])
        ours.partial_fit(X[part], y[part], classes=[-1.0, 1.0])
        assert_same_model(ours, sk)


@pytest.mark.parametrize("random_state", [0, 7])
def test_the_command_line_reproduces_scikit_learns_sparse_fit_from_a_file(cli, tmp_path, random_state):
    # scikit-learn reads an SVMlight file as sparse, so its model has the
    # sparse update: --intercept-decay 0.01.
    name = "digits_0v1.svm"
    X, y = load_svmlight_file(str(DATA / name))
    # scikit-learn's SGD takes int32 indices only; its reader gives int64.
    X.indices, X.indptr = X.indices.astype(np.int32), X.indptr.astype(np.int32)
    sk = quietly(lambda: SkPerceptron(random_state=random_state).fit(X, y))
    model = tmp_path / "m.json"
    cli("train", DATA / name, "-o", model, "--precision", "f64", "--shuffle-every-epoch",
        "--seed", random_state, "--tol-on", "mean-loss", "--intercept-decay", "0.01")
    loaded = perceptron.load(model)
    np.testing.assert_array_equal(bits(loaded.coef_), bits(sk.coef_))
    np.testing.assert_array_equal(bits(loaded.intercept_), bits(sk.intercept_))
    assert loaded.n_iter_ == sk.n_iter_
    # The model file records the update, and the loaded estimator makes it.
    assert loaded.intercept_decay == 0.01
    refit = quietly(lambda: perceptron.load(model).fit(X, y))
    np.testing.assert_array_equal(bits(refit.coef_), bits(sk.coef_))
    np.testing.assert_array_equal(bits(refit.intercept_), bits(sk.intercept_))
