"""Arrays in and data files in: every layout of X gives the same model, X is
used in place when it can be and copied once when it cannot, and the loaders
read what scikit-learn and NumPy read."""

import warnings

import numpy as np
import pytest
import scipy.sparse as sp
from sklearn.datasets import load_svmlight_file
from sklearn.exceptions import ConvergenceWarning

import perceptron
from conftest import DATA, bits, in_order


def fit(X, y, **params):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", ConvergenceWarning)
        return in_order(**{"max_iter": 10, **params}).fit(X, y)


def test_every_layout_and_sparse_format_gives_the_same_model():
    X, y = perceptron.load_svmlight(DATA / "heart_scale.svm")
    reference = fit(X.toarray(), y)
    csr64 = X.copy()
    csr64.indices = csr64.indices.astype(np.int64)
    csr64.indptr = csr64.indptr.astype(np.int64)
    layouts = {
        "C": X.toarray(),
        "F": np.asfortranarray(X.toarray()),
        "list": X.toarray().tolist(),
        "csr": X,
        "csr int64": csr64,
        "csc": X.tocsc(),
        "coo": X.tocoo(),
        "csr_array": sp.csr_array(X),
    }
    for name, data in layouts.items():
        clf = fit(data, y)
        np.testing.assert_array_equal(bits(clf.coef_), bits(reference.coef_), err_msg=name)
        np.testing.assert_array_equal(clf.predict(data), reference.predict(X.toarray()), err_msg=name)


def test_unsorted_and_duplicate_sparse_indices_are_summed_first():
    X = sp.csr_matrix(np.array([[1.0, 0, 2], [0, 3, 0], [4, 0, 0]]))
    y = np.array([1, -1, 1])
    # Row 0 stored backwards, with 2 split into 0.5 + 1.5.
    messy = sp.csr_matrix(
        (np.array([0.5, 1.5, 1.0, 3.0, 4.0]), np.array([2, 2, 0, 1, 0]), X.indptr + [0, 1, 1, 1]),
        shape=(3, 3),
    )
    assert not messy.has_canonical_format
    np.testing.assert_array_equal(bits(fit(messy, y).coef_), bits(fit(X, y).coef_))
    assert not messy.has_canonical_format, "the caller's matrix is left as it was"


def test_arrays_in_the_training_precision_are_lent_not_copied():
    X, y = perceptron.load_csv(DATA / "digits_3v5.csv")
    assert fit(X, y)._input == {"lent": True, "copied": []}
    assert fit(X.astype(np.float32), y)._input == {"lent": True, "copied": []}
    Xs = sp.csr_matrix(X)
    # SciPy's int32 row pointers are widened (one entry per row).
    assert fit(Xs, y)._input == {"lent": True, "copied": ["indptr"]}
    Xs.indices = Xs.indices.astype(np.int64)
    Xs.indptr = Xs.indptr.astype(np.int64)
    assert fit(Xs, y)._input == {"lent": True, "copied": ["indices"]}


def _peak_rss_bytes():
    with open("/proc/self/status") as f:
        for line in f:
            if line.startswith("VmHWM:"):
                return int(line.split()[1]) * 1024
    raise AssertionError("no VmHWM")


def _reset_peak():
    try:
        with open("/proc/self/clear_refs", "w") as f:
            f.write("5")
    except OSError:
        pytest.skip("cannot reset the peak resident memory (/proc/self/clear_refs)")


@pytest.mark.skipif(not __import__("sys").platform.startswith("linux"), reason="Linux /proc")
def test_no_second_copy_is_made():
    # 96 MiB of float64: fitting it C-ordered adds no copy to the peak
    # resident memory, F-ordered adds one (not two).
    rng = np.random.default_rng(0)
    X = rng.standard_normal((12_288, 1024))
    y = np.where(X[:, 0] > 0, 1, -1)
    size = X.nbytes

    def growth(data):
        _reset_peak()
        before = _peak_rss_bytes()
        fit(data, y, backend="cpu", max_iter=1)
        return (_peak_rss_bytes() - before) / size

    fit(X[:100], y[:100], backend="cpu")  # load the engines once
    c_growth = growth(X)
    F = np.asfortranarray(X)
    f_growth = growth(F)
    assert c_growth < 0.2, f"C order: the peak grew by {c_growth:.2f} x the data"
    assert 0.8 < f_growth < 1.4, f"F order: the peak grew by {f_growth:.2f} x the data"


def test_load_svmlight_reads_what_scikit_learn_reads():
    for name in ("heart_scale.svm", "digits_0v1.svm", "breast_cancer.svm"):
        X, y = perceptron.load_svmlight(DATA / name)
        Xs, ys = load_svmlight_file(str(DATA / name))
        assert sp.isspmatrix_csr(X) and X.dtype == np.float64 and y.dtype == np.float64
        assert X.indices.dtype == np.int32 and X.indptr.dtype == np.int32
        cols = max(X.shape[1], Xs.shape[1])
        np.testing.assert_array_equal(
            sp.csr_matrix(X, shape=(X.shape[0], cols)).toarray(),
            sp.csr_matrix(Xs, shape=(Xs.shape[0], cols)).toarray(),
        )
        np.testing.assert_array_equal(y, ys)
    X32, _ = perceptron.load_svmlight(DATA / "heart_scale.svm", dtype=np.float32)
    assert X32.dtype == np.float32
    wide, _ = perceptron.load_svmlight(DATA / "heart_scale.svm", n_features=20)
    assert wide.shape == (270, 20)


def test_load_svmlight_reads_zero_based_files_as_scikit_learn_does(tmp_path):
    # dump_svmlight_file writes zero-based by default; "auto" reads it so.
    from sklearn.datasets import dump_svmlight_file

    X, y = load_svmlight_file(str(DATA / "heart_scale.svm"))
    zero = tmp_path / "zero.svm"
    dump_svmlight_file(X, y, str(zero))
    for zero_based in ("auto", True):
        Xp, yp = perceptron.load_svmlight(zero, zero_based=zero_based)
        Xs, ys = load_svmlight_file(str(zero), zero_based=zero_based)
        np.testing.assert_array_equal(Xp.toarray(), Xs.toarray())
        np.testing.assert_array_equal(yp, ys)
    np.testing.assert_array_equal(perceptron.load_svmlight(zero)[0].toarray(), X.toarray())
    with pytest.raises(ValueError, match=r"zero\.svm:1:.*feature index 0.*pass zero_based=True"):
        perceptron.load_svmlight(zero, zero_based=False)


def test_load_csv_reads_what_numpy_reads_gzip_too():
    X, y = perceptron.load_csv(DATA / "iris_setosa.csv")
    table = np.loadtxt(DATA / "iris_setosa.csv", delimiter=",")
    np.testing.assert_array_equal(X, table[:, 1:])
    np.testing.assert_array_equal(y, table[:, 0])
    assert X.flags.c_contiguous and X.flags.writeable
    Xg, yg = perceptron.load_csv(DATA / "iris_setosa.csv.gz")
    np.testing.assert_array_equal(Xg, X)
    np.testing.assert_array_equal(yg, y)


def test_load_csv_keeps_text_labels_and_takes_a_label_column(tmp_path):
    path = tmp_path / "t.csv"
    path.write_text("a,b,kind\n1,2,cat\n3,4,dog\n5,6,cat\n")
    X, y = perceptron.load_csv(path, label_column="kind")
    np.testing.assert_array_equal(X, [[1, 2], [3, 4], [5, 6]])
    assert y.tolist() == ["cat", "dog", "cat"]
    X, y = perceptron.load_csv(path, label_column=2)
    assert y.tolist() == ["cat", "dog", "cat"]


def test_read_pbin_maps_the_file_read_only(cli, tmp_path):
    for source, layout in (("digits_3v5.csv", "dense"), ("heart_scale.svm", "csr")):
        pbin = tmp_path / f"{layout}.pbin"
        cli("convert", DATA / source, pbin, "--precision", "f64", "--layout", layout)
        X, y = perceptron.read_pbin(pbin)
        Xt, yt = (perceptron.load_csv if source.endswith(".csv") else perceptron.load_svmlight)(
            DATA / source
        )
        if layout == "dense":
            np.testing.assert_array_equal(X, Xt)
            assert not X.flags.writeable, "the values are the file's mapping"
            with pytest.raises(ValueError):
                X[0, 0] = 1.0
        else:
            assert sp.isspmatrix_csr(X) and not X.data.flags.writeable
            np.testing.assert_array_equal(X.toarray(), Xt.toarray())
        np.testing.assert_array_equal(y, yt)
        X32, _ = perceptron.read_pbin(pbin, dtype=np.float32)
        assert X32.dtype == np.float32
        # Training reads the mapping in place too.
        assert fit(X, y)._input["lent"]


def test_misaligned_arrays_are_copied_not_misread():
    X, y = perceptron.load_csv(DATA / "iris_setosa.csv")
    raw = np.zeros(X.nbytes + 1, dtype=np.uint8)
    odd = np.frombuffer(raw.data, dtype=np.float64, count=X.size, offset=1).reshape(X.shape)
    odd[...] = X
    assert not odd.flags.aligned and odd.flags.c_contiguous
    np.testing.assert_array_equal(bits(fit(odd, y).coef_), bits(fit(X, y).coef_))
