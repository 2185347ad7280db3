"""``perceptron.Perceptron(early_stopping=True, ...)`` is the installed
scikit-learn's ``Perceptron(early_stopping=True, ...)`` bit for bit:
coef_, intercept_, n_iter_ and t_, binary and one-vs-rest, on the
repository's datasets, three random_state values, float64 and float32; its
validation split is scikit-learn's, drawn from the same generator in the
same order, and so are its refusals."""

import json

import numpy as np
import pytest
from sklearn.linear_model import Perceptron as SkPerceptron
from sklearn.model_selection import StratifiedShuffleSplit

import perceptron
from perceptron._estimator import _validation_split
from conftest import DATA, bits
from test_sklearn_defaults import DATASETS, assert_same_model, dense, quietly, weights_for


def both(X, y, sample_weight=None, **params):
    """scikit-learn's model and ours with early stopping and `params`."""
    params = {"early_stopping": True, **params}
    sk = quietly(lambda: SkPerceptron(**params).fit(X, y, sample_weight=sample_weight))
    ours = quietly(lambda: perceptron.Perceptron(**params).fit(X, y, sample_weight=sample_weight))
    return ours, sk


def report(model):
    """What the model file says early stopping did."""
    return json.loads(model._info)["training"]["early_stopping"]


@pytest.mark.parametrize("dtype", [np.float64, np.float32])
@pytest.mark.parametrize("random_state", [0, 1, 42])
@pytest.mark.parametrize("name", DATASETS)
def test_early_stopping_gives_scikit_learns_model(name, random_state, dtype):
    X, y = dense(name, dtype)
    ours, sk = both(X, y, random_state=random_state)
    assert_same_model(ours, sk)
    np.testing.assert_array_equal(ours.predict(X), sk.predict(X))


@pytest.mark.parametrize(
    "params",
    [
        {"validation_fraction": 0.3, "n_iter_no_change": 3},
        {"validation_fraction": 0.5},
        {"tol": 0.0},
        {"tol": 1e-2, "n_iter_no_change": 1},
        {"tol": None, "max_iter": 25},
        {"shuffle": False},
        {"max_iter": 3},
        {"fit_intercept": False},
    ],
)
@pytest.mark.parametrize("name", ["breast_cancer.csv", "digits.csv"])
def test_the_early_stopping_options_match_too(name, params):
    X, y = dense(name, np.float64)
    ours, sk = both(X, y, random_state=3, **params)
    assert_same_model(ours, sk)


@pytest.mark.parametrize("name", ["breast_cancer.csv", "digits.csv"])
def test_a_random_state_instance_and_none_draw_the_split_as_scikit_learn(name):
    X, y = dense(name, np.float64)
    sk = quietly(lambda: SkPerceptron(early_stopping=True, random_state=np.random.RandomState(5)).fit(X, y))
    ours = quietly(
        lambda: perceptron.Perceptron(early_stopping=True, random_state=np.random.RandomState(5)).fit(X, y)
    )
    assert_same_model(ours, sk)
    # None draws from NumPy's global generator, as there.
    np.random.seed(11)
    sk = quietly(lambda: SkPerceptron(early_stopping=True, random_state=None).fit(X, y))
    np.random.seed(11)
    ours = quietly(lambda: perceptron.Perceptron(early_stopping=True, random_state=None).fit(X, y))
    assert_same_model(ours, sk)
    # A shared generator is left where scikit-learn leaves it.
    mine, theirs = np.random.RandomState(3), np.random.RandomState(3)
    quietly(lambda: SkPerceptron(early_stopping=True, random_state=theirs).fit(X, y))
    quietly(lambda: perceptron.Perceptron(early_stopping=True, random_state=mine).fit(X, y))
    assert mine.randint(2**31 - 1) == theirs.randint(2**31 - 1)


@pytest.mark.parametrize(
    "params",
    [{}, {"class_weight": "balanced"}, {"class_weight": "first"}, {"shuffle": False, "class_weight": "balanced"}],
)
@pytest.mark.parametrize("name", ["breast_cancer.csv", "digits.csv"])
def test_class_and_sample_weights_with_early_stopping_give_scikit_learns_model(name, params):
    # scikit-learn weighs each update by class and sample weight, and the
    # validation accuracy by the held-out rows' sample weights.
    X, y = dense(name, np.float64)
    if params.get("class_weight") == "first":
        params = {**params, "class_weight": {y[0]: 3.0}}
    for sample_weight in (None, weights_for(y, 1), np.arange(len(y)) % 7 / 3):
        for random_state in (0, 42):
            ours, sk = both(X, y, sample_weight, random_state=random_state, **params)
            assert_same_model(ours, sk)


def test_warm_start_with_early_stopping_gives_scikit_learns_model():
    X, y = dense("digits.csv", np.float64)
    params = {"early_stopping": True, "warm_start": True, "max_iter": 3}
    sk = quietly(lambda: SkPerceptron(**params).fit(X, y))
    ours = quietly(lambda: perceptron.Perceptron(**params).fit(X, y))
    quietly(lambda: sk.fit(X, y))
    quietly(lambda: ours.fit(X, y))
    assert_same_model(ours, sk)


def test_the_model_is_the_last_epochs_and_the_held_out_rows_are_not_trained_on():
    # The held-out rows are scikit-learn's split; the model is what the
    # textbook loop makes of the other rows in n_iter_ epochs (the last
    # epoch's weights, not the best held-out epoch's).
    X, y = dense("breast_cancer.csv", np.float64)
    ours = quietly(
        lambda: perceptron.Perceptron(early_stopping=True, shuffle=False, random_state=4).fit(X, y)
    )
    scores = report(ours)["validation_accuracy"]
    assert len(scores) == ours.n_iter_ and max(scores) > scores[-1]
    _, held = next(StratifiedShuffleSplit(test_size=0.1, random_state=4).split(X, y))
    trained = np.setdiff1d(np.arange(len(y)), held)
    alone = quietly(
        lambda: perceptron.Perceptron(shuffle=False, tol=None, max_iter=ours.n_iter_).fit(
            X[trained], y[trained]
        )
    )
    np.testing.assert_array_equal(bits(ours.coef_), bits(alone.coef_))
    np.testing.assert_array_equal(bits(ours.intercept_), bits(alone.intercept_))
    assert report(ours)["validation_rows"] == len(held) == 57


@pytest.mark.parametrize("random_state", [0, 7, 42])
@pytest.mark.parametrize(
    "counts, fraction",
    [
        ([50, 50], 0.1),
        ([3, 5], 0.3),
        ([7, 7, 7], 0.5),
        ([2, 2, 2, 2, 2, 2], 0.5),
        ([9, 1 + 9, 33, 4], 0.2),
        ([100, 3, 3, 3, 3], 0.25),
    ],
)
def test_the_split_is_stratified_shuffle_splits(counts, fraction, random_state):
    # Ties in the remainders are broken by the generator: several classes
    # of the same size exercise them.
    rng = np.random.RandomState(random_state)
    y = rng.permutation(np.repeat(np.arange(len(counts)), counts))
    _, test = next(
        StratifiedShuffleSplit(test_size=fraction, random_state=random_state).split(
            np.zeros((len(y), 1)), y
        )
    )
    ours = _validation_split(
        y, np.arange(len(counts)), fraction, np.random.RandomState(random_state), np.ones(len(y))
    )
    np.testing.assert_array_equal(ours, np.sort(test))
    # And it advances a generator as far.
    theirs, mine = np.random.RandomState(1), np.random.RandomState(1)
    next(StratifiedShuffleSplit(test_size=fraction, random_state=theirs).split(np.zeros((len(y), 1)), y))
    _validation_split(y, np.arange(len(counts)), fraction, mine, np.ones(len(y)))
    assert mine.randint(1000) == theirs.randint(1000)


X8 = np.array(
    [[1, 1, 0], [1, 1, 0], [0, 0, 1], [0, 0, 1], [0, 1, 1], [0, 1, 1], [1, 0, 0], [1, 0, 0]],
    dtype=np.float64,
)


@pytest.mark.parametrize(
    "y, fraction, sample_weight, said",
    [
        ([1, 1, 1, 1, 2, 2, 2, 2], 0.99, None, "the resulting train set will be empty"),
        ([1, 1, 1, 1, 2, 2, 2, 2], 0.01, None, "The test_size = 1 should be greater"),
        ([1, 1, 1, 2, 2, 3, 3, 3], 0.8, None, "The train_size = 1 should be greater"),
        ([1, 1, 1, 1, 1, 1, 1, 2], 0.3, None, "Classes with too few members are: [2]"),
        ([1, 1, 1, 1, 2, 2, 2, 2], 0.5, np.zeros(8), "The sample weights for validation set are all zero"),
    ],
)
def test_a_split_that_cannot_be_made_is_refused_as_scikit_learn_refuses_it(y, fraction, sample_weight, said):
    y = np.array(y)
    with pytest.raises(ValueError) as theirs:
        SkPerceptron(early_stopping=True, validation_fraction=fraction).fit(X8, y, sample_weight=sample_weight)
    ours = perceptron.Perceptron(early_stopping=True, validation_fraction=fraction)
    with pytest.raises(ValueError) as refused:
        ours.fit(X8, y, sample_weight=sample_weight)
    message = str(refused.value)
    assert message.startswith(
        f"early_stopping=True holds out validation_fraction={fraction!r} of the 8 rows, "
        "stratified by class, and cannot: "
    )
    assert said in message
    # scikit-learn's own words, which name a binary split's classes -1.0
    # and 1.0 where these name the labels.
    assert message.endswith(str(theirs.value).replace("[1.0]", "[2]"))
    assert not hasattr(ours, "coef_")


def test_the_parameters_are_checked():
    X, y = dense("breast_cancer.csv", np.float64)
    for fraction in (0.0, 1.0, -0.5):
        with pytest.raises(ValueError, match=r"validation_fraction must be a float in the range \(0.0, 1.0\)"):
            perceptron.Perceptron(early_stopping=True, validation_fraction=fraction).fit(X, y)
    with pytest.raises(TypeError, match="early_stopping must be a bool"):
        perceptron.Perceptron(early_stopping="yes").fit(X, y)
    with pytest.raises(ValueError, match="early_stopping should be False with partial_fit"):
        perceptron.Perceptron(early_stopping=True).partial_fit(X, y, classes=np.unique(y))


def test_a_saved_model_remembers_early_stopping(tmp_path):
    X, y = dense("digits.csv", np.float64)
    ours = quietly(lambda: perceptron.Perceptron(early_stopping=True, validation_fraction=0.25).fit(X, y))
    ours.save(tmp_path / "m.json")
    loaded = perceptron.load(tmp_path / "m.json")
    assert (loaded.early_stopping, loaded.validation_fraction) == (True, 0.25)
    assert loaded.n_iter_ == ours.n_iter_
    np.testing.assert_array_equal(bits(loaded.coef_), bits(ours.coef_))
    assert report(ours)["keep"] == "last" and report(ours)["validation_rows"] == 450
