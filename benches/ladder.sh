#!/usr/bin/env bash
# Growth: time per epoch against rows x features, on a ladder of sizes
# spanning more than 100x, for the reference and the fast CPU path (and the
# GPU when one is found). Needs a release build.
#   benches/ladder.sh [EPOCHS]
#   BACKENDS=cpu benches/ladder.sh    # leave out the GPU (lavapipe is for correctness only)
set -euo pipefail
cd "$(dirname "$0")/.."
P=./target/release/perceptron
EPOCHS=${1:-10}
BACKENDS=${BACKENDS:-cpu,gpu}
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
printf '%-16s %12s %9s %14s %14s %12s\n' size "rows x feat" backend "ms/epoch" "ns/(row.feat)" "speedup"
for size in 25000x64 100000x128 200000x256 400000x512; do
    rows=${size%x*}; feat=${size#*x}
    "$P" gen --rows "$rows" --features "$feat" --noise 0.02 --seed 3 -o "$work/d.pbin" >/dev/null 2>&1
    "$P" bench "$work/d.pbin" --max-epochs "$EPOCHS" --backends "$BACKENDS" --json 2>/dev/null | python3 -c "
import json, sys
r = json.load(sys.stdin)
n = r['rows'] * r['features']
for x in r['runs']:
    print('%-16s %12d %9s %14.3f %14.4f %11.2fx' % ('$size', n, x['backend'], 1e3 * x['seconds_per_epoch'], 1e9 * x['seconds_per_epoch'] / n, x['speedup_vs_reference']))
"
done
