#!/usr/bin/env bash
# Parsing speed, measured against peers in the same run, printed as a
# markdown table: `perceptron info` (parse and summarise) on a 604 MB
# LIBSVM file and on the Fashion-MNIST trouser-vs-bag CSV, the same files
# gzipped, `convert` and `gen`; scikit-learn's `load_svmlight_file` on the
# same LIBSVM file, and `gzip -dc` on the same .gz.
#
#   benches/parse-session.sh            # files in /dev/shm/perceptron-parse
#   PARSE_DIR=DIR RUNS=5 PEER_RUNS=2 benches/parse-session.sh
#
# Needs: hyperfine, python3 with scikit-learn (`pip install scikit-learn`),
# gzip, and Debian's dataset-fashion-mnist for the CSV (skipped without it).
# Times are the best of RUNS wall-clock runs (hyperfine, one warm-up), so
# that other jobs on a shared machine disturb them least; CPU is the mean
# user + system time of those runs (the fairer comparison when other jobs
# share the machine: scikit-learn's loader runs on one core). The files are made once and kept: the
# LIBSVM file is `perceptron gen --rows 500000 --features 1000000 --density
# sparse --nnz 64 --noise 0.01 --seed 3`, byte-identical for that seed.
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
cd "$root"
default_dir=/dev/shm/perceptron-parse
[ -d /dev/shm ] || default_dir=${TMPDIR:-/tmp}/perceptron-parse
dir=${PARSE_DIR:-$default_dir}
runs=${RUNS:-5}
peer_runs=${PEER_RUNS:-2}

cargo build --release --locked -q
bin=$root/target/release/perceptron
mkdir -p "$dir"
cd "$dir"

gen_args=(--rows 500000 --features 1000000 --density sparse --nnz 64 --noise 0.01 --seed 3)
[ -s big.svm ] || "$bin" gen -o big.svm "${gen_args[@]}" >/dev/null
[ -s big.svm.gz ] || gzip -6 -c big.svm >big.svm.gz
have_csv=0
if [ -s fm18.csv ] || [ -d /usr/share/datasets/fashion-mnist ]; then
    [ -s fm18.csv ] || python3 "$root/benches/fashion_mnist.py" fm18.csv --classes 1,8 >/dev/null
    [ -s fm18.csv.gz ] || gzip -6 -c fm18.csv >fm18.csv.gz
    have_csv=1
fi

mb() { python3 -c "import os; print(os.path.getsize('$1') / 1e6)"; }
# Best wall-clock seconds and mean CPU seconds of a command.
timed() {
    hyperfine -w 1 -r "$runs" --export-json timing.json "$1" >/dev/null 2>&1
    python3 -c '
import json
r = json.load(open("timing.json"))["results"][0]
print("%.3f %.3f" % (min(r["times"]), r["user"] + r["system"]))'
}

echo "## Parsing: $(nproc) cores, commit $(git -C "$root" rev-parse --short HEAD), $(date -u +%F)"
echo
echo "Load average before the run: $(cut -d' ' -f1-3 /proc/loadavg)"
echo
echo "| what | input MB | best wall s | CPU s | MB/s (wall) | vs peer |"
echo "|---|---:|---:|---:|---:|---:|"
row() { # what, file for MB, wall, cpu, ratio
    local size
    size=$(mb "$2")
    python3 -c "print(f'| $1 | {$size:.0f} | $3 | $4 | {$size / $3:.0f} | $5 |')"
}

read -r svm_wall svm_cpu < <(timed "$bin info big.svm")
read -r peer peer_cpu < <(python3 - "$peer_runs" <<'EOF'
import sys, time
from sklearn.datasets import load_svmlight_file
best, cpu = None, []
for _ in range(int(sys.argv[1])):
    t, c = time.perf_counter(), time.process_time()
    X, y = load_svmlight_file("big.svm")
    t, c = time.perf_counter() - t, time.process_time() - c
    best = t if best is None else min(best, t)
    cpu.append(c)
print(f"{best:.3f} {sum(cpu) / len(cpu):.3f}")
EOF
)
ratio=$(python3 -c "print(f'{$peer / $svm_wall:.1f}x wall, {$peer_cpu / $svm_cpu:.1f}x CPU')")
row "perceptron info big.svm (LIBSVM)" big.svm "$svm_wall" "$svm_cpu" "**$ratio** scikit-learn"
row "scikit-learn load_svmlight_file big.svm" big.svm "$peer" "$peer_cpu" "1.0x"

read -r gz_wall gz_cpu < <(timed "$bin info big.svm.gz")
read -r zcat_wall zcat_cpu < <(timed "gzip -dc big.svm.gz")
ratio=$(python3 -c "print(f'{$zcat_wall / $gz_wall:.2f}x')")
row "perceptron info big.svm.gz (MB: decompressed)" big.svm "$gz_wall" "$gz_cpu" "$ratio gzip -dc"
row "gzip -dc big.svm.gz (MB: decompressed)" big.svm "$zcat_wall" "$zcat_cpu" "1.00x"

read -r conv_wall conv_cpu < <(timed "$bin convert big.svm big.pbin")
ratio=$(python3 -c "print(f'{$svm_wall / $conv_wall:.2f}x')")
row "perceptron convert big.svm big.pbin" big.svm "$conv_wall" "$conv_cpu" "$ratio info"
read -r gen_wall gen_cpu < <(runs=1 timed "$bin gen -o gen.svm ${gen_args[*]}")
ratio=$(python3 -c "print(f'{$svm_wall / $gen_wall:.2f}x')")
row "perceptron gen -o gen.svm (MB: written)" big.svm "$gen_wall" "$gen_cpu" "$ratio info"
cmp -s gen.svm big.svm || echo "gen.svm differs from big.svm" >&2
read -r pbin_wall pbin_cpu < <(timed "$bin info big.pbin")
row "perceptron info big.pbin (no parsing)" big.pbin "$pbin_wall" "$pbin_cpu" ""

if [ "$have_csv" = 1 ]; then
    read -r csv_wall csv_cpu < <(timed "$bin info fm18.csv")
    row "perceptron info fm18.csv (CSV, 14000 x 784)" fm18.csv "$csv_wall" "$csv_cpu" ""
    read -r csvgz_wall csvgz_cpu < <(timed "$bin info fm18.csv.gz")
    row "perceptron info fm18.csv.gz (MB: decompressed)" fm18.csv "$csvgz_wall" "$csvgz_cpu" ""
fi
rm -f timing.json gen.svm
