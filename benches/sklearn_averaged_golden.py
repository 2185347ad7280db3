#!/usr/bin/env python3
"""Regenerates data/golden_averaged_sgd.json: scikit-learn's averaged SGD
perceptron on the bundled real datasets, the independent check of
`perceptron train --average` (agreement to rounding; see the file's _about)."""
import json
import warnings

import numpy as np
import sklearn
from sklearn.datasets import load_svmlight_file
from sklearn.linear_model import SGDClassifier

CASES = [
    ("iris_setosa", "iris_setosa.csv", 4),
    ("digits_0v1", "digits_0v1.csv", 3),
    ("digits_3v5", "digits_3v5.csv", 6),
    ("breast_cancer", "breast_cancer.csv", 20),
    ("heart_scale", "heart_scale.svm", 30),
]


def main():
    warnings.simplefilter("ignore")
    out = {
        "_about": (
            "Averaged perceptron reference from scikit-learn %s: SGDClassifier(loss='perceptron', penalty=None, "
            "alpha=0.0, learning_rate='constant', eta0=1.0, shuffle=False, tol=None, average=True, max_iter=max_epochs) "
            "on the dense float64 data (labels -1/+1 as in the files). It averages the same iterates w_1..w_T as "
            "perceptron --average but keeps the mean with two scale factors (Xu 2011), so it agrees to rounding, not "
            "bit for bit. Regenerate with benches/sklearn_averaged_golden.py."
        )
        % sklearn.__version__
    }
    for name, f, epochs in CASES:
        if f.endswith(".svm"):
            X, y = load_svmlight_file("data/" + f)
            X = X.toarray()
        else:
            raw = np.loadtxt("data/" + f, delimiter=",")
            X, y = raw[:, 1:], raw[:, 0]
        clf = SGDClassifier(
            loss="perceptron", penalty=None, alpha=0.0, learning_rate="constant", eta0=1.0,
            shuffle=False, tol=None, max_iter=epochs, average=True,
        ).fit(X, y)
        out[name] = {"file": f, "max_epochs": epochs, "weights": [float(v) for v in clf.coef_[0]],
                     "bias": float(clf.intercept_[0])}
    with open("data/golden_averaged_sgd.json", "w") as fh:
        json.dump(out, fh, indent=1)


if __name__ == "__main__":
    main()
