// The row-dot block of every CSR kernel: the margin pass
// (margins_sparse.wgsl) and the walk's scan (walk_sparse.wgsl) both call
// it. Like row_dot_dense.wgsl (see there why this shape, and why the
// certificate holds), over the row's stored entries: m = stored + bias.
// CPU twin: src/engine/gpu/twin/row_dot_sparse.rs.
//
// `live`: whether this thread's row exists; `wbase`: the row's head's
// first weight. Call from uniform control flow (reduce_lanes has barriers).
fn row_dot_sparse(li: u32, lane: u32, live: bool, row: u32, wbase: u32) -> RowDot {
    var s: real = 0.0;
    var t: real = 0.0;
    var stored = 0u;
    if live {
        let begin = row_ptr[row];
        let end = row_ptr[row + 1u];
        stored = end - begin;
        for (var e = begin + lane; e < end; e = e + LANES) {
            let p = weights[wbase + col_index[e]] * values[e];
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
    return RowDot(s, t, stored + params.bias);
}
