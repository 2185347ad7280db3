"""backend="gpu" runs on any Vulkan, Metal or DX12 adapter, lavapipe (Mesa's
software Vulkan) included, and gives the same bits as the CPU: training in
float32 and float64, dense and sparse, binary and one-vs-rest, and the
predictions it certifies. Under CI=true a missing adapter fails."""

import os
import subprocess
import sys
import warnings

import numpy as np
import pytest
import scipy.sparse as sp
from sklearn.exceptions import ConvergenceWarning

import perceptron
from conftest import DATA, bits, skip_or_fail, in_order


@pytest.fixture(scope="module")
def adapter():
    found = perceptron.adapters()
    wanted = os.environ.get("PERCEPTRON_TEST_ADAPTER")
    if wanted:
        found = [a for a in found if wanted.lower() in a["name"].lower()]
    if not found:
        skip_or_fail("no GPU adapter (install mesa-vulkan-drivers for lavapipe)")
    return found[0]


def fit(X, y, **params):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", ConvergenceWarning)
        return in_order(**params).fit(X, y)


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
@pytest.mark.parametrize("name, layout", [("digits_3v5.csv", "dense"),
                                          ("heart_scale.svm", "sparse"),
                                          ("digits.csv", "dense")])
def test_the_gpu_gives_the_cpus_bits(adapter, name, layout, dtype):
    if dtype == np.float64 and not adapter["f64"]:
        pytest.skip(f"{adapter['name']} has no f64 shaders")
    load = perceptron.load_svmlight if name.endswith(".svm") else perceptron.load_csv
    X, y = load(DATA / name, dtype=dtype)
    if layout == "dense" and sp.issparse(X):
        X = X.toarray()
    gpu = fit(X, y, max_iter=8, backend="gpu", adapter=adapter["name"])
    cpu = fit(X, y, max_iter=8, backend="cpu")
    assert gpu.backend_.startswith("gpu"), gpu.backend_
    np.testing.assert_array_equal(bits(gpu.coef_), bits(cpu.coef_))
    np.testing.assert_array_equal(bits(gpu.intercept_), bits(cpu.intercept_))
    assert gpu.mistakes_per_epoch_.tolist() == cpu.mistakes_per_epoch_.tolist()
    np.testing.assert_array_equal(gpu.predict(X), cpu.predict(X))


def test_auto_with_an_adapter_trains_beside_the_cores_and_gives_the_cpus_bits(adapter):
    # backend="auto" with an adapter named takes it in place of a hardware
    # GPU and, on dense rows, trains with the CPU engine beside it.
    X, y = perceptron.load_csv(DATA / "digits_3v5.csv", dtype=np.float32)
    auto = fit(X, y, max_iter=8, backend="auto", adapter=adapter["name"])
    cpu = fit(X, y, max_iter=8, backend="cpu")
    assert auto.backend_.startswith("gpu") and " + cpu (" in auto.backend_, auto.backend_
    np.testing.assert_array_equal(bits(auto.coef_), bits(cpu.coef_))
    np.testing.assert_array_equal(bits(auto.intercept_), bits(cpu.intercept_))
    assert auto.mistakes_per_epoch_.tolist() == cpu.mistakes_per_epoch_.tolist()


def test_gpu_variants_and_partial_fit_match_the_cpu(adapter):
    X, y = perceptron.load_csv(DATA / "breast_cancer.csv", dtype=np.float32)
    for params in ({"average": True}, {"pocket": True}, {"margin": 1.5}):
        gpu = fit(X, y, max_iter=6, backend="gpu", adapter=adapter["name"], **params)
        cpu = fit(X, y, max_iter=6, backend="cpu", **params)
        np.testing.assert_array_equal(bits(gpu.coef_), bits(cpu.coef_), err_msg=str(params))
    gpu = in_order(backend="gpu", adapter=adapter["name"])
    cpu = in_order(backend="cpu")
    for part in np.array_split(np.arange(len(y)), 3):
        gpu.partial_fit(X[part], y[part], classes=[-1.0, 1.0])
        cpu.partial_fit(X[part], y[part], classes=[-1.0, 1.0])
    np.testing.assert_array_equal(bits(gpu.coef_), bits(cpu.coef_))


def test_a_missing_adapter_is_a_clear_error():
    X, y = perceptron.load_csv(DATA / "iris_setosa.csv")
    with pytest.raises(RuntimeError, match="no-such-adapter") as e:
        in_order(backend="gpu", adapter="no-such-adapter").fit(X, y)
    assert 'backend="cpu"' in str(e.value)


def test_a_fit_on_a_machine_without_a_gpu_loads_no_driver():
    # backend="auto" asks for a hardware GPU; without a GPU's device node it
    # must not load the Vulkan drivers, whose software one (Mesa's lavapipe)
    # writes "XDG_RUNTIME_DIR is invalid" to stderr when loaded without a
    # display. A fresh process: the answer is kept for the process.
    if not sys.platform.startswith("linux"):
        pytest.skip("elsewhere the adapters must be asked")
    if any(os.path.exists(p) for p in ("/dev/dri", "/dev/dxg")) or any(
            n.startswith("nvidia") for n in os.listdir("/dev")):
        pytest.skip("this machine has a GPU's device node")
    code = ("import perceptron; from sklearn.datasets import load_iris; "
            "X, y = load_iris(return_X_y=True); "
            "print(perceptron.Perceptron().fit(X, y).backend_)")
    env = {k: v for k, v in os.environ.items() if k != "XDG_RUNTIME_DIR"}
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                          env=env, timeout=120)
    assert done.returncode == 0, done.stderr
    assert done.stdout.startswith("cpu"), done.stdout
    assert done.stderr == ""
