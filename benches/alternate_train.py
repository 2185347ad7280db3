#!/usr/bin/env python3
"""Builds and --passes policies against each other on one `train` command.

    python3 benches/alternate_train.py DATA --runs 7 \\
        --run old=/tmp/old/perceptron:adaptive \\
        --run new=target/release/perceptron:adaptive \\
        --run ahead=target/release/perceptron:ahead \\
        -- --precision f64 --intercept-decay 0.01 --shuffle-every-epoch --tol-on mean-loss

    python3 benches/alternate_train.py dense300k.pbin --runs 5 \\
        --run "cpu=target/release/perceptron --backend cpu:adaptive" \\
        --run "pair=target/release/perceptron --backend auto --adapter llvmpipe:adaptive" \\
        -- --max-epochs 10

Runs `BINARY train DATA --json --passes POLICY [ARGS after --]` once per
--run and round (BINARY may carry options of its own run, such as its
`--backend`, after the binary's path), in the given order in even rounds and reversed in odd
ones (on a shared machine the first run of a round can be the unlucky
one), and prints per --run the medians of the whole command (`run`: the
report's `run_seconds`, the engine's start and the reading included), of
the whole fit (the report's `seconds`), of the walks (the sum of `epoch_seconds`: the fit without
copying rows into each epoch's order) and of each epoch, then how the
last round walked each epoch (`epoch_modes`: rows per mode, in
thousands). Every model must be the first --run's, bit for bit: a build
or policy that changes the result is refused, not timed.

Medians, not bests: on a shared machine the best of a few runs picks
out the luckiest noise. Builds close to each other need many rounds in
both orders before a difference means anything.
"""
import argparse
import json
import os
import shlex
import statistics
import subprocess
import sys
import tempfile


def train(binary, data, policy, extra, model):
    binary, *own = shlex.split(binary)
    out = subprocess.run([binary, "train", data, "-o", model, "--json", "--passes", policy, *own, *extra],
                         capture_output=True, text=True)
    # Exit status 1 is a model that did not converge within its cap: timed all the same.
    if out.returncode not in (0, 1) or not out.stdout:
        sys.exit(f"{binary} --passes {policy}: exit status {out.returncode}\n{out.stderr}")
    with open(model) as f:
        saved = json.load(f)
    # The model without how it was trained (times, engines, modes).
    saved.pop("training", None)
    return json.loads(out.stdout), saved


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0],
                                 epilog="train's own options go after --")
    ap.add_argument("data")
    ap.add_argument("--run", action="append", required=True, metavar="NAME=BINARY:POLICY")
    ap.add_argument("--runs", type=int, default=5, help="rounds (default 5)")
    argv = sys.argv[1:]
    cut = argv.index("--") if "--" in argv else len(argv)
    args = ap.parse_args(argv[:cut])
    args.extra = argv[cut + 1:]
    runs = []
    for r in args.run:
        name, _, rest = r.partition("=")
        binary, _, policy = rest.rpartition(":")
        if not (name and binary and policy):
            sys.exit(f"--run {r}: expected NAME=BINARY:POLICY")
        runs.append((name, binary, policy))
    reports = {name: [] for name, _, _ in runs}
    first = None
    with tempfile.TemporaryDirectory() as work:
        model = os.path.join(work, "model.json")
        for k in range(args.runs):
            for name, binary, policy in (runs if k % 2 == 0 else runs[::-1]):
                report, weights = train(binary, args.data, policy, args.extra, model)
                if first is None:
                    first = weights
                elif weights != first:
                    sys.exit(f"{name}: the model differs from the first run's")
                reports[name].append(report)
    print(f"{args.data}: medians of {args.runs} rounds, builds alternated in both orders")
    for name, rs in reports.items():
        command = statistics.median(r["run_seconds"] for r in rs)
        whole = statistics.median(r["seconds"] for r in rs)
        walks = statistics.median(sum(r["epoch_seconds"]) for r in rs)
        epochs = min(len(r["epoch_seconds"]) for r in rs)
        per = [round(1e3 * statistics.median(r["epoch_seconds"][e] for r in rs)) for e in range(epochs)]
        print(f"{name:<12} run {command:.3f} s  whole {whole:.3f} s  walks {walks:.3f} s  "
              f"epochs (ms) {' '.join(map(str, per))}")
        modes = rs[-1].get("epoch_modes", [])
        print(f"{'':<12} last round, rows per mode (thousands): " + " | ".join(
            ",".join(f"{m}:{v['rows'] // 1000}" for m, v in e.items() if v["rows"]) for e in modes))


if __name__ == "__main__":
    main()
