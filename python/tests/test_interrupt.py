"""Ctrl-C during fit raises KeyboardInterrupt within a second and leaves the
estimator as it was; fit and predict release the GIL, so other Python
threads run meanwhile."""

import faulthandler
import os
import signal
import threading
import time
import warnings

import numpy as np
import pytest
from sklearn.exceptions import ConvergenceWarning

import perceptron
from conftest import in_order


def noise(rows=20_000, cols=200, seed=0):
    # Random labels: never separable, so a fit runs until max_iter.
    rng = np.random.default_rng(seed)
    return rng.standard_normal((rows, cols)), rng.integers(0, 2, rows)


def _seconds_to_interrupt(clf, X, y):
    """Fits `clf` with Ctrl-C sent half a second in: the seconds from the
    signal to the KeyboardInterrupt the fit must raise."""
    sent = []

    def ctrl_c():
        sent.append(time.monotonic())
        os.kill(os.getpid(), signal.SIGINT)

    timer = threading.Timer(0.5, ctrl_c)
    timer.start()
    with pytest.raises(KeyboardInterrupt):
        clf.fit(X, y)
    return time.monotonic() - sent[0]


@pytest.fixture
def watchdog():
    # A test of Ctrl-C must not hang the suite if Ctrl-C is ignored.
    faulthandler.dump_traceback_later(120, exit=True)
    yield
    faulthandler.cancel_dump_traceback_later()


@pytest.mark.skipif(os.name != "posix", reason="sends SIGINT")
@pytest.mark.parametrize("backend", ["cpu", "reference"])
def test_ctrl_c_raises_keyboard_interrupt_within_a_second(backend, watchdog):
    X, y = noise()
    clf = in_order(max_iter=2, backend=backend)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", ConvergenceWarning)
        clf.fit(X[:100], y[:100])
    before = {k: (v.copy() if isinstance(v, np.ndarray) else v) for k, v in vars(clf).items()}
    clf.set_params(max_iter=10**9)
    waited = _seconds_to_interrupt(clf, X, y)
    assert waited < 1.0, f"KeyboardInterrupt came {waited:.2f} s after SIGINT"
    clf.set_params(max_iter=2)
    assert vars(clf).keys() == before.keys()
    for k, v in before.items():
        np.testing.assert_array_equal(getattr(clf, k), v, err_msg=k)


@pytest.mark.skipif(os.name != "posix", reason="sends SIGINT")
@pytest.mark.parametrize("backend", ["cpu", "reference"])
def test_ctrl_c_stops_one_vs_rest_classes_trained_side_by_side(backend, watchdog):
    # scikit-learn's schedule trains each class alone, several at once: a
    # stop reaches every class in training, and the fit raises, whichever
    # classes had finished (it used to panic on the classes never trained).
    rng = np.random.default_rng(1)
    X, y = rng.standard_normal((20_000, 200)), rng.integers(0, 4, 20_000)
    clf = perceptron.Perceptron(max_iter=10**9, tol=None, backend=backend)
    waited = _seconds_to_interrupt(clf, X, y)
    assert waited < 1.0, f"KeyboardInterrupt came {waited:.2f} s after SIGINT"
    assert not hasattr(clf, "coef_")


def _count_while(busy):
    """Counts how often this thread runs Python code while `busy` runs in
    another thread, and how long that took."""
    done = threading.Event()
    worker = threading.Thread(target=lambda: (busy(), done.set()))
    t0 = time.monotonic()
    worker.start()
    count = 0
    while not done.is_set():
        count += 1
    worker.join()
    return count, time.monotonic() - t0


def test_fit_and_predict_release_the_gil():
    X, y = noise(rows=5000)
    clf = in_order(max_iter=20, backend="reference")

    def fit():
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", ConvergenceWarning)
            clf.fit(X, y)

    # As many epochs as take about 0.6 s here, so the fit is long enough to
    # measure however fast the loop is (the data never separates).
    t0 = time.monotonic()
    fit()
    per_epoch = (time.monotonic() - t0) / 20
    clf.set_params(max_iter=max(150, int(0.6 / max(per_epoch, 1e-6))))
    count, seconds = _count_while(fit)
    assert seconds > 0.3, "the fit must take long enough to measure"
    # A thread that held the GIL through the fit would leave this loop a
    # few iterations (one per switch interval at most); it ran freely.
    assert count > 50_000 * seconds, (count, seconds)
    big = np.tile(X, (10, 1))
    count, seconds = _count_while(lambda: clf.predict(big))
    assert count > 10_000 * seconds, (count, seconds)
