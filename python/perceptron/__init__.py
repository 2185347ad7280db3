"""Rosenblatt's classic perceptron, trained exactly on the CPU and the GPU.

``Perceptron`` is a scikit-learn estimator whose every backend returns the
model of the textbook sequential loop bit for bit; ``load`` reads the model
files of the ``perceptron`` command (and ``Perceptron.save`` writes them);
``load_svmlight``, ``load_csv`` and ``read_pbin`` read data files with its
parsers.
"""

from ._core import __version__, adapters
from ._estimator import Perceptron, load
from ._io import load_csv, load_svmlight, read_pbin

__all__ = [
    "Perceptron",
    "__version__",
    "adapters",
    "load",
    "load_csv",
    "load_svmlight",
    "read_pbin",
]
