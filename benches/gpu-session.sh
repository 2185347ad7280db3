#!/usr/bin/env bash
# Every figure of the GPU targets from one machine with a hardware GPU, in
# about 4 minutes: the GPU tests on the real adapter, then the dense and
# sparse cases trained by every mode side by side with the CPU engine, the
# reference loop and scikit-learn on the same data, and the device's own
# margin pass (apart from its round trip) at several lane counts.
#
#   benches/gpu-session.sh tests    GPU tests (CI=true) on the adapter
#   benches/gpu-session.sh dense    4M x 256 dense f32, 20 epochs
#   benches/gpu-session.sh sparse   2M x 10^6, 64 non-zeros a row, 10 epochs
#   benches/gpu-session.sh textbook every policy against the reference loop
#                                   (benches/against_textbook.py, cpu and gpu)
#   benches/gpu-session.sh all      the four
#
# Such a machine may reach no registry, so build here and carry:
#   cargo build --release && cargo test --release --test tests --no-run
#   mkdir -p .gpu-carry && cp target/release/perceptron .gpu-carry/ &&
#     cp "$(ls -t target/release/deps/tests-* | grep -v '\.d$' | head -1)" .gpu-carry/tests
# plus the Vulkan loader's and glvnd's packages in .gl/ where the machine
# has none (below). BASELINE=path/to/an/older/perceptron
# measures that binary's GPU modes in the same session, for before/after
# ratios (on the cases in BASELINE_CASES, both by default). Results go to $OUT: session.txt (the readable summary), tests.txt,
# and every run's JSON report under runs-<case>/.
set -uo pipefail
cd "$(dirname "$0")/.."
OUT=${OUT:-/tmp/gpu-session}
WORK=${WORK:-/tmp/gpu-work}
mkdir -p "$OUT" "$WORK"
BIN=${BIN:-.gpu-carry/perceptron}
BASELINE=${BASELINE:-}
STAGE=${1:-all}
ADAPTER=${ADAPTER:-NVIDIA}
# The reference loop on the dense case takes about 20 s on an H100's host:
# REFERENCE_DENSE=1 includes it (its time is in the notes otherwise).
REFERENCE_DENSE=${REFERENCE_DENSE:-0}
# scikit-learn's epochs (its cost per epoch is the same in every epoch; 0
# skips it), the lane counts the device's margin pass is timed at, and
# whether to time passes over windows (slow on the sparse case).
SKLEARN_EPOCHS=${SKLEARN_EPOCHS:-2}
CEILING_LANES=${CEILING_LANES:-8 16 32}
WINDOWS=${WINDOWS-dense}
# The host's walks forced one at a time (the chooser's modes alone), and the
# device walk's waste settings to try (none by default).
HOST_PASSES=${HOST_PASSES-host ahead reference}
WASTES=${WASTES-}
# Smaller cases for a dry run (on lavapipe, say): the rows of each.
DENSE_ROWS=${DENSE_ROWS:-4000000}
SPARSE_ROWS=${SPARSE_ROWS:-2000000}
LOG="$OUT/session.txt"

# The Vulkan loader and glvnd (NVIDIA's driver library needs its dispatch):
# apt-get download libvulkan1 libegl1 libglvnd0 libopengl0 libgl1 libglx0 libgles2
if [ -d .gl ] && ! { ldconfig -p | grep libvulkan > /dev/null && ldconfig -p | grep libGLdispatch > /dev/null; }; then
    for f in .gl/*.deb; do dpkg -x "$f" /; done
    ldconfig
fi
# NVIDIA's Vulkan driver manifest: where the container runtime puts it, or
# wherever it is.
icd=""
for f in /usr/local/nvidia/share/vulkan/icd.d/nvidia_icd.json /usr/share/vulkan/icd.d/nvidia_icd.json \
    /etc/vulkan/icd.d/nvidia_icd.json; do
    [ -f "$f" ] && icd=$f && break
done
[ -n "$icd" ] || icd=$(find /usr /etc /opt -name 'nvidia_icd*.json' 2>/dev/null | head -1)
[ -n "$icd" ] && [ -z "${VK_DRIVER_FILES:-}" ] && export VK_DRIVER_FILES=$icd
export NODEVICE_SELECT=1
{
    date -u
    nvidia-smi --query-gpu=name,memory.total,driver_version --format=csv,noheader 2>&1
    echo "$(nproc) cores; Vulkan loader: $(ldconfig -p | grep -c libvulkan) entries; driver manifest: ${icd:-none}"
    "$BIN" devices 2>&1 | head -5
} >> "$LOG"

# run CASE LABEL SECONDS COMMAND...: one training run, its JSON report and
# model kept under runs-CASE/; a run cut short or failed says so.
run() {
    local case=$1 label=$2 limit=$3
    shift 3
    local dir="$OUT/runs-$case"
    mkdir -p "$dir"
    timeout -k 5 "$limit" "$@" -o "$WORK/$case-$label.model.json" --json > "$dir/$label.json" 2> "$WORK/$case-$label.err"
    local status=$?
    # 3: the epoch cap came before convergence, which the cases expect.
    [ $status -eq 0 ] || [ $status -eq 3 ] || echo "exit $status: $(tail -c 300 "$WORK/$case-$label.err")" > "$dir/$label.failed"
}

case_runs() { # CASE DATA EPOCHS
    local case=$1 data=$2 epochs=$3
    local train=(train "$data" --max-epochs "$epochs")
    run "$case" cpu 120 "$BIN" "${train[@]}" --backend cpu
    run "$case" gpu 120 "$BIN" "${train[@]}" --backend gpu
    # The default: with a GPU present it must be at least the faster of the two.
    run "$case" auto 120 "$BIN" "${train[@]}" --backend auto
    run "$case" gpu-walk 120 "$BIN" "${train[@]}" --backend gpu --passes always
    # The host's own walks, each forced: the chooser's modes measured alone.
    # (On dense rows `ahead` is the host's walk, and `reference` the slow
    # textbook loop that REFERENCE_DENSE governs.)
    for passes in $HOST_PASSES; do
        [ "$case" = dense ] && [ "$passes" = ahead ] && continue
        [ "$case" = dense ] && [ "$passes" = reference ] && [ "$REFERENCE_DENSE" != 1 ] && continue
        run "$case" "cpu-$passes" 120 "$BIN" "${train[@]}" --backend cpu --passes "$passes"
    done
    [[ " $WINDOWS " == *" $case "* ]] && run "$case" gpu-windows 40 "$BIN" "${train[@]}" --backend gpu --passes windows
    for waste in $WASTES; do
        run "$case" "gpu-walk-waste$waste" 120 env PERCEPTRON_GPU_WALK_WASTE=$waste "$BIN" "${train[@]}" --backend gpu --passes always
    done
    if [ -n "$BASELINE" ] && [[ " ${BASELINE_CASES:-dense sparse} " == *" $case "* ]]; then
        run "$case" before-cpu 120 "$BASELINE" "${train[@]}" --backend cpu
        run "$case" before-gpu 120 "$BASELINE" "${train[@]}" --backend gpu
        run "$case" before-gpu-walk 120 "$BASELINE" "${train[@]}" --backend gpu --passes always
    fi
    if [ "$case" != dense ] || [ "$REFERENCE_DENSE" = 1 ]; then
        run "$case" reference 120 "$BIN" "${train[@]}" --backend reference
    fi
    # The device's margin pass alone, at several lane counts.
    for lanes in $CEILING_LANES; do
        PERCEPTRON_GPU_LANES=$lanes timeout -k 5 60 "$BIN" bench "$data" --max-epochs 1 --backends gpu --adapter "$ADAPTER" --json \
            > "$OUT/runs-$case/ceiling-lanes$lanes.json" 2> /dev/null
    done
    [ "$SKLEARN_EPOCHS" = 0 ] || timeout -k 5 180 python3 benches/sklearn_peer.py "$data" --epochs "$SKLEARN_EPOCHS" > "$OUT/runs-$case/sklearn.json" 2> "$WORK/$case-sklearn.err"
    python3 benches/gpu_session_summary.py "$OUT/runs-$case" "$WORK" "$case" | tee -a "$LOG"
    echo "== $case done at ${SECONDS} s" >> "$LOG"
}

if [ "$STAGE" = sparse ] || [ "$STAGE" = all ]; then
    [ -f "$WORK/sparse.pbin" ] || "$BIN" gen --rows "$SPARSE_ROWS" --features 1000000 --density sparse --nnz 64 --seed 1 -o "$WORK/sparse.pbin" > /dev/null
    case_runs sparse "$WORK/sparse.pbin" 10
fi
if [ "$STAGE" = dense ] || [ "$STAGE" = all ]; then
    [ -f "$WORK/dense.pbin" ] || "$BIN" gen --rows "$DENSE_ROWS" --features 256 --planted-margin 0.002 --seed 1 -o "$WORK/dense.pbin" > /dev/null
    case_runs dense "$WORK/dense.pbin" 20
fi
# Every policy against the reference loop, epoch by epoch, on the dev VM's
# sizes and the repo's datasets, with this machine's cores and its GPU.
if [ "$STAGE" = textbook ] || [ "$STAGE" = all ]; then
    timeout -k 5 "${TEXTBOOK_SECONDS:-150}" python3 benches/against_textbook.py --bin "$BIN" --backends cpu,gpu \
        --runs "${TEXTBOOK_RUNS:-3}" --work "$WORK/textbook" > "$OUT/textbook.txt" 2>&1
    echo "== against the textbook loop ($?): textbook.txt, at ${SECONDS} s" >> "$LOG"
fi
# The tests last: the figures come back even if they run out of time.
if [ "$STAGE" = tests ] || [ "$STAGE" = all ]; then
    # The tests find data/ and the binary through the paths they were built
    # at; link those to this checkout when they differ.
    built_at=$(strings .gpu-carry/tests | grep -m1 -o '/[^ ]*/target/release/perceptron' | sed 's#/target/release/perceptron##')
    if [ -n "$built_at" ] && [ ! -e "$built_at" ]; then mkdir -p "$(dirname "$built_at")"; ln -s "$PWD" "$built_at"; fi
    [ -e target/release/perceptron ] || { mkdir -p target/release && cp "$BIN" target/release/perceptron; }
    {
        echo "== GPU and loop tests on $ADAPTER (CI=true: no adapter is a failure)"
        CI=true PERCEPTRON_TEST_ADAPTER="$ADAPTER" timeout -k 5 150 .gpu-carry/tests gpu:: loop_exactness:: golden:: --test-threads=4 2>&1
    } > "$OUT/tests.txt"
    grep -E "^== |test result|FAILED|panicked" "$OUT/tests.txt" | tee -a "$LOG"
fi

