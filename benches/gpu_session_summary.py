#!/usr/bin/env python3
"""Summarises one case of benches/gpu-session.sh: every run's time per epoch,
its ratios to scikit-learn, the CPU engine and the reference loop, whether
its model is bit-identical to the CPU engine's, what the device's walk did,
and the device's margin pass apart from its round trip.

    python3 benches/gpu_session_summary.py RUNS_DIR MODELS_DIR CASE
"""
import json
import os
import sys

runs_dir, models_dir, case = sys.argv[1:4]


def load(path):
    try:
        with open(path) as f:
            return json.load(f)
    except (OSError, ValueError):
        return None


def model(label):
    m = load(os.path.join(models_dir, f"{case}-{label}.model.json"))
    return None if m is None else (m.get("weights"), m.get("bias"))


runs = {}
for name in sorted(os.listdir(runs_dir)):
    label, ext = os.path.splitext(name)
    if ext == ".failed":
        print(f"  {label}: {open(os.path.join(runs_dir, name)).read().strip()}")
    elif ext == ".json" and not label.startswith("ceiling") and label != "sklearn":
        r = load(os.path.join(runs_dir, name))
        if r is not None and "epoch_seconds" in r:
            runs[label] = r

sk = load(os.path.join(runs_dir, "sklearn.json"))
first = next(iter(runs.values()), None)
if first:
    print(f"{case}: {first['rows']} x {first['features']}, {first['epochs']} epochs, "
          f"mistakes per epoch {first['mistakes_per_epoch'][:6]}... {first['mistakes_per_epoch'][-1]}")
cpu_model = model("cpu")


def loop_per_epoch(r):
    """The loop's seconds per epoch: the epochs' own times. From 840a673
    until `engine_start_seconds` came, a report's `seconds` also counted
    the engine's start (the device, its pipelines, the upload); at 81ea4ae
    it did not, so only the epochs compare across binaries."""
    ep = r["epoch_seconds"]
    return sum(ep) / max(len(ep), 1)


base = {k: loop_per_epoch(runs[k]) for k in ("cpu", "reference") if k in runs}
if sk:
    base["sklearn"] = sk["seconds_per_epoch"]
    print(f"  scikit-learn {1e3 * sk['seconds_per_epoch']:9.1f} ms/epoch ({sk['epochs']} epochs)")
print(f"  {'run':<22} {'ms/epoch':>9} {'setup s':>7} {'x sklearn':>9} {'x cpu':>7} {'x ref':>7} {'same':>5}  walk: dec/disp  dots/dec  us/mistake(ep1)  epochs (ms)")
for label, r in runs.items():
    per = loop_per_epoch(r)
    setup = r.get("engine_start_seconds", r["seconds"] - sum(r["epoch_seconds"]))
    ratio = lambda k: f"{base[k] / per:7.2f}" if k in base else "      -"
    m = model(label)
    same = "-" if cpu_model is None or m is None else ("yes" if m == cpu_model else "NO")
    w = r["engine_stats"].get("walk", {})
    disp = r["engine_stats"].get("dispatches", 0)
    dec = w.get("decisions", 0)
    walk = f"{dec / disp:6.2f}  {w.get('dots', 0) / dec:8.2f}" if dec and disp else f"{'-':>6}  {'-':>8}"
    ep = r["epoch_seconds"]
    m1 = r["mistakes_per_epoch"][0] if r["mistakes_per_epoch"] else 0
    us1 = f"{1e6 * ep[0] / m1:8.1f}" if m1 else "       -"
    shown = ep if len(ep) <= 8 else ep[:6] + ep[-2:]
    epochs = " ".join(f"{1e3 * e:.1f}" for e in shown) + (" (first 6, last 2)" if len(ep) > 8 else "")
    print(f"  {label:<22} {1e3 * per:9.1f} {setup:7.2f} {ratio('sklearn'):>9} {ratio('cpu')} {ratio('reference')} {same:>5}  {walk}  {us1}        {epochs}")
# The chooser's picks: each epoch's rows by mode (engine/host/reference/ahead/cores, %;
# `cores` is the CPU engine beside the GPU under `auto`, absent elsewhere).
MODES = ("engine", "host", "reference", "ahead", "cores")
for label, r in runs.items():
    modes = r.get("epoch_modes")
    if label in ("cpu", "gpu", "auto") and modes:
        share = []
        for e in modes:
            walked = {m: e.get(m, {}).get("rows", 0) for m in MODES}
            rows = sum(walked.values()) or 1
            share.append("/".join(f"{100 * walked[m] / rows:.0f}" for m in MODES))
        print(f"  {label}: rows walked by engine/host/reference/ahead/cores (%), epoch by epoch: {' '.join(share)}")
# Never slower than the textbook loop: every run's speed against the reference
# run, epoch by epoch; ! marks below 0.95x by over 2 ms.
if "reference" in runs:
    ref = runs["reference"]["epoch_seconds"]
    print("  speed against --backend reference, epoch by epoch (! = below 0.95x by over 2 ms):")
    for label, r in runs.items():
        if label == "reference":
            continue
        cells = " ".join(f"{a / b:5.2f}" + ("!" if a / b < 0.95 and 1e3 * (b - a) > 2 else " ")
                         for a, b in zip(ref, r["epoch_seconds"]))
        print(f"    {label:<20} {cells}")
# The default is the best engine present: auto's training against the faster
# of the CPU engine and the GPU alone (the target is at least 0.95x). The
# engine's start counts: auto's GPU starts while its cores train (inside its
# loop), where `gpu` starts before its loop.
def training(r):
    return r["seconds"] + r.get("engine_start_seconds", 0.0)


if all(k in runs for k in ("auto", "cpu", "gpu")):
    t = {k: training(runs[k]) for k in ("auto", "cpu", "gpu")}
    best = min(t["cpu"], t["gpu"])
    print(f"  auto against the faster of cpu and gpu, start and loop: {best / t['auto']:.2f}x "
          f"(auto {t['auto']:.3f} s, cpu {t['cpu']:.3f} s, gpu {t['gpu']:.3f} s; auto's GPU "
          f"started beside its cores in {runs['auto']['engine_stats'].get('start_beside_seconds', 0.0):.3f} s)")
for lanes in (8, 16, 32):
    c = load(os.path.join(runs_dir, f"ceiling-lanes{lanes}.json"))
    d = c and c.get("device")
    if d:
        k = d.get("kernel_gb_per_second")
        alone = "-" if k is None else "%.2f ms = %.0f GB/s" % (1e3 * d["kernel_seconds"], k)
        print(f"  margin pass, {d['lanes']:>2} threads a row: with its round trip {1e3 * d['pass_seconds']:.2f} ms = "
              f"{d['pass_gb_per_second']:.0f} GB/s; on the device alone {alone}; copy {d['copy_gb_per_second']:.0f} GB/s")
