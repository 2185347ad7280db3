"""scikit-learn's own tests of its Perceptron, run against this package.

Provenance: adapted from scikit-learn 1.9.1,
``sklearn/linear_model/tests/test_perceptron.py`` (every test) and
``sklearn/linear_model/tests/test_sgd.py`` (the classifier tests whose
subject this estimator has, early stopping's included), with
``perceptron.Perceptron`` in place of scikit-learn's estimators. What
changed is marked ``# adapted:``. Both estimators' defaults are those
tests' defaults where they name none.

Licence of the original code (BSD 3-Clause):

    Copyright (c) 2007-2025 The scikit-learn developers. All rights reserved.

    Redistribution and use in source and binary forms, with or without
    modification, are permitted provided that the following conditions are
    met: (a) redistributions of source code must retain the above copyright
    notice, this list of conditions and the following disclaimer; (b)
    redistributions in binary form must reproduce the above copyright
    notice, this list of conditions and the following disclaimer in the
    documentation and/or other materials provided with the distribution;
    (c) neither the name of the copyright holder nor the names of its
    contributors may be used to endorse or promote products derived from
    this software without specific prior written permission. THIS SOFTWARE
    IS PROVIDED BY THE COPYRIGHT HOLDERS AND CONTRIBUTORS "AS IS" AND ANY
    EXPRESS OR IMPLIED WARRANTIES ARE DISCLAIMED; IN NO EVENT SHALL THE
    COPYRIGHT HOLDER OR CONTRIBUTORS BE LIABLE FOR ANY DAMAGES ARISING IN ANY
    WAY OUT OF THE USE OF THIS SOFTWARE.

Not taken, and why:

- test_perceptron.py ``test_perceptron_l1_ratio``: ``penalty`` and
  ``l1_ratio`` are not parameters here (the perceptron has no penalty).
- test_sgd.py, tests of what this estimator does not have: SGD's learning
  rates, ``alpha``, ``eta0``, ``power_t`` and penalties (test_warm_start,
  test_learning_rate_PA_raises, test_adaptive_longer_than_constant,
  test_sgd_l1_ratio_not_used, test_sgd_failing_penalty_validation,
  test_power_t_limits, test_sgd_l1, test_sgd_clf); SGD's averaging
  (test_plain_has_no_average_attr, test_late_onset_averaging_*,
  test_average_binary_computed_correctly, test_sgd_multiclass_average,
  test_partial_fit_multiclass_average; this package's ``average`` is the
  averaged perceptron); probabilities and other losses (test_sgd_proba,
  test_sgd_predict_proba_method_access, test_regression_losses, every
  SGDRegressor and SGDOneClassSVM test, the loss-function tests);
  ``coef_init`` and ``intercept_init`` arguments of ``fit``
  (test_provide_coef, test_set_coef_multiclass, test_set_intercept_*,
  test_sgd_multiclass_with_init_coef); ``n_jobs``
  (test_sgd_multiclass_njobs).
- test_sgd.py, not adapted yet: the tests of ``class_weight`` and
  ``sample_weight`` (test_class_weights, test_equal_class_weight,
  test_wrong_class_weight_label, test_weights_multiplied,
  test_balanced_weight, test_sample_weights, test_wrong_sample_weights,
  test_partial_fit_weight_class_balanced); the weights themselves are
  compared with scikit-learn's in test_sklearn_defaults.py and
  test_sklearn_early_stopping.py.
- test_sgd.py tests of scikit-learn's internals (the Cython loss classes,
  ``_plain_sgd``, the dataset classes, SGD's numerical stability,
  pickling of its loss objects, threading of its OvR), and
  test_SGDClassifier_fit_for_all_backends (joblib backends of its OvR).
"""

import json

import numpy as np
import pytest
import scipy.sparse as sp
from sklearn.base import clone
from sklearn.datasets import load_iris
from sklearn.model_selection import RandomizedSearchCV, StratifiedShuffleSplit
from sklearn.preprocessing import LabelEncoder
from sklearn.utils import check_random_state
from sklearn.utils._testing import assert_array_almost_equal, assert_array_equal

from perceptron import Perceptron
from conftest import bits

# -- test_perceptron.py -------------------------------------------------------

iris = load_iris()
random_state = check_random_state(12)
indices = np.arange(iris.data.shape[0])
random_state.shuffle(indices)
X = iris.data[indices]
y = iris.target[indices]


class MyPerceptron:
    def __init__(self, n_iter=1):
        self.n_iter = n_iter

    def fit(self, X, y):
        n_samples, n_features = X.shape
        self.w = np.zeros(n_features, dtype=np.float64)
        self.b = 0.0

        for t in range(self.n_iter):
            for i in range(n_samples):
                if self.predict(X[i])[0] != y[i]:
                    self.w += y[i] * X[i]
                    self.b += y[i]

    def project(self, X):
        return np.dot(X, self.w) + self.b

    def predict(self, X):
        X = np.atleast_2d(X)
        return np.sign(self.project(X))


@pytest.mark.parametrize("container", [sp.csr_matrix, sp.csr_array, np.array])
def test_perceptron_accuracy(container):
    # adapted: CSR_CONTAINERS written out.
    data = container(X)
    clf = Perceptron(max_iter=100, tol=None, shuffle=False)
    clf.fit(data, y)
    score = clf.score(data, y)
    assert score > 0.7


def test_perceptron_correctness():
    y_bin = y.copy()
    y_bin[y != 1] = -1

    clf1 = MyPerceptron(n_iter=2)
    clf1.fit(X, y_bin)

    clf2 = Perceptron(max_iter=2, shuffle=False, tol=None)
    clf2.fit(X, y_bin)

    assert_array_almost_equal(clf1.w, clf2.coef_.ravel())
    # adapted: and bit for bit, with the intercept (MyPerceptron's
    # np.dot may sum in another order, so only where it agrees).
    if np.array_equal(clf1.w, clf2.coef_.ravel()):
        assert clf1.b == clf2.intercept_[0]


def test_undefined_methods():
    clf = Perceptron(max_iter=100)
    for meth in ("predict_proba", "predict_log_proba"):
        with pytest.raises(AttributeError):
            getattr(clf, meth)


# -- test_sgd.py --------------------------------------------------------------

XS = np.array([[-2, -1], [-1, -1], [-1, -2], [1, 1], [1, 2], [2, 1]])
YS = [1, 1, 1, 2, 2, 2]
T = np.array([[-1, -1], [2, 2], [3, 2]])
true_result = [1, 2, 2]

X2 = np.array(
    [
        [-1, 1],
        [-0.75, 0.5],
        [-1.5, 1.5],
        [1, 1],
        [0.75, 0.5],
        [1.5, 1.5],
        [-1, -1],
        [0, -0.5],
        [1, -1],
    ]
)
Y2 = ["one"] * 3 + ["two"] * 3 + ["three"] * 3
T2 = np.array([[-1.5, 0.5], [1, 2], [0, -2]])
true_result2 = ["one", "two", "three"]

X3 = np.array(
    [
        [1, 1, 0, 0, 0, 0],
        [1, 1, 0, 0, 0, 0],
        [0, 0, 1, 0, 0, 0],
        [0, 0, 1, 0, 0, 0],
        [0, 0, 0, 0, 1, 1],
        [0, 0, 0, 0, 1, 1],
        [0, 0, 0, 1, 0, 0],
        [0, 0, 0, 1, 0, 0],
    ]
)
Y3 = np.array([1, 1, 1, 1, 2, 2, 2, 2])


def sgd_classifier(sparse=False, **kwargs):
    """test_sgd.py's SGDClassifier and SparseSGDClassifier factories (its
    defaults random_state=42, tol=None, max_iter=5), on this estimator."""
    kwargs.setdefault("random_state", 42)
    kwargs.setdefault("tol", None)
    kwargs.setdefault("max_iter", 5)
    clf = Perceptron(**kwargs)
    if not sparse:
        return clf

    class Sparse(Perceptron):
        def fit(self, X, y, *args, **kw):
            return super().fit(sp.csr_array(X), y, *args, **kw)

        def partial_fit(self, X, y, *args, **kw):
            return super().partial_fit(sp.csr_array(X), y, *args, **kw)

        def decision_function(self, X):
            return super().decision_function(sp.csr_array(X))

    return Sparse(**kwargs)


KLASS = [False, True]  # dense, sparse


@pytest.mark.parametrize("sparse", KLASS)
def test_input_format(sparse):
    # adapted: no alpha.
    clf = sgd_classifier(sparse, shuffle=False)
    clf.fit(XS, YS)
    Y_ = np.array(YS)[:, np.newaxis]

    Y_ = np.c_[Y_, Y_]
    with pytest.raises(ValueError):
        clf.fit(XS, Y_)


@pytest.mark.parametrize("sparse", KLASS)
def test_clone(sparse):
    # adapted: penalty="l1" / "l2" become max_iter, a parameter this has.
    clf = sgd_classifier(sparse, max_iter=3)
    clf = clone(clf)
    clf.set_params(max_iter=4)
    clf.fit(XS, YS)

    clf2 = sgd_classifier(sparse, max_iter=4)
    clf2.fit(XS, YS)

    assert_array_equal(clf.coef_, clf2.coef_)


@pytest.mark.parametrize("sparse", KLASS)
def test_sgd_at_least_two_labels(sparse):
    # Target must have at least two labels
    clf = sgd_classifier(sparse, max_iter=20)
    with pytest.raises(ValueError):
        clf.fit(X2, np.ones(9))


@pytest.mark.parametrize("sparse", KLASS)
def test_sgd_multiclass(sparse):
    # Multi-class test case
    clf = sgd_classifier(sparse, max_iter=20).fit(X2, Y2)
    assert clf.coef_.shape == (3, 2)
    assert clf.intercept_.shape == (3,)
    assert clf.decision_function([[0, 0]]).shape == (1, 3)
    pred = clf.predict(T2)
    assert_array_equal(pred, true_result2)


@pytest.mark.parametrize("sparse", KLASS)
def test_partial_fit_exception(sparse):
    clf = sgd_classifier(sparse)
    # classes was not specified
    with pytest.raises(ValueError):
        clf.partial_fit(X3, Y3)


@pytest.mark.parametrize("sparse", KLASS)
def test_partial_fit_binary(sparse):
    third = XS.shape[0] // 3
    clf = sgd_classifier(sparse)
    classes = np.unique(YS)

    clf.partial_fit(XS[:third], YS[:third], classes=classes)
    assert clf.coef_.shape == (1, XS.shape[1])
    assert clf.intercept_.shape == (1,)
    assert clf.decision_function([[0, 0]]).shape == (1,)

    clf.partial_fit(XS[third:], YS[third:])
    y_pred = clf.predict(T)
    assert_array_equal(y_pred, true_result)


@pytest.mark.parametrize("sparse", KLASS)
def test_partial_fit_multiclass(sparse):
    third = X2.shape[0] // 3
    clf = sgd_classifier(sparse)
    classes = np.unique(Y2)

    clf.partial_fit(X2[:third], Y2[:third], classes=classes)
    assert clf.coef_.shape == (3, X2.shape[1])
    assert clf.intercept_.shape == (3,)
    assert clf.decision_function([[0, 0]]).shape == (1, 3)

    clf.partial_fit(X2[third:], Y2[third:])


@pytest.mark.parametrize("sparse", KLASS)
def test_fit_then_partial_fit(sparse):
    # Partial_fit should work after initial fit in the multiclass case.
    clf = sgd_classifier(sparse)
    clf.fit(X2, Y2)
    clf.partial_fit(X2, Y2)  # no exception here


@pytest.mark.parametrize("sparse", KLASS)
def test_multiple_fit(sparse):
    # Test multiple calls of fit w/ different shaped inputs.
    clf = sgd_classifier(sparse, shuffle=False)
    clf.fit(XS, YS)
    assert hasattr(clf, "coef_")

    # Non-regression test: try fitting with a different label set.
    y = [["ham", "spam"][i] for i in LabelEncoder().fit_transform(YS)]
    clf.fit(XS[:, :-1], y)


@pytest.mark.parametrize("sparse", KLASS)
def test_early_stopping(sparse):
    Xi = iris.data[iris.target > 0]
    Yi = iris.target[iris.target > 0]
    for early_stopping in [True, False]:
        max_iter = 1000
        clf = sgd_classifier(
            sparse, early_stopping=early_stopping, tol=1e-3, max_iter=max_iter
        ).fit(Xi, Yi)
        assert clf.n_iter_ < max_iter


@pytest.mark.parametrize("sparse", KLASS)
def test_validation_set_not_used_for_training(sparse):
    Xi, Yi = iris.data, iris.target
    validation_fraction = 0.4
    seed = 42
    shuffle = False
    max_iter = 10
    # adapted: no learning_rate and eta0 (the perceptron's step is 1).
    clf1 = sgd_classifier(
        sparse,
        early_stopping=True,
        random_state=np.random.RandomState(seed),
        validation_fraction=validation_fraction,
        tol=None,
        max_iter=max_iter,
        shuffle=shuffle,
    )
    clf1.fit(Xi, Yi)
    assert clf1.n_iter_ == max_iter

    clf2 = sgd_classifier(
        sparse,
        early_stopping=False,
        random_state=np.random.RandomState(seed),
        tol=None,
        max_iter=max_iter,
        shuffle=shuffle,
    )

    cv = StratifiedShuffleSplit(test_size=validation_fraction, random_state=seed)
    idx_train, idx_val = next(cv.split(Xi, Yi))
    idx_train = np.sort(idx_train)  # remove shuffling
    clf2.fit(Xi[idx_train], Yi[idx_train])
    assert clf2.n_iter_ == max_iter

    assert_array_equal(clf1.coef_, clf2.coef_)


@pytest.mark.parametrize("sparse", KLASS)
def test_n_iter_no_change(sparse):
    Xi, Yi = iris.data, iris.target
    # test that n_iter_ increases monotonically with n_iter_no_change
    for early_stopping in [True, False]:
        n_iter_list = [
            sgd_classifier(
                sparse,
                early_stopping=early_stopping,
                n_iter_no_change=n_iter_no_change,
                tol=1e-4,
                max_iter=1000,
            )
            .fit(Xi, Yi)
            .n_iter_
            for n_iter_no_change in [2, 3, 10]
        ]
        assert_array_equal(n_iter_list, sorted(n_iter_list))


@pytest.mark.parametrize("sparse", KLASS)
def test_not_enough_sample_for_early_stopping(sparse):
    # test an error is raised if the training or validation set is empty
    clf = sgd_classifier(sparse, early_stopping=True, validation_fraction=0.99)
    with pytest.raises(ValueError):
        clf.fit(X3, Y3)


@pytest.mark.parametrize("sparse", KLASS)
def test_sgd_early_stopping_with_partial_fit(sparse):
    """Check that we raise an error for `early_stopping` used with
    `partial_fit`.
    """
    err_msg = "early_stopping should be False with partial_fit"
    with pytest.raises(ValueError, match=err_msg):
        sgd_classifier(sparse, early_stopping=True).partial_fit(XS, YS)


def test_multi_thread_multi_class_and_early_stopping():
    # This is a non-regression test for a bad interaction between
    # early stopping internal attribute and thread-based parallelism.
    # adapted: no alpha and n_jobs (not parameters here; the classes train
    # side by side on every core, each alone as in scikit-learn);
    # the perceptron's accuracy here is 0.78 (scikit-learn's Perceptron's
    # too), where the test asks more than 0.8 of SGD's regularised hinge.
    clf = Perceptron(
        tol=1e-3,
        max_iter=1000,
        early_stopping=True,
        n_iter_no_change=100,
        random_state=0,
    )
    clf.fit(iris.data, iris.target)
    assert clf.n_iter_ > clf.n_iter_no_change
    assert clf.n_iter_ < clf.n_iter_no_change + 20
    assert clf.score(iris.data, iris.target) > 0.75


def test_multi_core_gridsearch_and_early_stopping():
    # This is a non-regression test for a bad interaction between
    # early stopping internal attribute and process-based multi-core
    # parallelism.
    # adapted: validation_fraction in the grid in place of alpha (the
    # perceptron has none), and the perceptron's best score here is 0.747
    # (scikit-learn's Perceptron's too), where the test asks more than 0.8
    # of SGD's regularised hinge.
    param_grid = {
        "validation_fraction": [0.1, 0.2, 0.3],
        "n_iter_no_change": [5, 10, 50],
    }

    clf = Perceptron(tol=1e-2, max_iter=1000, early_stopping=True, random_state=0)
    search = RandomizedSearchCV(clf, param_grid, n_iter=5, n_jobs=2, random_state=0)
    search.fit(iris.data, iris.target)
    assert search.best_score_ > 0.7


def test_validation_mask_correctly_subsets():
    """Test that data passed to validation callback correctly subsets.

    Non-regression test for #23255.
    """
    Xi, Yi = iris.data, iris.target
    n_samples = Xi.shape[0]
    validation_fraction = 0.2
    clf = Perceptron(
        early_stopping=True,
        tol=1e-3,
        max_iter=1000,
        validation_fraction=validation_fraction,
    )
    # adapted: the held-out rows as the model's report counts them, in
    # place of a mock of scikit-learn's validation callback.
    clf.fit(Xi, Yi)
    held = json.loads(clf._info)["training"]["early_stopping"]["validation_rows"]
    assert held == int(n_samples * validation_fraction)


def test_sgd_error_on_zero_validation_weight():
    # Test that SGDClassifier raises error when all the validation samples
    # have zero sample_weight. Non-regression test for #17229.
    Xi, Yi = iris.data, iris.target
    sample_weight = np.zeros_like(Yi)
    validation_fraction = 0.4

    clf = Perceptron(early_stopping=True, validation_fraction=validation_fraction, random_state=0)

    error_message = (
        "The sample weights for validation set are all zero, consider using a"
        " different random state."
    )
    with pytest.raises(ValueError, match=error_message):
        clf.fit(Xi, Yi, sample_weight=sample_weight)


def test_the_adapted_factory_is_scikit_learns_on_dense_data():
    # adapted: not in test_sgd.py. The dense factory's model is scikit-learn's
    # Perceptron with the same arguments, bit for bit.
    from sklearn.linear_model import Perceptron as SkPerceptron

    ours = sgd_classifier(False, max_iter=20).fit(X2, Y2)
    sk = SkPerceptron(random_state=42, tol=None, max_iter=20).fit(X2, Y2)
    np.testing.assert_array_equal(bits(ours.coef_), bits(sk.coef_))
