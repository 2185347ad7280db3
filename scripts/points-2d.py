#!/usr/bin/env python3
"""Writes data/points_2d.csv: a small, seeded, linearly separable 2-D set.

40 points uniform in [0, 10] x [0, 8], labelled by the side of the line
0.8 x1 - 0.6 x2 = 2.6 (+1 above it, -1 below), keeping only points at least
0.8 from it, so the classes are separated by a gap and need the bias.
The pictures in docs/pictures.md are drawn from it: `perceptron plot trace` shows
its updates, `perceptron plot bias` why it needs a bias.
"""
import random

rng = random.Random(2024)
rows = []
while len(rows) < 40:
    x1, x2 = rng.uniform(0, 10), rng.uniform(0, 8)
    d = 0.8 * x1 - 0.6 * x2 - 2.6
    if abs(d) >= 0.8:
        rows.append((1 if d < 0 else -1, round(x1, 2), round(x2, 2)))
with open("data/points_2d.csv", "w") as f:
    for y, a, b in rows:
        f.write(f"{y},{a},{b}\n")
