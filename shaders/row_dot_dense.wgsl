// The row-dot block of every dense kernel: the margin pass
// (margins_dense.wgsl) and the walk's scan (walk_dense.wgsl) both call it,
// so they sum a row in the same order. CPU twin:
// src/engine/gpu/twin/row_dot_dense.rs.
//
// Why this shape: lane `lane` of the row's LANES threads sums the products
// k = lane, lane + LANES, ..., so neighbouring threads read neighbouring
// addresses (coalesced loads) and every value is read once from global
// memory; the partial sums then meet in the tree of reduce_lanes, and lane
// 0 adds the bias last. A function rather than a copy in each kernel: the
// drivers inline it, so the loop and the memory traffic are the kernels'
// own. The certificate (src/engine/certify.rs) holds for any summation order; it
// counts m = cols + bias terms and charges one rounding or flush to each
// operation that makes a new value: the cols products and the additions
// of two partial sums, at most 2m. Adding an exact zero (a lane's first
// product to its empty sum, an empty lane in the tree) makes no new value,
// and flushing a subnormal operand there is the same as its producer
// flushing it, which is already charged.
//
// `live`: whether this thread's row exists; `wbase`: the row's head's
// first weight. Call from uniform control flow (reduce_lanes has barriers).
fn row_dot_dense(li: u32, lane: u32, live: bool, row: u32, wbase: u32) -> RowDot {
    var s: real = 0.0;
    var t: real = 0.0;
    if live {
        let xbase = row * params.cols;
        for (var k = lane; k < params.cols; k = k + LANES) {
            let p = weights[wbase + k] * x_at(xbase + k);
            s = s + p;
            t = t + abs(p);
        }
    }
    // One lane per row needs no reduction, and no barrier (which some
    // adapters, such as lavapipe, make very slow). LANES is a pipeline
    // constant, so this branch is uniform.
    if LANES > 1u {
        part_s[li] = s;
        part_t[li] = t;
        reduce_lanes(li, lane);
        s = part_s[li];
        t = part_t[li];
    }
    if live && lane == 0u && params.bias != 0u {
        let b = weights[wbase + params.cols];
        s = s + b;
        t = t + abs(b);
    }
    return RowDot(s, t, params.cols + params.bias);
}
