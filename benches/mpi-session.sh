#!/usr/bin/env bash
# The distributed tables of BENCHMARKS.md ("Training on several processes"),
# in one run on the machine at hand, over loopback (Open MPI's shared-memory
# transport):
# - exact mode on 1 and 2 ranks against one process: the training loop's
#   time (the report's `seconds`: loading and MPI's start are left out),
#   as a ratio to the single process measured in the same run;
# - the operations and payload bytes of each epoch, counted by the program
#   (they do not depend on the hardware), for exact and mix mode;
# - mix mode's speedup per epoch from 1 to 2 ranks;
# - the per-row costs the cost model in BENCHMARKS.md is built from.
#
#   benches/mpi-session.sh [OUT_DIR]
#
# Needs Open MPI (`apt-get install openmpi-bin libopenmpi-dev libclang-dev`);
# builds `target/release/perceptron` with `--features mpi`. Every figure is
# the median of REPEAT runs (default 5); on a busy machine the ratios still
# move by 10-20%, so run it on a quiet one. Ranks are not bound to cores
# (`--bind-to none`: each may use every core, as one rank per machine
# would) and a waiting rank yields its core (`mpi_yield_when_idle`), since
# here the ranks share the machine's two cores with each other.
set -euo pipefail
cd "$(dirname "$0")/.."
OUT=${1:-/tmp/mpi-session}
REPEAT=${REPEAT:-5}
mkdir -p "$OUT"
work=${WORK:-/tmp/perceptron-mpi-bench}
mkdir -p "$work"
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
export OMPI_MCA_mpi_yield_when_idle=1

cargo build --release --features mpi --quiet
P=./target/release/perceptron

echo "## machine"
lscpu | grep -E '^(Model name|CPU\(s\))' | sed 's/  */ /g'
mpirun --version | head -1
git log -1 --format='commit %h (%cs)'
uptime | sed 's/.*load/load/'

# The data: separable dense (mistakes thin out over ~25 epochs, then a clean
# epoch), noisy dense (a mistake every ~25 rows in every epoch), and
# separable sparse.
[ -f "$work/sep.pbin" ] || "$P" gen --rows 200000 --features 100 --planted-margin 0.004 --seed 1 -o "$work/sep.pbin" >/dev/null
[ -f "$work/noisy.pbin" ] || "$P" gen --rows 200000 --features 100 --noise 0.02 --seed 2 -o "$work/noisy.pbin" >/dev/null
[ -f "$work/sparse.pbin" ] || "$P" gen --rows 200000 --features 100000 --density sparse --nnz 32 --planted-margin 0.01 --seed 3 -o "$work/sparse.pbin" >/dev/null
# Ten times the noisy rows, for mix mode's scaling (epochs long enough that
# the mix itself is a small share).
[ -f "$work/big.pbin" ] || "$P" gen --rows 2000000 --features 100 --noise 0.02 --seed 4 -o "$work/big.pbin" >/dev/null

# run NAME RANKS ARGS...: REPEAT runs, each report kept as NAME-i.json.
run() {
    local name=$1 ranks=$2
    shift 2
    for i in $(seq "$REPEAT"); do
        if [ "$ranks" = 0 ]; then
            "$P" train "$@" --json -o "$work/model.json" > "$OUT/$name-$i.json" || true
        else
            mpirun --quiet --bind-to none -np "$ranks" "$P" train "$@" --json \
                -o "$work/model.json" > "$OUT/$name-$i.json" || true
        fi
    done
}

for data in sep noisy sparse; do
    epochs=()
    [ "$data" = noisy ] && epochs=(--max-epochs 10)
    run "$data-single" 0 "$work/$data.pbin" --backend cpu "${epochs[@]}"
    for k in 1 2; do
        run "$data-exact-$k" "$k" "$work/$data.pbin" --backend cpu --distributed exact "${epochs[@]}"
        run "$data-mix-$k" "$k" "$work/$data.pbin" --backend cpu --distributed mix "${epochs[@]}"
    done
    run "$data-shuffled-single" 0 "$work/$data.pbin" --backend cpu --shuffle --seed 1 "${epochs[@]}"
    run "$data-shuffled-exact-2" 2 "$work/$data.pbin" --backend cpu --shuffle --seed 1 --distributed exact "${epochs[@]}"
done
run big-single 0 "$work/big.pbin" --backend cpu --max-epochs 5
for k in 1 2; do
    run "big-exact-$k" "$k" "$work/big.pbin" --backend cpu --distributed exact --max-epochs 5
    run "big-mix-$k" "$k" "$work/big.pbin" --backend cpu --distributed mix --max-epochs 5
done

python3 - "$OUT" "$REPEAT" <<'PY'
import json, statistics, sys
out, repeat = sys.argv[1], int(sys.argv[2])

def reports(name):
    return [json.load(open(f"{out}/{name}-{i}.json")) for i in range(1, repeat + 1)]

def med(xs):
    return statistics.median(xs)

def seconds(name):
    return med([r["seconds"] for r in reports(name)])

def per_epoch(name):
    return med([r["seconds"] / max(r["epochs"], 1) for r in reports(name)])

print("\n## Exact mode against one process (training loop seconds, median of", repeat, "runs)")
print("| data | epochs | mistakes | one process | exact, 1 rank | exact, 2 ranks | 1 rank / one | 2 ranks / one |")
print("|---|---:|---:|---:|---:|---:|---:|---:|")
for d in ["sep", "noisy", "sparse", "big", "sep-shuffled", "noisy-shuffled", "sparse-shuffled"]:
    shuffled = d.endswith("-shuffled")
    base = d.removesuffix("-shuffled")
    one = f"{base}-shuffled-single" if shuffled else f"{base}-single"
    r = reports(one)[0]
    s1 = seconds(one)
    k1 = None if shuffled else seconds(f"{base}-exact-1")
    k2 = seconds(f"{base}-shuffled-exact-2" if shuffled else f"{base}-exact-2")
    label = base + (" (shuffled)" if shuffled else "")
    print(f"| {label} | {r['epochs']} | {r['total_mistakes']} | {s1:.3f} s | "
          + (f"{k1:.3f} s" if k1 is not None else "-") + f" | {k2:.3f} s | "
          + (f"{k1/s1:.2f}x" if k1 is not None else "-") + f" | {k2/s1:.2f}x |")

print("\n## Operations and payload bytes per epoch on rank 0 (counted; the same on every machine)")
print("| data | mode | ranks | epochs | operations per epoch (median) | bytes per epoch (median) | scans | walks | rows walked |")
print("|---|---|---:|---:|---:|---:|---:|---:|---:|")
for d in ["sep", "noisy", "sparse"]:
    for mode in ["exact", "mix"]:
        for k in [1, 2]:
            r = reports(f"{d}-{mode}-{k}")[0]
            t = r["distributed"]["traffic"]
            ops = med([e["broadcasts"] + e["all_reduces"] + e["sends"] for e in t])
            by = med([e["broadcast_bytes"] + e["all_reduce_bytes"] + e["send_bytes"] for e in t])
            st = r["distributed"].get("steps") or {}
            print(f"| {d} | {mode} | {k} | {r['epochs']} | {ops:g} | {by:g} | "
                  f"{st.get('scans', '-')} | {st.get('walks', '-')} | {st.get('rows_walked', '-')} |")
    r = reports(f"{d}-shuffled-exact-2")[0]
    t = r["distributed"]["traffic"]
    st = r["distributed"]["steps"]
    print(f"| {d} (shuffled) | exact | 2 | {r['epochs']} | "
          f"{med([e['broadcasts'] + e['all_reduces'] for e in t]):g} | "
          f"{med([e['broadcast_bytes'] + e['all_reduce_bytes'] for e in t]):g} | "
          f"{st['scans']} | {st['walks']} | {st['rows_walked']} |")

def best_per_epoch(name):
    return min(r["seconds"] / max(r["epochs"], 1) for r in reports(name))

print("\n## Mix mode: seconds per epoch, 1 and 2 ranks (median; best in brackets:")
print("## other processes on the machine only ever add time)")
print("| data | 1 rank | 2 ranks | speedup | epochs (1 / 2 ranks) | converged (1 / 2) |")
print("|---|---:|---:|---:|---:|---:|")
for d in ["sep", "noisy", "sparse", "big"]:
    a, b = per_epoch(f"{d}-mix-1"), per_epoch(f"{d}-mix-2")
    ba, bb = best_per_epoch(f"{d}-mix-1"), best_per_epoch(f"{d}-mix-2")
    ra, rb = reports(f"{d}-mix-1")[0], reports(f"{d}-mix-2")[0]
    print(f"| {d} | {1e3*a:.2f} ms ({1e3*ba:.2f}) | {1e3*b:.2f} ms ({1e3*bb:.2f}) "
          f"| {a/b:.2f}x ({ba/bb:.2f}x) | {ra['epochs']} / {rb['epochs']} "
          f"| {ra['converged']} / {rb['converged']} |")

print("\n## Per-row costs of one process (for the cost model)")
print("| data | epoch | mistakes | seconds | ns per row |")
print("|---|---:|---:|---:|---:|")
for d in ["sep", "noisy", "sparse"]:
    rs = reports(f"{d}-single")
    rows = rs[0]["rows"]
    n = len(rs[0]["epoch_seconds"])
    for e in sorted({0, n // 2, n - 1}):
        t = med([r["epoch_seconds"][e] for r in rs])
        print(f"| {d} | {e+1} | {rs[0]['mistakes_per_epoch'][e]} | {t:.4f} | {1e9*t/rows:.1f} |")
PY
