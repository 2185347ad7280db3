#!/usr/bin/env python3
"""The cost model of BENCHMARKS.md ("Training on several machines"): time per
epoch, or per run, of K machines on a network of latency ALPHA and bandwidth
BW, from what benches/mpi-session.sh wrote (its OUT_DIR):

- the per-row costs of one process on this machine (the single runs'
  epoch_seconds), which stand for one machine's;
- the operations, payload bytes and rows walked that the program counted on
  1 and 2 ranks (these do not depend on the hardware).

It is a model, not a measurement: every rank is one machine with this
machine's per-row cost; a collective operation on K ranks costs
ALPHA * ceil(log2 K) plus its bytes over BW once; computing and talking do
not overlap; one more rank adds one more walk (a broadcast and an
all-reduce) to an epoch whose blocks all hold mistakes (the 1 -> 2 rank
difference, counted).

    benches/mpi-model.py OUT_DIR
"""
import json
import math
import statistics
import sys

out = sys.argv[1] if len(sys.argv) > 1 else "/tmp/mpi-session"
NETWORKS = [("10 GbE", 10e-6, 1.25e9), ("InfiniBand HDR", 1.5e-6, 25e9)]
KS = [2, 4, 8, 16, 64]


def report(name, i=1):
    return json.load(open(f"{out}/{name}-{i}.json"))


def runs(name):
    i, found = 1, []
    while True:
        try:
            found.append(report(name, i))
        except FileNotFoundError:
            return found
        i += 1


def per_row(name):
    """Median seconds per row of each epoch of one process."""
    rs = runs(name)
    rows = rs[0]["rows"]
    n = min(len(r["epoch_seconds"]) for r in rs)
    return [statistics.median(r["epoch_seconds"][e] for r in rs) / rows for e in range(n)]


def traffic(name):
    """Per epoch: (operations, bytes) counted on rank 0."""
    return [
        (
            e["broadcasts"] + e["all_reduces"] + e["sends"],
            e["broadcast_bytes"] + e["all_reduce_bytes"] + e["send_bytes"],
        )
        for e in report(name)["distributed"]["traffic"]
    ]


def lg(k):
    return max(1, math.ceil(math.log2(k)))


def exact_run(d, k, alpha, bw):
    """Single-process seconds and exact mode's on k machines, whole run."""
    one = report(f"{d}-single")
    rows, c = one["rows"], per_row(f"{d}-single")
    t1 = rows * sum(c)
    visits = rows * len(c)
    c_mean = t1 / visits
    walked = report(f"{d}-exact-2")["distributed"]["steps"]["rows_walked"]
    t_1, t_2 = traffic(f"{d}-exact-1"), traffic(f"{d}-exact-2")
    ops = sum(b[0] + (b[0] - a[0]) * (k - 2) for a, b in zip(t_1, t_2))
    by = sum(b[1] + (b[1] - a[1]) * (k - 2) for a, b in zip(t_1, t_2))
    tk = walked * c_mean + (visits - walked) / k * c_mean + ops * alpha * lg(k) + by / bw
    return t1, tk


def clean_epoch(d, k, alpha, bw):
    """The final clean epoch: a certified pass split k ways, 3 all-reduces."""
    one = report(f"{d}-single")
    c = per_row(f"{d}-single")[-1]
    ops, by = traffic(f"{d}-exact-2")[-1]
    t1 = one["rows"] * c
    return t1, one["rows"] / k * c + ops * alpha * lg(k) + by / bw


def dense_mistakes_epoch(d, k, alpha, bw):
    """An epoch whose every block holds mistakes: walked end to end, one
    walk per block, in turn."""
    one = report(f"{d}-single")
    c = per_row(f"{d}-single")[-1]
    (o1, b1), (o2, b2) = traffic(f"{d}-exact-1")[-1], traffic(f"{d}-exact-2")[-1]
    ops, by = o2 + (o2 - o1) * (k - 2), b2 + (b2 - b1) * (k - 2)
    t1 = one["rows"] * c
    return t1, t1 + ops * alpha * lg(k) + by / bw


def per_mistake_epoch(d, k, alpha, bw):
    """Exact mode when every run of mistakes is a step of its own (the
    shuffled visit order: consecutive visits sit on different ranks): the
    counted operations and bytes of 2 ranks, scaled by the share of visits
    whose successor is on another rank ((k-1)/k against 1/2)."""
    one = report(f"{d}-shuffled-single")
    c = per_row(f"{d}-shuffled-single")[-1]
    ops, by = traffic(f"{d}-shuffled-exact-2")[-1]
    s = ((k - 1) / k) / 0.5
    t1 = one["rows"] * c
    return t1, one["rows"] / k * c + s * (ops * alpha * lg(k) + by / bw)


def mix_epoch(d, k, alpha, bw):
    """Mix mode: every machine an epoch of its block, then the counted
    collectives, plus the tree of f64 vectors (ceil(log2 k) sends in turn)."""
    one = report(f"{d}-single")
    c = per_row(f"{d}-single")[-1]
    ops, by = traffic(f"{d}-mix-2")[-1]
    dim = one["features"] + 1
    tree = lg(k) * (alpha + 8 * dim / bw)
    t1 = one["rows"] * c
    return t1, one["rows"] / k * c + ops * alpha * lg(k) + by * lg(k) / bw + tree


CASES = [
    ("sep: the final clean epoch, exact", lambda k, a, b: clean_epoch("sep", k, a, b)),
    ("sep: the whole run (25 epochs), exact", lambda k, a, b: exact_run("sep", k, a, b)),
    ("noisy: an epoch (a mistake every 25 rows), exact", lambda k, a, b: dense_mistakes_epoch("noisy", k, a, b)),
    ("noisy, shuffled: an epoch, exact (a step per run of mistakes)", lambda k, a, b: per_mistake_epoch("noisy", k, a, b)),
    ("noisy: an epoch, mix", lambda k, a, b: mix_epoch("noisy", k, a, b)),
    ("big (2M rows): an epoch, mix", lambda k, a, b: mix_epoch("big", k, a, b)),
    ("sparse (10^5 features): an epoch, mix", lambda k, a, b: mix_epoch("sparse", k, a, b)),
]

for net, alpha, bw in NETWORKS:
    print(f"\n## Model: {net} ({alpha * 1e6:g} us, {bw / 1e9:g} GB/s): speedup over one machine")
    print("| case | one machine | " + " | ".join(f"K = {k}" for k in KS) + " |")
    print("|---|---:|" + "---:|" * len(KS))
    for name, f in CASES:
        t1 = f(2, alpha, bw)[0]
        cells = []
        for k in KS:
            one, tk = f(k, alpha, bw)
            cells.append(f"{one / tk:.2f}x")
        print(f"| {name} | {t1 * 1e3:.2f} ms | " + " | ".join(cells) + " |")
