"""The scikit-learn estimator: its parameters, the checks of its arguments
and its fitted attributes live here; the training and the predictions run in
``perceptron._core``, on the library's exact engines, with the GIL released.
"""

import inspect
import json
import math
import numbers
import os
import warnings

import numpy as np
import scipy.sparse as sp
from sklearn.base import BaseEstimator, ClassifierMixin
from sklearn.exceptions import ConvergenceWarning
from sklearn.utils import check_random_state
from sklearn.utils.multiclass import check_classification_targets
from sklearn.utils.class_weight import compute_class_weight
from sklearn.utils.validation import (
    _check_sample_weight,
    check_is_fitted,
    column_or_1d,
    validate_data,
)

from . import _core

_BACKENDS = ("auto", "cpu", "gpu", "reference")
# NumPy's np.iinfo(np.int32).max, the bound of scikit-learn's seeds.
_MAX_INT = np.iinfo(np.int32).max
# scikit-learn's SPARSE_INTERCEPT_DECAY (sklearn/linear_model/_base.py).
_SPARSE_INTERCEPT_DECAY = 0.01
_DTYPES = {"f32": np.float32, "f64": np.float64}


def _precision_name(precision):
    """``"f32"``, ``"f64"`` or None (from the data) for a ``precision``
    parameter: None, "float32"/"f32"/np.float32, "float64"/"f64"/np.float64."""
    if precision is None:
        return None
    if isinstance(precision, str):
        name = {"float32": "f32", "f32": "f32", "float64": "f64", "f64": "f64"}.get(precision)
    else:
        try:
            dtype = np.dtype(precision)
        except TypeError:
            dtype = None
        name = {np.dtype(np.float32): "f32", np.dtype(np.float64): "f64"}.get(dtype)
    if name is None:
        raise ValueError(
            f"precision must be None, 'float32' or 'float64', not {precision!r}"
        )
    return name


def _label_text(label):
    """A class label as the model file writes it."""
    if isinstance(label, (bytes, np.bytes_)):
        return label.decode()
    return str(label)


def _native(X):
    """X as ``perceptron._core`` takes it: a C-ordered, aligned array, or the
    three arrays and the column count of a CSR matrix in canonical form
    (sorted indices, no duplicates). Copies only what is not so already."""
    aligned = lambda a: np.require(a, requirements=["C_CONTIGUOUS", "ALIGNED"])
    if sp.issparse(X):
        if not X.has_canonical_format:
            X = X.copy()
            X.sum_duplicates()
        return (aligned(X.data), aligned(X.indices), aligned(X.indptr), X.shape[1])
    return aligned(X)


def _approximate_mode(class_counts, n_draws, rng):
    """scikit-learn 1.9's ``sklearn.utils.extmath._approximate_mode``, line
    for line: how many of ``n_draws`` rows each class gets, the ties of the
    remainders broken by ``rng``."""
    continuous = class_counts / class_counts.sum() * n_draws
    floored = np.floor(continuous)
    need_to_add = int(n_draws - floored.sum())
    if need_to_add > 0:
        remainder = continuous - floored
        values = np.sort(np.unique(remainder))[::-1]
        for value in values:
            (inds,) = np.where(remainder == value)
            add_now = min(len(inds), need_to_add)
            inds = rng.choice(inds, size=add_now, replace=False)
            floored[inds] += 1
            need_to_add -= add_now
            if need_to_add == 0:
                break
    return floored.astype(int)


def _validation_split(codes, labels, fraction, rng, sample_weight):
    """The rows scikit-learn 1.9's early stopping holds out, ascending: the
    test rows of the first split of ``StratifiedShuffleSplit(test_size=
    fraction, random_state=rng)`` on the classes ``codes`` (indices into
    ``labels``, sorted as ``np.unique`` sorts them), with its draws from
    ``rng`` in its order, its checks and its messages
    (``sklearn/model_selection/_split.py``, ``_validate_shuffle_split`` and
    ``StratifiedShuffleSplit._iter_indices``), then the checks of
    ``BaseSGD._make_validation_split``."""
    n_samples = len(codes)
    n_test = math.ceil(fraction * n_samples)
    n_train = n_samples - n_test
    if n_train == 0:
        raise ValueError(
            "With n_samples={}, test_size={} and train_size=None, the "
            "resulting train set will be empty. Adjust any of the "
            "aforementioned parameters.".format(n_samples, fraction)
        )
    class_counts = np.bincount(codes, minlength=len(labels))
    n_classes = len(class_counts)
    if np.min(class_counts) < 2:
        too_few_classes = np.asarray(labels)[class_counts < 2].tolist()
        raise ValueError(
            "The least populated classes in y have only 1"
            " member, which is too few. The minimum"
            " number of groups for any class cannot"
            " be less than 2. Classes with too few"
            " members are: %s" % (too_few_classes)
        )
    if n_train < n_classes:
        raise ValueError(
            "The train_size = %d should be greater or "
            "equal to the number of classes = %d" % (n_train, n_classes)
        )
    if n_test < n_classes:
        raise ValueError(
            "The test_size = %d should be greater or "
            "equal to the number of classes = %d" % (n_test, n_classes)
        )
    class_indices = np.split(np.argsort(codes, kind="stable"), np.cumsum(class_counts)[:-1])
    n_i = _approximate_mode(class_counts, n_train, rng)
    class_counts_remaining = class_counts - n_i
    t_i = _approximate_mode(class_counts_remaining, n_test, rng)
    train = []
    test = []
    for i in range(n_classes):
        permutation = rng.permutation(class_counts[i])
        perm_indices_class_i = class_indices[i].take(permutation, mode="clip")
        train.extend(perm_indices_class_i[: n_i[i]])
        test.extend(perm_indices_class_i[n_i[i] : n_i[i] + t_i[i]])
    # Drawn although only the sets matter here: the generator advances so.
    idx_train = rng.permutation(train)
    idx_val = rng.permutation(test)
    if not np.any(sample_weight[idx_val] > 0):
        raise ValueError(
            "The sample weights for validation set are all zero, consider using a"
            " different random state."
        )
    if idx_train.shape[0] == 0 or idx_val.shape[0] == 0:
        raise ValueError(
            "Splitting %d samples into a train set and a validation set "
            "with validation_fraction=%r led to an empty set (%d and %d "
            "samples). Please either change validation_fraction, increase "
            "number of samples, or disable early_stopping."
            % (n_samples, fraction, idx_train.shape[0], idx_val.shape[0])
        )
    return np.sort(idx_val)


class Perceptron(ClassifierMixin, BaseEstimator):
    """Rosenblatt's classic perceptron, trained exactly on the CPU and the GPU.

    Every backend gives the model of the textbook sequential loop, bit for
    bit: for each row in turn, s = w.x + b (summed in index order, bias
    last); the row is a mistake iff y*s <= 0 (y = -1 or +1, the second of
    ``classes_`` being +1), and then w += y*x, b += y. More than two classes
    train one perceptron per class (one-vs-rest).

    The defaults are scikit-learn's, and so is the model: with any
    ``random_state``, ``coef_``, ``intercept_``, ``n_iter_`` and ``t_``
    equal those of ``sklearn.linear_model.Perceptron()`` bit for bit on
    dense float64 data (and float32 wherever no margin falls between its
    float64 and this package's float32 sums). The rows are reshuffled before
    every epoch as scikit-learn reshuffles them, and the run stops by its
    rule on the epoch's mean hinge loss. ``early_stopping=True`` is
    scikit-learn's too, bit for bit: the same held-out rows, the same rule
    on their accuracy, the last epoch's weights (see docs/python.md for
    where that could part). ``shuffle=False, tol=None`` is the textbook
    loop in file order, which stops after the first epoch without a
    mistake (``perceptron train``'s model). On sparse float64 input the
    model is scikit-learn's too: its update there moves the intercept by
    0.01·y, and so does this one by default (``intercept_decay``).

    Parameters
    ----------
    max_iter : int, default=1000
        Epochs at most. A run that reaches it warns with
        ``ConvergenceWarning`` as scikit-learn's does.
    tol : float or None, default=1e-3
        scikit-learn's stopping rule: an epoch improves when its mean hinge
        loss, sum of max(0, -y*s) / rows, is below the best before it by
        ``tol`` (with ``early_stopping``: when its held-out accuracy is
        above the best before it by ``tol``); ``n_iter_no_change`` epochs in
        a row that do not stop the run. None: no rule (the run stops at an
        epoch without a mistake, or ``max_iter``).
    n_iter_no_change : int, default=5
        Epochs without improvement that stop the run.
    fit_intercept : bool, default=True
        Learn the bias b (a constant feature 1, placed last).
    shuffle : bool, default=True
        Reshuffle the rows before every epoch, as scikit-learn does
        (``perceptron train --shuffle-every-epoch``).
    random_state : int, RandomState instance or None, default=0
        Where each perceptron's shuffle seed (and ``early_stopping``'s
        split) is drawn from, as scikit-learn draws them (an int S is
        ``--seed S``).
    early_stopping : bool, default=False
        scikit-learn's early stopping: hold out a stratified
        ``validation_fraction`` of the rows (scikit-learn's
        ``StratifiedShuffleSplit``, drawn from ``random_state`` in its
        order), never train on them, judge every epoch by each perceptron's
        accuracy on them (weighted by their ``sample_weight``) with the
        ``tol`` / ``n_iter_no_change`` rule, and return the last epoch's
        weights, as scikit-learn does (``perceptron train
        --validation-fraction`` keeps the best epoch's instead). A split
        that cannot be made is a ValueError with scikit-learn's message.
        Not with ``partial_fit``.
    validation_fraction : float in (0, 1), default=0.1
        The share of the rows ``early_stopping`` holds out.
    average : bool, default=False
        Return the average of the weights after every row visit (the
        averaged perceptron, for noisy data).
    pocket : bool, default=False
        Return the weights with the fewest training mistakes seen (Gallant's
        pocket with ratchet). Binary only.
    margin : float, default=0.0
        Update when y*s <= margin instead of 0.
    backend : {"auto", "cpu", "gpu", "reference"}, default="auto"
        What computes the margins: a hardware GPU for dense rows when there
        is one, with all CPU cores beside it (each stretch of rows walked
        by whichever is measured faster; the cores alone while the GPU
        starts), else all CPU cores ("auto"; also when ``shuffle=True``
        reshuffles the rows every epoch, which a GPU would copy and upload
        anew each epoch, and when ``max_iter`` epochs over the data (times
        its classes, one versus the rest) visit fewer than 2**26 stored
        values, a fit over before a GPU could start); all
        CPU cores; a GPU alone (any Vulkan, Metal or DX12 adapter, software
        ones such as lavapipe included); or the plain textbook loop. All
        give the identical model.
    adapter : str or None, default=None
        Part of the name of the GPU adapter to use (with "auto", in place
        of the hardware GPU it would look for).
    precision : {None, "float32", "float64"}, default=None
        The arithmetic of training and prediction. None: float32 data trains
        in float32, anything else in float64.
    class_weight : dict, "balanced" or None, default=None
        scikit-learn's class weights: an update on a row of class k adds
        c_k*y*x (one-vs-rest: class k's weight in its own perceptron, 1 for
        the rest), c_k from ``compute_class_weight``.
    warm_start : bool, default=False
        Let ``fit`` start from the current ``coef_`` and ``intercept_``.
    intercept_decay : "auto" or float > 0, default="auto"
        A mistake moves the intercept by ``intercept_decay * y`` (times the
        update's class and sample weights), the weights by ``y * x`` as
        ever. "auto" is scikit-learn's choice: 0.01 on sparse input (its
        ``SPARSE_INTERCEPT_DECAY``), else 1.0 (the textbook update). When
        sparse input trains in float32 (float32 input with
        ``precision=None``, or ``precision="float32"``) "auto" is 1.0, and
        the model is not scikit-learn's: it sums the intercept's 0.01 steps
        in float64 beside float32 weights, which float32 training here
        cannot; a number other than 1.0 needs float64 and leaves
        ``mistake_bound_`` None. Without ``fit_intercept`` there is no
        intercept to move, and it is ignored, as in scikit-learn.
        ``partial_fit`` follows it as ``fit`` does.
    verbose : int, default=0
        Print one line per epoch.

    Attributes
    ----------
    coef_ : ndarray of shape (1, n_features) or (n_classes, n_features)
    intercept_ : ndarray of shape (1,) or (n_classes,)
    classes_ : ndarray of shape (n_classes,)
    n_features_in_ : int
    n_iter_ : int
        Epochs as scikit-learn counts them: it runs on after an epoch
        without a mistake (which changes nothing) until its rule stops it,
        or ``max_iter``.
    t_ : float
        ``n_iter_ * n_samples + 1``, as scikit-learn's.
    epochs_run_ : int
        Epochs actually swept.
    mistakes_per_epoch_ : ndarray of int64
        Mistakes of each epoch (summed over the classes in one-vs-rest).
    converged_ : bool
        Whether the last epoch made no mistake.
    radius_ : float
        D = max ||(x, 1)|| over the rows (without the 1 when
        ``fit_intercept=False``).
    margin_ : float or None (binary); ndarray (one-vs-rest, NaN for none)
        gamma = min y (w.x + b) / ||(w, b)|| when the model separates the
        training data.
    mistake_bound_ : float or None (binary); ndarray (one-vs-rest)
        (D / gamma)^2, which the number of mistakes of a run from zero never
        exceeds (Novikoff); None after a warm start.
    backend_ : str
        The engines that trained the model, as ``perceptron train`` names
        them.
    """

    def __init__(
        self,
        *,
        max_iter=1000,
        tol=1e-3,
        n_iter_no_change=5,
        fit_intercept=True,
        shuffle=True,
        random_state=0,
        average=False,
        pocket=False,
        margin=0.0,
        backend="auto",
        adapter=None,
        precision=None,
        warm_start=False,
        verbose=0,
        class_weight=None,
        early_stopping=False,
        validation_fraction=0.1,
        intercept_decay="auto",
    ):
        self.max_iter = max_iter
        self.tol = tol
        self.n_iter_no_change = n_iter_no_change
        self.fit_intercept = fit_intercept
        self.shuffle = shuffle
        self.random_state = random_state
        self.average = average
        self.pocket = pocket
        self.margin = margin
        self.backend = backend
        self.adapter = adapter
        self.precision = precision
        self.warm_start = warm_start
        self.verbose = verbose
        self.class_weight = class_weight
        self.early_stopping = early_stopping
        self.validation_fraction = validation_fraction
        self.intercept_decay = intercept_decay

    # -- parameters ---------------------------------------------------------

    def _checked_params(self):
        """The parameters, checked: the first broken rule is a ValueError
        (TypeError for a value of the wrong type)."""
        if not isinstance(self.max_iter, numbers.Integral) or isinstance(self.max_iter, bool):
            raise TypeError(f"max_iter must be an int, not {self.max_iter!r}")
        if self.max_iter < 1:
            raise ValueError(f"max_iter must be at least 1, not {self.max_iter}")
        if self.backend not in _BACKENDS:
            raise ValueError(
                f"backend must be one of {', '.join(map(repr, _BACKENDS))}, not {self.backend!r}"
            )
        if self.adapter is not None and not isinstance(self.adapter, str):
            raise TypeError(f"adapter must be a str or None, not {self.adapter!r}")
        if not isinstance(self.margin, numbers.Real) or isinstance(self.margin, bool):
            raise TypeError(f"margin must be a number, not {self.margin!r}")
        if not np.isfinite(self.margin) or self.margin < 0:
            raise ValueError(f"margin must be a finite number >= 0, not {self.margin!r}")
        if self.tol is not None:
            if not isinstance(self.tol, numbers.Real) or isinstance(self.tol, bool):
                raise TypeError(f"tol must be a number or None, not {self.tol!r}")
            if not np.isfinite(self.tol) or self.tol < 0:
                raise ValueError(f"tol must be a finite number >= 0 or None, not {self.tol!r}")
        if (
            not isinstance(self.n_iter_no_change, numbers.Integral)
            or isinstance(self.n_iter_no_change, bool)
            or self.n_iter_no_change < 1
        ):
            raise ValueError(
                f"n_iter_no_change must be an int >= 1, not {self.n_iter_no_change!r}"
            )
        if self.average and self.pocket:
            raise ValueError("average and pocket are two variants: choose one of them")
        if not isinstance(self.early_stopping, (bool, np.bool_)):
            raise TypeError(f"early_stopping must be a bool, not {self.early_stopping!r}")
        fraction = self.validation_fraction
        if not isinstance(fraction, numbers.Real) or isinstance(fraction, (bool, np.bool_)):
            raise TypeError(f"validation_fraction must be a float, not {fraction!r}")
        if not 0 < fraction < 1:
            raise ValueError(
                f"validation_fraction must be a float in the range (0.0, 1.0), not {fraction!r}"
            )
        decay = getattr(self, "intercept_decay", "auto")  # pickled before it existed
        if not (isinstance(decay, str) and decay == "auto"):
            if not isinstance(decay, numbers.Real) or isinstance(decay, (bool, np.bool_)):
                raise TypeError(f'intercept_decay must be "auto" or a number, not {decay!r}')
            if not (np.isfinite(decay) and decay > 0):
                raise ValueError(
                    f'intercept_decay must be "auto" or a finite number > 0, not {decay!r}'
                )
        if not isinstance(self.verbose, numbers.Integral) or self.verbose < 0:
            raise ValueError(f"verbose must be an int >= 0, not {self.verbose!r}")
        return _precision_name(self.precision)

    def _schedule(self, codes, classes, sample_weight, early):
        """Each perceptron's reshuffle seed (None when the rows keep their
        order) and the rows early stopping holds out (None without it),
        drawn from ``random_state`` as scikit-learn 1.9's ``fit_binary`` and
        ``_fit_multiclass`` draw them (``sklearn/linear_model/
        _stochastic_gradient.py``). Binary: the seeds' generator draws the
        dataset's own seed, then the split draws from ``random_state``
        (the same generator when it is a RandomState or None, a fresh one
        for an int), then the shuffle seed. One-vs-rest: the split first,
        then one seed per class from ``random_state``, and each class's
        perceptron draws as a binary one from ``RandomState(seed)``. The
        seeds are drawn also when ``shuffle`` is False, so that a shared
        RandomState advances alike."""
        early = early and len(classes) >= 2
        if sample_weight is None:
            sample_weight = np.ones(len(codes))

        def split():
            # scikit-learn splits a binary y_i (-1 and +1, in the order of
            # the classes) and a one-vs-rest y alike; its messages name
            # y_i's labels, these the classes.
            rng = check_random_state(self.random_state)
            try:
                return _validation_split(
                    codes, classes, self.validation_fraction, rng, sample_weight
                )
            except ValueError as e:
                # scikit-learn's words, after what was being done.
                raise ValueError(
                    f"early_stopping=True holds out validation_fraction="
                    f"{self.validation_fraction!r} of the {len(codes)} rows, stratified "
                    f"by class, and cannot: {e}"
                ) from None

        def of_binary(rng, early):
            rng.randint(1, _MAX_INT)  # the dataset's own seed (make_dataset)
            held = split() if early else None
            return int(rng.randint(_MAX_INT)), held

        if len(classes) <= 2:
            seed, held = of_binary(check_random_state(self.random_state), early)
            seeds = [seed]
        else:
            held = split() if early else None
            rng = check_random_state(self.random_state)
            seeds = [
                of_binary(np.random.RandomState(s), False)[0]
                for s in rng.randint(_MAX_INT, size=len(classes))
            ]
        return (seeds if self.shuffle else None), held

    def __sklearn_tags__(self):
        tags = super().__sklearn_tags__()
        tags.input_tags.sparse = True
        return tags

    # -- arguments ------------------------------------------------------------

    def _features(self, X, *, reset, precision):
        """X checked and in the training precision, in C order or CSR (one
        copy at most, none when it already is), and the precision."""
        if not reset:
            self._check_feature_count(X)
        dtype = [np.float64, np.float32] if precision is None else _DTYPES[precision]
        X = validate_data(
            self,
            X,
            reset=reset,
            accept_sparse="csr",
            dtype=dtype,
            order="C",
            # Checked by the core, with the command line's messages.
            ensure_all_finite=False,
        )
        if precision is None:
            precision = "f32" if X.dtype == np.float32 else "f64"
        return X, precision

    def _check_feature_count(self, X):
        shape = getattr(X, "shape", None)
        if shape is not None and len(shape) == 2 and shape[1] != self.n_features_in_:
            raise ValueError(
                f"X has {shape[1]} features, but {type(self).__name__} is expecting "
                f"{self.n_features_in_} features as input: the model was trained on "
                "other data"
            )

    @staticmethod
    def _labels(y):
        if y is None:
            raise ValueError(
                "Perceptron requires y to be passed, but the target y is None."
            )
        y = column_or_1d(y, warn=True)
        check_classification_targets(y)
        return y

    def _weights(self, precision):
        """The fitted coef_ and intercept_ in `precision`, C-ordered."""
        dtype = _DTYPES[precision]
        coef = np.ascontiguousarray(self.coef_, dtype=dtype)
        intercept = np.ascontiguousarray(self.intercept_, dtype=dtype).ravel()
        return coef, intercept

    def _initial_weights(self, precision):
        """w~ of every head, head after head, from coef_ and intercept_."""
        coef, intercept = self._weights(precision)
        if precision == "f32" and (
            not np.array_equal(coef, self.coef_) or not np.array_equal(intercept, self.intercept_)
        ):
            raise ValueError(
                "cannot start from coef_ and intercept_: they are float64 and this run "
                "trains in float32; pass precision='float64' or data in float64"
            )
        if self._bias:
            coef = np.hstack([coef, intercept[:, None]])
        return np.ascontiguousarray(coef.ravel())

    # -- training -----------------------------------------------------------

    def fit(self, X, y, sample_weight=None):
        """Trains from zero (or from coef_ with ``warm_start``) on X, y.

        X is a NumPy array (float32 or float64, C or F order; other dtypes
        become float64) or a SciPy sparse matrix. It is used in place when
        it is C-ordered (or CSR) and already in the training precision, and
        copied once otherwise. Ctrl-C raises KeyboardInterrupt within a
        second and leaves the estimator as it was.
        """
        return self._keeping_state_on_error(self._fit, X, y, sample_weight)

    def partial_fit(self, X, y, classes=None, sample_weight=None):
        """One epoch over X, y from the current weights (from zero on the
        first call, which needs ``classes``): bit for bit what ``perceptron
        online`` does over these rows (sparse ones with
        ``intercept_decay=1.0``, its textbook update)."""
        return self._keeping_state_on_error(self._partial_fit, X, y, classes, sample_weight)

    def _keeping_state_on_error(self, method, *args):
        before = dict(self.__dict__)
        try:
            return method(*args)
        except BaseException:
            # A failed or interrupted run changes nothing.
            self.__dict__.clear()
            self.__dict__.update(before)
            raise

    def _fit(self, X, y, sample_weight):
        precision = self._checked_params()
        y = self._labels(y)
        warm = self.warm_start and hasattr(self, "coef_")
        if warm:
            precision = precision or self._precision
        X, precision = self._features(X, reset=True, precision=precision)
        classes, codes = np.unique(y, return_inverse=True)
        init = None
        if warm:
            if X.shape[1] != self.coef_.shape[1]:
                raise ValueError(
                    f"warm_start: X has {X.shape[1]} features, but coef_ was trained on "
                    f"{self.coef_.shape[1]}"
                )
            if not np.array_equal(classes, self.classes_):
                raise ValueError(
                    f"warm_start: y has the classes {classes.tolist()}, but the model "
                    f"was trained on {self.classes_.tolist()}"
                )
            if bool(self.fit_intercept) != self._bias:
                raise ValueError(
                    "warm_start: fit_intercept differs from the run that made coef_"
                )
            init = self._initial_weights(precision)
        weights = self._update_weights(X, y, classes, sample_weight)
        result = self._train(
            X, codes, classes, precision, self.max_iter, init, self.tol, weights,
            early=bool(self.early_stopping),
        )
        self._keep(result, classes, precision)
        self.t_ = float(self.n_iter_ * X.shape[0] + 1)
        # scikit-learn warns when its rule did not stop the run before
        # max_iter; without the rule, when no epoch was free of mistakes.
        if (self.n_iter_ == self.max_iter) if self.tol is not None else not result["converged"]:
            warnings.warn(
                self._not_converged_message(result), ConvergenceWarning, stacklevel=4
            )
        return self

    def _partial_fit(self, X, y, classes, sample_weight):
        precision = self._checked_params()
        if self.early_stopping:
            # scikit-learn's message (BaseSGD._more_validate_params).
            raise ValueError("early_stopping should be False with partial_fit")
        first = not hasattr(self, "classes_")
        if first:
            if classes is None:
                raise ValueError("classes must be passed on the first call to partial_fit.")
            all_classes = np.unique(classes)
        else:
            all_classes = self.classes_
            if classes is not None and not np.array_equal(np.unique(classes), all_classes):
                raise ValueError(
                    f"classes={np.unique(classes).tolist()} is not the same as on the first "
                    f"call to partial_fit, {all_classes.tolist()}"
                )
            precision = self._precision
        y = self._labels(y)
        X, precision = self._features(X, reset=first, precision=precision)
        codes = np.searchsorted(all_classes, y)
        known = (codes < len(all_classes)) & (all_classes[np.minimum(codes, len(all_classes) - 1)] == y)
        if not known.all():
            unknown = np.unique(y[~known]).tolist()
            raise ValueError(
                f"y holds labels that are not among the classes {all_classes.tolist()}: {unknown}"
            )
        init = None if first else self._initial_weights(precision)
        if isinstance(self.class_weight, str) and self.class_weight == "balanced":
            raise ValueError(
                "class_weight 'balanced' is not supported for partial_fit (scikit-learn "
                "refuses it too): compute the weights once with sklearn.utils."
                "compute_class_weight('balanced', classes=classes, y=y) and pass them as "
                "the class_weight dict"
            )
        weights = self._update_weights(X, y, all_classes, sample_weight)
        result = self._train(X, codes, all_classes, precision, 1, init, None, weights)
        t = getattr(self, "t_", 1.0) if not first else 1.0
        self._keep(result, all_classes, precision)
        self.t_ = float(t + X.shape[0])
        return self

    def _intercept_decay(self, X, precision):
        """The intercept's step per unit (None without an intercept; 1.0
        is the textbook update): scikit-learn's 0.01 on sparse input under
        "auto", where float64 can reproduce it."""
        if not self.fit_intercept:
            return None
        decay = getattr(self, "intercept_decay", "auto")
        if isinstance(decay, str):
            return _SPARSE_INTERCEPT_DECAY if sp.issparse(X) and precision == "f64" else 1.0
        return float(decay)

    def _update_weights(self, X, y, classes, sample_weight):
        """scikit-learn's expanded class weights (one per class, None when
        all are 1 and none was asked for) and the rows' weights (None when
        not given), as its SGD computes them."""
        class_weights = None
        if self.class_weight is not None:
            class_weights = [
                float(c) for c in compute_class_weight(self.class_weight, classes=classes, y=y)
            ]
        if sample_weight is not None:
            # With early stopping, scikit-learn lets every weight be 0 here
            # and refuses a validation part without weight instead.
            sample_weight = _check_sample_weight(
                sample_weight, X, dtype=X.dtype, **self._zero_weights_allowed()
            )
            sample_weight = np.ascontiguousarray(sample_weight, dtype=np.float64)
        return class_weights, sample_weight

    def _zero_weights_allowed(self):
        """``_check_sample_weight``'s argument that lets every weight be 0
        with early stopping, where the installed scikit-learn has it."""
        if not self.early_stopping:
            return {}
        allowed = "allow_all_zero_weights" in inspect.signature(_check_sample_weight).parameters
        return {"allow_all_zero_weights": True} if allowed else {}

    def _train(self, X, codes, classes, precision, max_iter, init, tol, weights, early=False):
        margin = float(self.margin)
        seeds, held = self._schedule(codes, classes, weights[1], early)
        result = _core.fit(
            _native(X),
            np.ascontiguousarray(codes, dtype=np.int64).ravel(),
            [_label_text(c) for c in classes],
            precision=precision,
            max_iter=int(max_iter),
            fit_intercept=bool(self.fit_intercept),
            shuffle_seed=None,
            shuffle_seeds=seeds,
            tol=None if tol is None else float(tol),
            n_iter_no_change=int(self.n_iter_no_change),
            class_weights=weights[0],
            sample_weight=weights[1],
            held_out=None if held is None else held.tolist(),
            validation_fraction=float(self.validation_fraction),
            average=bool(self.average),
            pocket=bool(self.pocket),
            margin=repr(margin) if margin > 0 else None,
            multiclass=len(classes) > 2,
            intercept_decay=self._intercept_decay(X, precision),
            backend=self.backend,
            adapter=self.adapter,
            init=init,
            verbose=int(self.verbose),
        )
        for message in result["warnings"]:
            warnings.warn(message, RuntimeWarning, stacklevel=5)
        return result

    def _keep(self, result, classes, precision):
        """Sets the fitted attributes from one run of the core."""
        self.coef_ = result["coef"]
        self.intercept_ = result["intercept"]
        self.classes_ = classes
        self.n_iter_ = int(result["n_iter"])
        self.epochs_run_ = int(result["epochs_run"])
        self.mistakes_per_epoch_ = np.asarray(result["mistakes_per_epoch"], dtype=np.int64)
        self.converged_ = bool(result["converged"])
        self.radius_ = result["radius"]
        self.margin_ = result["margin"]
        self.mistake_bound_ = result["mistake_bound"]
        self.backend_ = result["backend"]
        self._precision = precision
        self._bias = bool(self.fit_intercept)
        self._info = result["info"]
        # How X reached the core: lent in place, or which arrays were copied.
        self._input = {"lent": result["lent"], "copied": list(result["copied"])}

    def _not_converged_message(self, result):
        runs = list(result["mistakes_per_epoch"])
        said = (
            "Maximum number of iteration reached before convergence. Consider increasing "
            "max_iter to improve the fit."
        )
        if result["converged"]:
            # scikit-learn's rule ran out of epochs, but the model is final.
            return (
                f"{said} (Here epoch {len(runs)} made no mistake, so every later epoch "
                "changes nothing: the model is final.)"
            )
        what = (
            "the data was not separated"
            if len(self.classes_) <= 2
            else "some class was not separated from the rest"
        )
        last = int(runs[-1]) if runs else 0
        return (
            f"{said} Not converged: {what} within {self.n_iter_} epochs (max_iter; the last "
            f"epoch made {last} mistakes). It may not be linearly separable; try a larger "
            "max_iter, average=True or pocket=True, or check the labels."
        )

    # -- predictions ----------------------------------------------------------

    def _prediction_input(self, X):
        check_is_fitted(self)
        X, _ = self._features(X, reset=False, precision=self._precision)
        coef, intercept = self._weights(self._precision)
        return _native(X), coef, intercept

    def decision_function(self, X):
        """s = w.x + b for every row (and class, in one-vs-rest), with the
        reference arithmetic: summed in index order, the bias last."""
        X, coef, intercept = self._prediction_input(X)
        scores = _core.decision_function(
            X, coef, intercept, precision=self._precision, fit_intercept=self._bias
        )
        return scores.ravel() if scores.shape[1] == 1 else scores

    def predict(self, X):
        """The class of every row: ``classes_[1]`` iff s > 0 (binary), else
        the class with the highest score (the first of a tie). A binary
        model's signs are certified on ``backend`` and identical on all."""
        X, coef, intercept = self._prediction_input(X)
        codes = _core.predict(
            X,
            coef,
            intercept,
            precision=self._precision,
            fit_intercept=self._bias,
            backend=self.backend,
            adapter=self.adapter,
        )
        return self.classes_[codes]

    # -- model files --------------------------------------------------------

    def save(self, path):
        """Writes the model file of ``perceptron train`` (atomically), which
        ``perceptron predict`` and ``perceptron.load`` read bit for bit."""
        check_is_fitted(self)
        coef, intercept = self._weights(self._precision)
        _core.save_model(
            os.fspath(path),
            coef,
            intercept,
            [_label_text(c) for c in self.classes_],
            precision=self._precision,
            fit_intercept=self._bias,
            info=self._info,
        )


def _classes_from_texts(texts):
    """Class labels from a model file's texts: integers when all are, else
    floats when all are numbers, else the texts."""
    try:
        return np.array([int(t) for t in texts], dtype=np.int64)
    except ValueError:
        pass
    try:
        return np.array([float(t) for t in texts], dtype=np.float64)
    except ValueError:
        return np.array(texts)


def load(path):
    """A fitted ``Perceptron`` from a model file of ``perceptron train`` (or
    of ``Perceptron.save``), with every weight at its identical bits.

    ``classes_`` is in the file's order of heads (a binary model's -1 class,
    then its +1 class), so predictions equal ``perceptron predict``'s; the
    labels are integers, else floats, else strings, as the texts allow.
    """
    model = _core.load_model(os.fspath(path))
    info = json.loads(model["info"])
    training = info["training"]
    precision = model["precision"]
    margin = training.get("margin_threshold")
    variant = training.get("variant", "classic")
    # The run's schedule: scikit-learn's reshuffle and its rule when the
    # file records them (a once-shuffled order, `train --shuffle`, has no
    # parameter here).
    every = training.get("shuffle_every_epoch") or {}
    early = training.get("early_stopping")
    clf = Perceptron(
        max_iter=int(training.get("max_epochs") or 1000),
        tol=early["tol"] if early else None,
        n_iter_no_change=int(early["n_iter_no_change"]) if early else 5,
        # scikit-learn's early stopping (the last epoch's weights); the
        # command line's --validation-fraction keeps the best epoch's.
        early_stopping=bool(early) and early.get("keep") == "last",
        validation_fraction=(early or {}).get("validation_fraction") or 0.1,
        fit_intercept=bool(model["fit_intercept"]),
        shuffle=bool(every),
        random_state=every.get("random_state", 0) if isinstance(every, dict) else 0,
        average=variant == "averaged",
        pocket=variant == "pocket",
        margin=float(margin) if margin is not None else 0.0,
        precision="float32" if precision == "f32" else "float64",
        # The update the run made: scikit-learn's on sparse input when the
        # file records a decay, else the textbook one.
        intercept_decay=training.get("intercept_decay") or 1.0,
    )
    coef = model["coef"]
    clf.coef_ = coef
    clf.intercept_ = model["intercept"]
    clf.classes_ = _classes_from_texts(model["classes"])
    clf.n_features_in_ = coef.shape[1]
    clf.n_iter_ = int(training.get("nominal_epochs") or training["epochs"])
    clf.epochs_run_ = int(training["epochs"])
    clf.mistakes_per_epoch_ = np.asarray(training["mistakes_per_epoch"], dtype=np.int64)
    clf.converged_ = bool(training["converged"])
    clf.radius_ = training["radius"]
    if coef.shape[0] > 1:
        nan = float("nan")
        per_class = info.get("per_class") or []
        clf.margin_ = np.array([c.get("margin") or nan for c in per_class], dtype=np.float64)
        clf.mistake_bound_ = np.array(
            [c.get("mistake_bound") or nan for c in per_class], dtype=np.float64
        )
    else:
        clf.margin_ = training.get("margin")
        clf.mistake_bound_ = training.get("mistake_bound")
    clf.backend_ = training.get("backend", "")
    clf._precision = precision
    clf._bias = bool(model["fit_intercept"])
    clf._info = model["info"]
    return clf
