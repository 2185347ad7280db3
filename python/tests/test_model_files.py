"""The command line's model file, both ways: a model the `perceptron`
command trains loads with every weight at its bits and predicts what
`perceptron predict` prints; a model Python saves is one the command reads
and predicts with the same way."""

import json
import warnings

import numpy as np
import pytest
from sklearn.exceptions import ConvergenceWarning

import perceptron
from conftest import DATA, bits, in_order


def fit(X, y, **params):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", ConvergenceWarning)
        return in_order(**params).fit(X, y)


def cli_predictions(cli, model, data):
    return cli("predict", model, data).split()


@pytest.mark.parametrize("precision", ["f32", "f64"])
def test_a_model_the_command_trains_loads_exactly(cli, tmp_path, precision):
    model = tmp_path / "m.json"
    cli("train", DATA / "digits_3v5.csv", "-o", model, "--precision", precision)
    clf = perceptron.load(model)
    dtype = np.float32 if precision == "f32" else np.float64
    X, y = perceptron.load_csv(DATA / "digits_3v5.csv", dtype=dtype)
    ours = fit(X, y)
    assert clf.coef_.dtype == dtype
    np.testing.assert_array_equal(bits(clf.coef_), bits(ours.coef_))
    np.testing.assert_array_equal(bits(clf.intercept_), bits(ours.intercept_))
    assert clf.classes_.tolist() == [-1, 1]
    assert clf.epochs_run_ == ours.epochs_run_ and clf.converged_ is True
    assert clf.mistakes_per_epoch_.tolist() == ours.mistakes_per_epoch_.tolist()
    assert clf.mistake_bound_ == pytest.approx(ours.mistake_bound_, rel=1e-12)
    printed = cli_predictions(cli, model, DATA / "digits_3v5.csv")
    assert [str(p) for p in clf.predict(X)] == [str(int(float(p))) for p in printed]


def test_a_one_vs_rest_model_the_command_trains_predicts_the_same(cli, tmp_path):
    model = tmp_path / "ovr.json"
    cli("train", DATA / "digits.csv", "--multiclass", "ovr", "--max-epochs", "5",
        "--precision", "f64", "-o", model)
    clf = perceptron.load(model)
    X, y = perceptron.load_csv(DATA / "digits.csv")
    printed = cli_predictions(cli, model, DATA / "digits.csv")
    assert [str(p) for p in clf.predict(X)] == printed
    # Each class's perceptron is the one Python trains, whatever the order
    # of the heads in the file.
    ours = fit(X, y, max_iter=5)
    for head, label in enumerate(clf.classes_):
        row = int(np.flatnonzero(ours.classes_ == label)[0])
        np.testing.assert_array_equal(bits(clf.coef_[head]), bits(ours.coef_[row]))
        assert clf.intercept_[head] == ours.intercept_[row]
    assert clf.margin_.shape == (10,)


@pytest.mark.parametrize("params", [{}, {"fit_intercept": False}, {"average": True},
                                    {"margin": 0.25, "max_iter": 4}])
@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_a_model_python_saves_is_read_by_the_command(cli, tmp_path, params, dtype):
    X, y = perceptron.load_csv(DATA / "breast_cancer.csv", dtype=dtype)
    clf = fit(X, y, **{"max_iter": 20, **params})
    path = tmp_path / "py.json"
    clf.save(path)
    doc = json.loads(path.read_text())
    assert doc["format"] == "perceptron-model"
    assert doc["precision"] == ("f32" if dtype == np.float32 else "f64")
    printed = cli_predictions(cli, path, DATA / "breast_cancer.csv")
    assert [float(p) for p in printed] == clf.predict(X).tolist()
    back = perceptron.load(path)
    np.testing.assert_array_equal(bits(back.coef_), bits(clf.coef_))
    np.testing.assert_array_equal(bits(back.intercept_), bits(clf.intercept_))
    np.testing.assert_array_equal(back.classes_, clf.classes_)
    np.testing.assert_array_equal(back.predict(X), clf.predict(X))
    for name in ("fit_intercept", "average", "margin", "max_iter"):
        assert back.get_params()[name] == clf.get_params()[name], name


def test_one_vs_rest_and_text_labels_round_trip(tmp_path):
    X, y = perceptron.load_csv(DATA / "digits.csv")
    names = np.array(["zero", "one", "two", "three", "four", "five", "six", "seven",
                      "eight", "nine"])[y.astype(int)]
    clf = fit(X, names, max_iter=3)
    clf.save(tmp_path / "m.json")
    back = perceptron.load(tmp_path / "m.json")
    assert back.classes_.tolist() == clf.classes_.tolist()
    np.testing.assert_array_equal(bits(back.coef_), bits(clf.coef_))
    np.testing.assert_array_equal(back.predict(X), clf.predict(X))


def test_load_refuses_what_is_not_a_model(tmp_path):
    with pytest.raises(FileNotFoundError, match="cannot open model file"):
        perceptron.load(tmp_path / "missing.json")
    bad = tmp_path / "bad.json"
    bad.write_text('{"format": "something else"}')
    with pytest.raises(ValueError, match="is not a perceptron model file"):
        perceptron.load(bad)


def test_standard_scaling_is_scikit_learns_on_breast_cancer_in_f64(cli, tmp_path):
    """The claim of docs/training.md (Feature scaling): `--scale standard
    --precision f64` computes StandardScaler's mean_ and scale_ bit for bit
    on breast_cancer (in f32 the features are rounded to float32 first, so
    the statistics are those of other numbers)."""
    import json

    from sklearn.datasets import load_breast_cancer
    from sklearn.preprocessing import StandardScaler

    model = tmp_path / "bc.json"
    cli("train", DATA / "breast_cancer.csv", "--scale", "standard", "--precision", "f64",
        "--max-epochs", "1", "-o", model)
    scaling = json.loads(model.read_text())["scaling"]
    X, _ = load_breast_cancer(return_X_y=True)
    np.testing.assert_array_equal(perceptron.load_csv(DATA / "breast_cancer.csv")[0], X)
    ss = StandardScaler().fit(X)
    np.testing.assert_array_equal(bits(np.array(scaling["mean"])), bits(ss.mean_))
    np.testing.assert_array_equal(bits(np.array(scaling["scale"])), bits(ss.scale_))
