#!/usr/bin/env bash
# Everything issue 3 and 4 need from a machine with a hardware GPU, in one
# run: the GPU test suite on the real adapter, and the GPU targets measured
# side by side with the fast CPU path and scikit-learn on the same data.
#
# The device machine reaches no registry, so build here and carry:
#   cargo build --release && cargo test --release --test tests --no-run
#   mkdir -p .gpu-carry && cp target/release/perceptron .gpu-carry/ &&
#     cp "$(ls -t target/release/deps/tests-* | grep -v '\.d$' | head -1)" .gpu-carry/tests
# plus the Vulkan loader packages in .gl/ (see the device tool's notes), then
# run this script there with .gpu-carry and .gl carried. Results go to $OUT.
set -uo pipefail
cd "$(dirname "$0")/.."
OUT=${OUT:-/tmp/gpu-session}
mkdir -p "$OUT"
BIN=.gpu-carry/perceptron
STAGE=${1:-all}   # tests | dense | sparse | all

if [ -d .gl ] && ! ldconfig -p | grep -q libvulkan; then
    for f in .gl/*.deb; do dpkg -x "$f" /; done
    ldconfig
fi
if [ -f /usr/local/nvidia/share/vulkan/icd.d/nvidia_icd.json ]; then
    export VK_DRIVER_FILES=/usr/local/nvidia/share/vulkan/icd.d/nvidia_icd.json
fi
export NODEVICE_SELECT=1
nvidia-smi --query-gpu=name,memory.total,driver_version --format=csv > "$OUT/nvidia-smi.txt" 2>&1
"$BIN" devices | tee "$OUT/devices.txt"

if [ "$STAGE" = tests ] || [ "$STAGE" = all ]; then
    # The tests find data/ through the path they were built at. The binary
    # holds every integration test; the filter gpu:: runs the GPU module's.
    built_at=$(strings .gpu-carry/tests | grep -m1 -o '/[^ ]*/data/iris_setosa.csv' | sed 's#/data/iris_setosa.csv##')
    if [ -n "$built_at" ] && [ ! -e "$built_at" ]; then mkdir -p "$(dirname "$built_at")"; ln -s "$PWD" "$built_at"; fi
    CI=true PERCEPTRON_TEST_ADAPTER="${ADAPTER:-NVIDIA}" .gpu-carry/tests gpu:: --test-threads=2 2>&1 | tee "$OUT/gpu-tests.txt"
fi

run_case() { # name, gen options, epochs
    local name=$1 opts=$2 epochs=$3
    [ -f "/tmp/$name.pbin" ] || "$BIN" gen $opts --seed 1 -o "/tmp/$name.pbin" 2>&1 | tee "$OUT/$name-gen.txt"
    "$BIN" bench "/tmp/$name.pbin" --max-epochs "$epochs" --adapter "${ADAPTER:-NVIDIA}" --json > "$OUT/$name-bench.json"
    # The device's own walk, and passes over windows, on their own.
    "$BIN" bench "/tmp/$name.pbin" --max-epochs "$epochs" --adapter "${ADAPTER:-NVIDIA}" --backends gpu --passes always --json > "$OUT/$name-bench-always.json"
    "$BIN" bench "/tmp/$name.pbin" --max-epochs "$epochs" --adapter "${ADAPTER:-NVIDIA}" --backends gpu --passes windows --json > "$OUT/$name-bench-windows.json"
    python3 benches/sklearn_peer.py "/tmp/$name.pbin" --epochs "$epochs" > "$OUT/$name-sklearn.json"
    python3 - "$OUT" "$name" <<'PY'
import json, sys
out, name = sys.argv[1], sys.argv[2]
r = json.load(open(f"{out}/{name}-bench.json")); s = json.load(open(f"{out}/{name}-sklearn.json"))
print(f"{name}: {r['rows']} x {r['features']}, identical={r['all_identical']}")
runs = [(x["backend"] + " (adaptive)", x) for x in r["runs"]]
for mode in ("always", "windows"):
    for x in json.load(open(f"{out}/{name}-bench-{mode}.json"))["runs"]:
        if x["backend"] == "gpu":
            runs.append((f"gpu ({'walk' if mode == 'always' else 'windows'})", x))
for label, x in runs:
    print(f"  {label:<16} {1e3*x['seconds_per_epoch']:10.2f} ms/epoch  x{s['seconds_per_epoch']/x['seconds_per_epoch']:8.1f} vs scikit-learn  "
          f"round trips {x['passes']}  engine {100*x['engine_seconds']/max(x['seconds'],1e-12):.0f}% of wall  identical={x['identical']}")
print(f"  scikit-learn {1e3*s['seconds_per_epoch']:8.2f} ms/epoch")
if r.get("device"):
    d = r["device"]; print(f"  device copy {d['copy_gb_per_second']:.0f} GB/s, one pass {d['pass_gb_per_second']:.0f} GB/s = {d['pass_percent_of_copy']:.0f}% of copy")
PY
}
# Target 1 and 2: dense f32, n*d >= 2^28, 4M x 256, at least 20 epochs.
if [ "$STAGE" = dense ] || [ "$STAGE" = all ]; then
    run_case dense "--rows 4000000 --features 256 --planted-margin 0.002" 20 | tee "$OUT/dense-summary.txt"
fi
# Target 3: sparse, 2M rows, 10^6 features, 64 non-zeros per row.
if [ "$STAGE" = sparse ] || [ "$STAGE" = all ]; then
    run_case sparse "--rows 2000000 --features 1000000 --density sparse --nnz 64" 20 | tee "$OUT/sparse-summary.txt"
fi
