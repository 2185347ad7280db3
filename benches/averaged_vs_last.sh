#!/usr/bin/env bash
# Held-out accuracy of the averaged perceptron against the last iterate:
# every row of the two tables in docs/training.md's "Variants" section, printed as
# Markdown table rows.
#   benches/averaged_vs_last.sh [EPOCHS [OVR_EPOCHS]]   (needs a release build)
#
# Binary (EPOCHS, default 20): data/breast_cancer.csv, data/heart_scale.svm
# and four Fashion-MNIST pairs. One-vs-rest (--multiclass ovr): the ten
# digits of data/digits.csv (EPOCHS) and the ten Fashion-MNIST classes
# (OVR_EPOCHS, default 10), with the macro F1 of `perceptron eval --json`.
# Every set is split 80/20 by `perceptron split --seed 1`; training is f32,
# rows in file order, --backend auto (every backend gives the same model, so
# the figures do not depend on the machine).
# Fashion-MNIST comes from Debian: apt-get install dataset-fashion-mnist
# (its rows are skipped, with a note, when it is not installed).
set -euo pipefail
cd "$(dirname "$0")/.."
P=./target/release/perceptron
EPOCHS=${1:-20}
OVR_EPOCHS=${2:-10}
FASHION=/usr/share/datasets/fashion-mnist
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT

json() { python3 -c "import json,sys; r=json.load(sys.stdin); print($1)"; }
rows() { "$P" info "$1" --json | json 'r["rows"]'; }
percent() { json '"%.2f%%" % (100*r["accuracy"])'; }
percent_f1() { json '"%.2f%% (macro F1 %.3f)" % (100*r["accuracy"], r["macro_f1"])'; }

# Trains; exit 3 (stopped at --max-epochs, the usual end on noisy data) is
# fine, anything else is an error.
train() {
    local rc=0
    "$P" train "$@" >/dev/null 2>"$work/train.err" || rc=$?
    if [ "$rc" -ne 0 ] && [ "$rc" -ne 3 ]; then
        cat "$work/train.err" >&2
        exit "$rc"
    fi
}

# row NAME FILE EPOCHS binary|ovr
row() {
    local name=$1 file=$2 epochs=$3 kind=$4
    local ext="${file##*.}"
    local tr="$work/train.$ext" te="$work/test.$ext"
    "$P" split "$file" -o "$tr" --test "$te" --seed 1 >/dev/null
    local extra=() score=percent
    if [ "$kind" = ovr ]; then
        extra=(--multiclass ovr)
        score=percent_f1
    fi
    train "$tr" --max-epochs "$epochs" "${extra[@]}" -o "$work/last.json"
    train "$tr" --max-epochs "$epochs" "${extra[@]}" --average -o "$work/avg.json"
    printf '| %s | %s / %s | %s | %s |\n' "$name" "$(rows "$tr")" "$(rows "$te")" \
        "$("$P" eval "$work/last.json" "$te" --json | $score)" \
        "$("$P" eval "$work/avg.json" "$te" --json | $score)"
}

echo "commit $(git rev-parse --short HEAD 2>/dev/null || echo unknown), $EPOCHS epochs (Fashion-MNIST one-vs-rest: $OVR_EPOCHS)"
echo
echo "| data | train / test rows | last iterate | averaged |"
echo "|---|---|---|---|"
row breast_cancer data/breast_cancer.csv "$EPOCHS" binary
row heart_scale data/heart_scale.svm "$EPOCHS" binary
if [ -d "$FASHION" ]; then
    for pair in "T-shirt vs shirt:0,6" "pullover vs coat:2,4" "coat vs shirt:4,6" \
        "sneaker vs ankle boot:7,9"; do
        classes=${pair#*:}
        f="$work/fashion_${classes/,/v}.csv"
        python3 benches/fashion_mnist.py "$f" --classes "$classes" >/dev/null
        row "Fashion-MNIST ${pair%:*} (${classes/,/ vs })" "$f" "$EPOCHS" binary
    done
fi

echo
echo "One-vs-rest (--multiclass ovr):"
echo
echo "| data | train / test rows | last iterate | averaged |"
echo "|---|---|---|---|"
row "digits (\`data/digits.csv\`), 10 classes, $EPOCHS epochs" data/digits.csv "$EPOCHS" ovr
if [ -d "$FASHION" ]; then
    python3 benches/fashion_mnist.py "$work/fashion.csv" >/dev/null
    row "Fashion-MNIST, all 10 classes, $OVR_EPOCHS epochs" "$work/fashion.csv" "$OVR_EPOCHS" ovr
else
    echo "Fashion-MNIST rows skipped: $FASHION not found (apt-get install dataset-fashion-mnist)" >&2
fi
