"""Data files in: the command line's parsers (CSV, LIBSVM, ``.pbin``),
returning NumPy arrays and SciPy CSR matrices that use the parsed memory as
it is (a ``.pbin`` file's values are mapped, read-only, not copied)."""

import os

import numpy as np
import scipy.sparse as sp

from . import _core

_PRECISIONS = {np.dtype(np.float32): "f32", np.dtype(np.float64): "f64"}


def _precision(dtype):
    if dtype is None:
        return None
    try:
        name = _PRECISIONS.get(np.dtype(dtype))
    except TypeError:
        name = None
    if name is None:
        raise ValueError(f"dtype must be float32 or float64, not {dtype!r}")
    return name


def _arrays(loaded, n_features=None):
    rows, cols = loaded["shape"]
    if n_features is not None:
        if n_features < cols:
            raise ValueError(
                f"n_features is {n_features}, but the file has {cols} features"
            )
        cols = n_features
    if "csr" in loaded:
        data, indices, indptr = loaded["csr"]
        X = sp.csr_matrix((data, indices, indptr), shape=(rows, cols), copy=False)
    else:
        X = loaded["X"]
        if cols != X.shape[1]:
            X = np.hstack([X, np.zeros((rows, cols - X.shape[1]), dtype=X.dtype)])
    if "y" in loaded:
        y = loaded["y"]
    else:
        y = np.array(loaded["labels"])[loaded["class_ids"]]
    return X, y


def load_svmlight(path, *, dtype=np.float64, n_features=None, zero_based="auto"):
    """Reads a LIBSVM/svmlight file (``label index:value ...``, increasing
    indices; gzip too) with the command line's parser, on all cores: ``(X,
    y)``, X a SciPy CSR matrix with int32 indices (column 0 is the first
    feature) and y float64, as scikit-learn's ``load_svmlight_file``
    returns them. ``zero_based`` is scikit-learn's: "auto" reads a file
    with an index 0 zero-based and any other one-based; True or False says.
    ``n_features`` widens X to that many columns. A bad line is a
    ValueError naming the file, line and column."""
    if zero_based not in ("auto", True, False):
        raise ValueError(f'zero_based must be "auto", True or False, not {zero_based!r}')
    loaded = _core.load_data(
        os.fspath(path),
        format="libsvm",
        precision=_precision(dtype),
        zero_based=None if zero_based == "auto" else zero_based,
    )
    return _arrays(loaded, n_features)


def load_csv(path, *, dtype=np.float64, label_column=None, header=None, delimiter=None):
    """Reads a CSV file (gzip too) with the command line's parser: ``(X,
    y)``, X a C-ordered array and y float64 when every label is a number,
    else the label texts. ``label_column`` is a column number counted from 0
    or a header name (default: the first column); ``header`` None detects
    a header line, True or False says; ``delimiter`` is ',', ';' or '\\t'
    (default: detected)."""
    loaded = _core.load_data(
        os.fspath(path),
        format="csv",
        precision=_precision(dtype),
        label_column=label_column,
        header=header,
        delimiter=delimiter,
    )
    return _arrays(loaded)


def read_pbin(path, *, dtype=None):
    """Reads a ``.pbin`` file (``perceptron convert`` and ``perceptron gen``
    write them): ``(X, y)``, X dense or CSR. With ``dtype=None`` the values
    keep the file's precision and are memory-mapped, read-only, rather than
    read; another dtype converts them into memory."""
    loaded = _core.load_data(os.fspath(path), format="pbin", precision=_precision(dtype))
    return _arrays(loaded)
