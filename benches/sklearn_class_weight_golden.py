#!/usr/bin/env python3
"""Regenerates data/golden_class_weight.json: scikit-learn's Perceptron with
class_weight on the bundled real datasets, the independent check of
`perceptron train --class-weight` (bit for bit in f64; see the file's _about)."""
import json
import warnings

import numpy as np
import sklearn
from sklearn.datasets import load_svmlight_file
from sklearn.linear_model import Perceptron

# name, file, epochs, class_weight as sklearn takes it, as perceptron takes it
CASES = [
    ("breast_cancer_given", "breast_cancer.csv", 7, {-1: 2.5, 1: 0.7}, "-1=2.5,1=0.7"),
    ("breast_cancer_balanced", "breast_cancer.csv", 7, "balanced", "balanced"),
    ("heart_scale_given", "heart_scale.svm", 9, {-1: 0.3, 1: 3.0}, "-1=0.3,1=3"),
    ("heart_scale_balanced", "heart_scale.svm", 9, "balanced", "balanced"),
    ("digits_3v5_balanced", "digits_3v5.csv", 20, "balanced", "balanced"),
    ("digits_ovr_balanced", "digits.csv", 5, "balanced", "balanced"),
    ("digits_ovr_given", "digits.csv", 5, {3: 4.0, 8: 0.25}, "3=4,8=0.25"),
]


def main():
    warnings.simplefilter("ignore")
    out = {
        "_about": (
            "Class-weighted perceptron reference from scikit-learn %s: Perceptron(penalty=None, alpha=0.0, "
            "eta0=1.0, shuffle=False, tol=None, max_iter=max_epochs, class_weight=...) on the dense float64 data, "
            "rows in file order. Its update is w_k += (c_y*y)*x_k and b += c_y*y, which is perceptron's "
            "--class-weight update, so perceptron --precision f64 equals it bit for bit; one-vs-rest weights "
            "class h's own rows by c_h and the rest by 1 in both. 'classes' are in scikit-learn's (sorted) order. "
            "Regenerate with benches/sklearn_class_weight_golden.py."
        )
        % sklearn.__version__
    }
    for name, f, epochs, cw, arg in CASES:
        if f.endswith(".svm"):
            X, y = load_svmlight_file("data/" + f)
            X = X.toarray()
        else:
            raw = np.loadtxt("data/" + f, delimiter=",")
            X, y = raw[:, 1:], raw[:, 0]
        clf = Perceptron(
            penalty=None, alpha=0.0, eta0=1.0, shuffle=False, tol=None, max_iter=epochs, class_weight=cw,
        ).fit(X, y)
        out[name] = {
            "file": f,
            "max_epochs": epochs,
            "class_weight": arg,
            "classes": ["%g" % c for c in clf.classes_],
            "weights": [[float(v) for v in row] for row in clf.coef_],
            "bias": [float(v) for v in clf.intercept_],
        }
    with open("data/golden_class_weight.json", "w") as fh:
        json.dump(out, fh, indent=1)


if __name__ == "__main__":
    main()
