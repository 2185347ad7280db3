"""scikit-learn's own tests of its Perceptron, run against this package.

Provenance: adapted from scikit-learn 1.9.1,
``sklearn/linear_model/tests/test_perceptron.py`` (every test) and
``sklearn/linear_model/tests/test_sgd.py`` (the classifier tests whose
subject this estimator has), with ``perceptron.Perceptron`` in place of
scikit-learn's estimators. What changed is marked ``# adapted:``. Both
estimators' defaults are those tests' defaults where they name none.

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
- test_sgd.py, not reproduced yet (see docs/python.md, "Switching from
  scikit-learn"): ``early_stopping`` and ``validation_fraction``
  (test_early_stopping, test_validation_set_not_used_for_training,
  test_not_enough_sample_for_early_stopping,
  test_sgd_early_stopping_with_partial_fit, and test_n_iter_no_change's
  ``early_stopping=True`` half); ``class_weight`` and ``sample_weight``
  (test_class_weights, test_equal_class_weight,
  test_wrong_class_weight_label, test_weights_multiplied,
  test_balanced_weight, test_sample_weights, test_wrong_sample_weights,
  test_partial_fit_weight_class_balanced).
- test_sgd.py tests of scikit-learn's internals (the Cython loss classes,
  ``_plain_sgd``, the dataset classes, SGD's numerical stability,
  pickling of its loss objects, threading of its OvR).
"""

import numpy as np
import pytest
import scipy.sparse as sp
from sklearn.base import clone
from sklearn.datasets import load_iris
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
def test_n_iter_no_change(sparse):
    Xi, Yi = iris.data, iris.target
    # test that n_iter_ increases monotonically with n_iter_no_change
    # adapted: early_stopping=False only (early_stopping is not reproduced).
    n_iter_list = [
        sgd_classifier(sparse, n_iter_no_change=n_iter_no_change, tol=1e-4, max_iter=1000)
        .fit(Xi, Yi)
        .n_iter_
        for n_iter_no_change in [2, 3, 10]
    ]
    assert_array_equal(n_iter_list, sorted(n_iter_list))


def test_the_adapted_factory_is_scikit_learns_on_dense_data():
    # adapted: not in test_sgd.py. The dense factory's model is scikit-learn's
    # Perceptron with the same arguments, bit for bit.
    from sklearn.linear_model import Perceptron as SkPerceptron

    ours = sgd_classifier(False, max_iter=20).fit(X2, Y2)
    sk = SkPerceptron(random_state=42, tol=None, max_iter=20).fit(X2, Y2)
    np.testing.assert_array_equal(bits(ours.coef_), bits(sk.coef_))
