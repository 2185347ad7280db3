#!/usr/bin/env bash
# Everything the GPU targets need from a machine with a hardware GPU: the
# test suite on the real adapter, and the targets measured side by side with
# the fast CPU path and scikit-learn on the same data.
#
#   benches/gpu-session.sh tests    GPU tests (CI=true), then every test
#   benches/gpu-session.sh dense    4M x 256 dense f32, 20 epochs
#   benches/gpu-session.sh sparse   2M x 10^6, 64 non-zeros a row, 20 epochs
#   benches/gpu-session.sh all      the three, about 8 minutes on an H100
#
# Such a machine may reach no registry, so build here and carry:
#   cargo build --release && cargo test --release --test tests --no-run
#   mkdir -p .gpu-carry && cp target/release/perceptron .gpu-carry/ &&
#     cp "$(ls -t target/release/deps/tests-* | grep -v '\.d$' | head -1)" .gpu-carry/tests
# plus the Vulkan loader's packages in .gl/ where the machine has none
# (`apt-get download libvulkan1`), then run this script there. Results go
# to $OUT, a few files in all: session.txt (the readable summary),
# tests.txt, and one JSON file a data set with every run in it.
set -uo pipefail
cd "$(dirname "$0")/.."
OUT=${OUT:-/tmp/gpu-session}
mkdir -p "$OUT"
BIN=.gpu-carry/perceptron
STAGE=${1:-all}
ADAPTER=${ADAPTER:-NVIDIA}
# A forced mode (the device's walk alone, or passes over windows alone) on
# data with many mistakes makes a round trip per mistake: minutes on the
# sparse set. Each such `bench` (which runs the reference loop first, about
# 25 s on the dense set) gets this many seconds, and a run cut short says so.
FORCED_SECONDS=${FORCED_SECONDS:-90}
LOG="$OUT/session.txt"

# (grep reads all of ldconfig's output: with -q it could stop early, and
# pipefail would then report ldconfig's broken pipe as "no loader".)
if [ -d .gl ] && ! ldconfig -p | grep libvulkan > /dev/null; then
    for f in .gl/*.deb; do dpkg -x "$f" /; done
    ldconfig
fi
if [ -f /usr/local/nvidia/share/vulkan/icd.d/nvidia_icd.json ]; then
    export VK_DRIVER_FILES=/usr/local/nvidia/share/vulkan/icd.d/nvidia_icd.json
fi
export NODEVICE_SELECT=1
{
    nvidia-smi --query-gpu=name,memory.total,driver_version --format=csv 2>&1
    nproc
    "$BIN" devices
} >> "$LOG"

if [ "$STAGE" = tests ] || [ "$STAGE" = all ]; then
    # The tests find data/ and the binary through the paths they were built
    # at; link those to this checkout when they differ.
    built_at=$(strings .gpu-carry/tests | grep -m1 -o '/[^ ]*/data/iris_setosa.csv' | sed 's#/data/iris_setosa.csv##')
    if [ -n "$built_at" ] && [ ! -e "$built_at" ]; then mkdir -p "$(dirname "$built_at")"; ln -s "$PWD" "$built_at"; fi
    # The tests run target/release/perceptron: the carried binary where
    # there is none (a machine that did not build), never over a build.
    [ -e target/release/perceptron ] || { mkdir -p target/release && cp "$BIN" target/release/perceptron; }
    {
        echo "== GPU tests on $ADAPTER (CI=true: no adapter is a failure)"
        CI=true PERCEPTRON_TEST_ADAPTER="$ADAPTER" .gpu-carry/tests gpu:: --test-threads=2 2>&1
        echo "== every test (the tools the MPI and Python tests need may be missing here)"
        PERCEPTRON_TEST_ADAPTER="$ADAPTER" .gpu-carry/tests --test-threads=8 2>&1
    } > "$OUT/tests.txt"
    grep -E "^== |test result|FAILED|panicked" "$OUT/tests.txt" | tee -a "$LOG"
fi

run_case() { # name, gen options, epochs
    local name=$1 opts=$2 epochs=$3 dir=/tmp/gpu-session-$1
    mkdir -p "$dir"
    [ -f "/tmp/$name.pbin" ] || "$BIN" gen $opts --seed 1 -o "/tmp/$name.pbin" > "$dir/gen.txt" 2>&1
    "$BIN" bench "/tmp/$name.pbin" --max-epochs "$epochs" --adapter "$ADAPTER" --json > "$dir/adaptive.json"
    # The device's own walk, and passes over windows, each on its own; the
    # exit status says whether one was cut short (124) or failed.
    local mode passes
    for mode in walk:always windows:windows; do
        passes=${mode#*:} mode=${mode%%:*}
        timeout -k 15 "$FORCED_SECONDS" "$BIN" bench "/tmp/$name.pbin" --max-epochs "$epochs" --adapter "$ADAPTER" --backends gpu --passes "$passes" --json > "$dir/$mode.json" 2> "$dir/$mode.err"
        echo $? > "$dir/$mode.status"
    done
    python3 benches/sklearn_peer.py "/tmp/$name.pbin" --epochs "$epochs" > "$dir/sklearn.json"
    python3 - "$dir" "$name" "$OUT/$name.json" "$FORCED_SECONDS" <<'PY' | tee -a "$LOG"
import json, sys
d, name, out, limit = sys.argv[1], sys.argv[2], sys.argv[3], sys.argv[4]
def load(f):
    try:
        return json.load(open(f"{d}/{f}.json"))
    except (OSError, ValueError):
        return None
def text(f):
    try:
        return open(f"{d}/{f}").read().strip()
    except OSError:
        return None
r, s = load("adaptive"), load("sklearn")
json.dump({k: load(k) for k in ("adaptive", "walk", "windows", "sklearn")} | {"gen": text("gen.txt")}, open(out, "w"), indent=1)
if r is None:
    sys.exit(f"{name}: the adaptive bench left no report")
print(f"{name}: {r['rows']} x {r['features']}, identical={r['all_identical']}")
for note in r.get("notes", []):
    print(f"  note: {note}")
runs = [(x["backend"] + " (adaptive)", x) for x in r["runs"]]
for mode in ("walk", "windows"):
    m, status = load(mode), text(f"{mode}.status")
    if m is None:
        why = f"not finished in {limit} s" if status in ("124", "137") else f"failed (exit {status}): {(text(f'{mode}.err') or '')[-300:]}"
        print(f"  gpu ({mode}): {why}")
        continue
    gpu = [(f"gpu ({mode})", x) for x in m["runs"] if x["backend"] == "gpu"]
    if not gpu:
        print(f"  gpu ({mode}): no GPU run: {'; '.join(m.get('notes', []))}")
    runs += gpu
for label, x in runs:
    vs = f"x{s['seconds_per_epoch']/x['seconds_per_epoch']:8.1f} vs scikit-learn" if s else "(no scikit-learn)"
    print(f"  {label:<16} {1e3*x['seconds_per_epoch']:10.2f} ms/epoch  {vs}  "
          f"round trips {x['passes']}  engine {100*x['engine_seconds']/max(x['seconds'],1e-12):.0f}% of wall  identical={x['identical']}")
if s:
    print(f"  scikit-learn {1e3*s['seconds_per_epoch']:8.2f} ms/epoch")
if r.get("device"):
    e = r["device"]; print(f"  device copy {e['copy_gb_per_second']:.0f} GB/s (read + written), one margin pass {e['pass_gb_per_second']:.0f} GB/s = {e['pass_percent_of_copy']:.0f}% of copy")
PY
}
# Targets 1 and 2: dense f32, n*d >= 2^28: 4M x 256, 20 epochs.
if [ "$STAGE" = dense ] || [ "$STAGE" = all ]; then
    run_case dense "--rows 4000000 --features 256 --planted-margin 0.002" 20
fi
# Target 3: sparse, 2M rows, 10^6 features, 64 non-zeros a row.
if [ "$STAGE" = sparse ] || [ "$STAGE" = all ]; then
    run_case sparse "--rows 2000000 --features 1000000 --density sparse --nnz 64" 20
fi
