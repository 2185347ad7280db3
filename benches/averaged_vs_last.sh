#!/usr/bin/env bash
# Held-out accuracy of the averaged perceptron against the last iterate on
# non-separable data: the real datasets in data/ and Fashion-MNIST pairs.
#   benches/averaged_vs_last.sh [EPOCHS]      (needs a release build)
# Fashion-MNIST comes from Debian: apt-get install dataset-fashion-mnist.
set -euo pipefail
cd "$(dirname "$0")/.."
P=./target/release/perceptron
EPOCHS=${1:-20}
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT

sets=("data/breast_cancer.csv" "data/heart_scale.svm")
if [ -d /usr/share/datasets/fashion-mnist ]; then
    for pair in 0,6 2,4 4,6 7,9; do
        f="$work/fashion_${pair/,/v}.csv"
        python3 benches/fashion_mnist.py "$f" --classes "$pair" >/dev/null
        sets+=("$f")
    done
fi

accuracy() { "$P" eval "$1" "$2" --json | python3 -c 'import json,sys; print("%.2f" % (100*json.load(sys.stdin)["accuracy"]))'; }

printf '%-26s %7s %7s %9s %10s %10s\n' data train test epochs "last %" "averaged %"
for d in "${sets[@]}"; do
    ext="${d##*.}"
    tr="$work/train.$ext"; te="$work/test.$ext"
    "$P" split "$d" -o "$tr" --test "$te" --seed 1 2>/dev/null
    "$P" train "$tr" --max-epochs "$EPOCHS" -o "$work/last.json" >/dev/null 2>&1 || true
    "$P" train "$tr" --max-epochs "$EPOCHS" --average -o "$work/avg.json" >/dev/null 2>&1 || true
    printf '%-26s %7s %7s %9s %10s %10s\n' "$(basename "$d")" "$(wc -l < "$tr")" "$(wc -l < "$te")" "$EPOCHS" \
        "$(accuracy "$work/last.json" "$te")" "$(accuracy "$work/avg.json" "$te")"
done
