"""Bad input is a ValueError or TypeError that says what is wrong, in the
command line's words where it has them; nothing crashes, and a failed fit
leaves the estimator as it was."""

import warnings

import numpy as np
import pytest
import scipy.sparse as sp
from sklearn.exceptions import ConvergenceWarning, NotFittedError

import perceptron
from conftest import DATA

X = np.array([[1.0, 2.0, 3.0], [4.0, 5.0, 6.0], [7.0, 8.0, 9.0], [1.0, 0.0, 1.0]])
y = np.array([0, 1, 1, 0])


def fitted():
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", ConvergenceWarning)
        return perceptron.Perceptron(max_iter=3).fit(X, y)


@pytest.mark.parametrize("bad, message", [
    (np.nan, "X: row 2, feature 3: value NaN is not finite; values must be finite numbers"),
    (np.inf, "X: row 2, feature 3: value inf is not finite; values must be finite numbers"),
    (-np.inf, "X: row 2, feature 3: value -inf is not finite"),
])
def test_non_finite_values_are_refused_naming_row_and_feature(bad, message):
    Xb = X.copy()
    Xb[1, 2] = bad
    for data in (Xb, Xb.astype(np.float32), sp.csr_matrix(Xb)):
        with pytest.raises(ValueError, match=message.replace("(", r"\(")):
            perceptron.Perceptron().fit(data, y)
    clf = fitted()
    with pytest.raises(ValueError, match="row 2, feature 3"):
        clf.predict(Xb)
    with pytest.raises(ValueError, match="row 2, feature 3"):
        clf.decision_function(sp.csr_matrix(Xb))


def test_a_single_class_is_refused_as_the_command_line_refuses_it():
    with pytest.raises(ValueError, match=r'y: only one label value \("1" \(4 rows\)\); '
                                         r"a perceptron needs two classes"):
        perceptron.Perceptron().fit(X, np.ones(4, dtype=int))


def test_other_feature_counts_at_predict_are_refused():
    clf = fitted()
    for cols in (4, 2):
        wrong = np.ones((2, cols))
        with pytest.raises(ValueError, match=f"X has {cols} features, but Perceptron is "
                                             "expecting 3 features as input: the model was "
                                             "trained on other data"):
            clf.predict(wrong)
        with pytest.raises(ValueError, match=f"X has {cols} features"):
            clf.decision_function(sp.csr_matrix(wrong))


def test_wrong_shapes_are_refused():
    clf = perceptron.Perceptron()
    with pytest.raises(ValueError, match="Expected 2D array, got 1D array"):
        clf.fit(X[:, 0], y)
    with pytest.raises(ValueError, match="X has 4 rows but y has 3 labels"):
        clf.fit(X, y[:3])
    with pytest.raises(ValueError, match="0 sample"):
        clf.fit(X[:0], y[:0])
    with pytest.raises(ValueError, match="requires y to be passed"):
        clf.fit(X, None)
    with pytest.raises(ValueError, match="Unknown label type"):
        clf.fit(X, [0.5, 1.5, 2.5, 3.25])
    with pytest.raises((TypeError, ValueError)):
        clf.fit([["a", "b", "c"]] * 4, y)
    with pytest.raises(NotFittedError):
        clf.predict(X)


@pytest.mark.parametrize("params, error, message", [
    ({"max_iter": 0}, ValueError, "max_iter must be at least 1, not 0"),
    ({"max_iter": 2.5}, TypeError, "max_iter must be an int"),
    ({"backend": "tpu"}, ValueError, "backend must be one of 'auto', 'cpu', 'gpu', 'reference'"),
    ({"precision": "float16"}, ValueError, "precision must be None, 'float32' or 'float64'"),
    ({"margin": -1.0}, ValueError, "margin must be a finite number >= 0"),
    ({"average": True, "pocket": True}, ValueError, "average and pocket are two variants"),
    ({"pocket": True}, ValueError, "the pocket variant is not available with one-vs-rest"),
    ({"shuffle": True, "random_state": -3}, ValueError, r"Seed must be between 0 and 2\*\*32 - 1"),
])
def test_bad_parameters_say_which_and_why(params, error, message):
    three = np.array([0, 1, 2, 0]) if params.get("pocket") and len(params) == 1 else y
    with pytest.raises(error, match=message):
        perceptron.Perceptron(**params).fit(X, three)


def test_partial_fit_needs_classes_first_and_known_labels():
    clf = perceptron.Perceptron()
    with pytest.raises(ValueError, match="classes must be passed on the first call"):
        clf.partial_fit(X, y)
    clf.partial_fit(X, y, classes=[0, 1])
    with pytest.raises(ValueError, match=r"y holds labels that are not among the classes \[0, 1\]: \[7\]"):
        clf.partial_fit(X, [0, 1, 7, 0])
    with pytest.raises(ValueError, match="X has 2 features"):
        clf.partial_fit(X[:, :2], y)


def test_a_failed_fit_leaves_the_estimator_as_it_was():
    clf = fitted()
    before = {k: (v.copy() if isinstance(v, np.ndarray) else v) for k, v in vars(clf).items()}
    Xb = np.vstack([X, np.ones((1, 5))[:, :3] * np.nan])
    with pytest.raises(ValueError):
        clf.fit(Xb, np.append(y, 1))
    with pytest.raises(ValueError):
        clf.fit(np.ones((4, 7)), np.ones(4))
    assert vars(clf).keys() == before.keys()
    for k, v in before.items():
        np.testing.assert_array_equal(getattr(clf, k), v, err_msg=k)


def test_not_converging_warns_and_says_so():
    Xn, yn = perceptron.load_svmlight(DATA / "heart_scale.svm")
    with pytest.warns(ConvergenceWarning, match=r"Not converged: the data was not separated "
                                                 r"within 3 epochs \(max_iter; the last epoch made"):
        clf = perceptron.Perceptron(max_iter=3).fit(Xn, yn)
    assert clf.converged_ is False and clf.n_iter_ == 3
    assert clf.margin_ is None and clf.mistake_bound_ is None
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        sep = perceptron.Perceptron().fit(*perceptron.load_csv(DATA / "iris_setosa.csv"))
    assert sep.converged_ is True and sep.mistakes_per_epoch_[-1] == 0
    assert sep.mistakes_per_epoch_.sum() <= sep.mistake_bound_
    assert sep.margin_ > 0 and sep.radius_ > 0


def test_warm_start_refuses_other_data_shapes():
    clf = fitted()
    clf.set_params(warm_start=True)
    with pytest.raises(ValueError, match="warm_start: X has 2 features, but coef_ was trained on 3"):
        clf.fit(X[:, :2], y)
    with pytest.raises(ValueError, match=r"warm_start: y has the classes \[0, 1, 2\]"):
        clf.fit(X, [0, 1, 2, 0])
    assert clf.n_features_in_ == 3


def test_loader_hints_name_the_loaders_and_their_keywords(tmp_path):
    # A CSV file read as LIBSVM: the hint names the CSV loader, not a flag.
    with pytest.raises(ValueError, match=r'iris_setosa.csv:1:1: expected a numeric label, found '
                       r'"1,5.1,3.5,1.4,0.2" \(is this a CSV file\? read it with '
                       r'perceptron.load_csv\)'):
        perceptron.load_svmlight(DATA / "iris_setosa.csv")
    # A semicolon inside a field of a comma file: the keyword to pass.
    bad = tmp_path / "semi.csv"
    bad.write_text("1,2,3\n-1,4;5,6\n")
    with pytest.raises(ValueError, match=r"if fields are separated by `;`, "
                       r"pass delimiter=';'\)"):
        perceptron.load_csv(bad)
    tab = tmp_path / "tab.csv"
    tab.write_text("1;2;3\n-1;4\t5;6\n")
    with pytest.raises(ValueError, match=r"pass delimiter='\\t'\)"):
        perceptron.load_csv(tab)
    # A text field on the first line of numbers: a header, perhaps.
    head = tmp_path / "head.csv"
    head.write_text("1,2,abc\n-1,4,5\n1,6,7\n")
    with pytest.raises(ValueError, match=r"if it is a header, pass header=True\)"):
        perceptron.load_csv(head)
    for path in (bad, tab, head):
        with pytest.raises(ValueError) as caught:
            perceptron.load_csv(path)
        assert "--" not in str(caught.value)
