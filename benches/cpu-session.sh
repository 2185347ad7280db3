#!/usr/bin/env bash
# The CPU-side tables of BENCHMARKS.md, in one run on the machine at hand:
# Fashion-MNIST against scikit-learn and the host's memory bandwidth, the
# GPU targets' data shape on the CPU, and text parsing throughput.
#
#   benches/cpu-session.sh [OUT_DIR]
#
# Needs a release build, Debian's dataset-fashion-mnist, and scikit-learn
# (pip install scikit-learn). Run it on a quiet machine: every figure is a
# ratio against a baseline measured in the same run, but a busy core skews
# the parallel path more than the single-threaded ones.
set -euo pipefail
cd "$(dirname "$0")/.."
P=./target/release/perceptron
OUT=${1:-/tmp/cpu-session}
mkdir -p "$OUT"
work=${WORK:-/tmp/perceptron-bench}
mkdir -p "$work"

echo "## machine"
lscpu | grep -E '^(Model name|CPU\(s\)|Thread|L3)' | sed 's/  */ /g'
free -g | awk '/Mem:/ {print "memory " $2 " GiB"}'
git log -1 --format='commit %h (%cs)'

peer() { # data epochs [positive]
    local pos=()
    [ -n "${3:-}" ] && pos=(--positive "$3")
    python3 benches/sklearn_peer.py "$1" --epochs "$2" "${pos[@]}" --model "$4"
}

table() { # bench.json sklearn.json
    python3 - "$1" "$2" <<'PY'
import json, sys
r = json.load(open(sys.argv[1])); s = json.load(open(sys.argv[2]))
host = r["host_read_gb_per_second"]
print(f"{r['rows']} x {r['features']} ({r['feature_bytes']/1e6:.0f} MB), {r['threads']} threads, "
      f"host read bandwidth {host:.1f} GB/s, all identical: {r['all_identical']}")
print("| path | ms/epoch | GB/s | % of host bandwidth | vs reference | vs scikit-learn | engine share |")
print("|---|---:|---:|---:|---:|---:|---:|")
sk = s["seconds_per_epoch"]
for x in r["runs"]:
    t = x["seconds_per_epoch"]
    print(f"| {x['engine']} | {1e3*t:.1f} | {x['gb_per_second']:.2f} | {100*x['gb_per_second']/host:.0f}% "
          f"| {x['speedup_vs_reference']:.2f}x | {sk/t:.2f}x | {100*x['engine_seconds']/max(x['seconds'],1e-12):.0f}% |")
print(f"| scikit-learn Perceptron (f64) | {1e3*sk:.1f} | | | | 1.00x | |")
print(f"scikit-learn's model identical to ours (in f64): {s.get('identical_to_model')}")
PY
}

echo
echo "## Fashion-MNIST, class 0 (T-shirt/top) against the rest, 20 epochs"
[ -f "$work/fashion.pbin" ] || {
    python3 benches/fashion_mnist.py "$work/fashion.csv"
    "$P" convert "$work/fashion.csv" "$work/fashion.pbin"
}
"$P" bench "$work/fashion.pbin" --positive 0 --max-epochs 20 --backends cpu --json > "$OUT/fashion-bench.json"
"$P" train "$work/fashion.pbin" --positive 0 --max-epochs 20 --precision f64 --backend cpu -o "$OUT/fashion-f64.json" >/dev/null || true
peer "$work/fashion.pbin" 20 0 "$OUT/fashion-f64.json" > "$OUT/fashion-sklearn.json"
table "$OUT/fashion-bench.json" "$OUT/fashion-sklearn.json"

echo
echo "## The GPU targets' data on the CPU: 4,000,000 x 256 dense f32, separable, 20 epochs at most"
[ -f "$work/dense.pbin" ] || "$P" gen --rows 4000000 --features 256 --planted-margin 0.002 --seed 1 -o "$work/dense.pbin" >/dev/null
"$P" bench "$work/dense.pbin" --max-epochs 20 --backends cpu --json > "$OUT/dense-bench.json"
"$P" train "$work/dense.pbin" --max-epochs 20 --precision f64 --backend cpu -o "$OUT/dense-f64.json" >/dev/null || true
peer "$work/dense.pbin" 20 "" "$OUT/dense-f64.json" > "$OUT/dense-sklearn.json"
table "$OUT/dense-bench.json" "$OUT/dense-sklearn.json"

policies() { # data epochs [positive]: the fast CPU path per --passes policy and thread count
    local pos=()
    [ -n "${3:-}" ] && pos=(--positive "$3")
    echo "| fast CPU path | threads | s for $2 epochs | first epoch ms | later epochs ms (mean) | engine batches |"
    echo "|---|---:|---:|---:|---:|---:|"
    for threads in 1 "$(nproc)"; do
        for policy in adaptive always windows; do
            RAYON_NUM_THREADS=$threads "$P" train "$1" "${pos[@]}" --max-epochs "$2" --backend cpu \
                --passes "$policy" --json -o "$OUT/policy.json" 2>/dev/null | python3 -c "
import json, sys
r = json.load(sys.stdin); e = r['epoch_seconds']
later = sum(e[1:]) / max(len(e) - 1, 1)
name = {'adaptive': 'adaptive (default)', 'always': 'walk only', 'windows': 'windows only'}['$policy']
print(f'| {name} | $threads | {r[\"seconds\"]:.2f} | {1e3*e[0]:.0f} | {1e3*later:.0f} | {r[\"engine_stats\"][\"passes\"]} |')
" || true
        done
    done
}

echo
echo "## Scaling with cores and the three policies (same data, same run)"
echo
echo "Fashion-MNIST, class 0 against the rest, 20 epochs:"
policies "$work/fashion.pbin" 20 0
echo
echo "4,000,000 x 256, separable, 20 epochs:"
policies "$work/dense.pbin" 20

echo
echo "## Reading data (Fashion-MNIST, 70,000 x 784), best of 3"
[ -f "$work/fashion.svm" ] || "$P" convert "$work/fashion.csv" "$work/fashion.svm" >/dev/null
for f in fashion.csv fashion.svm fashion.pbin; do
    best=$(for _ in 1 2 3; do
        "$P" convert "$work/$f" "$work/out.pbin" 2>&1 | grep -o 'read in [0-9.]*' | awk '{print $3}'
    done | sort -g | head -1)
    size=$(stat -L -c %s "$work/$f")
    awk -v f="$f" -v s="$size" -v t="$best" 'BEGIN { printf "| %s | %.0f MB | %.3f s | %.0f MB/s |\n", f, s/1e6, t, s/1e6/t }'
done
