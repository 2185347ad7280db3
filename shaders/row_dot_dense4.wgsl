// The row-dot block of the dense kernels over rows read as vectors
// (x_vec4.wgsl): like row_dot_dense.wgsl, with lane `lane` of the row's
// LANES threads taking the vectors j = lane, lane + LANES, ... (terms 4j to
// 4j + 3), so a lane's load is 16 (f32) or 32 (f64) contiguous bytes and
// neighbouring lanes read neighbouring vectors. The weights are read one
// by one: a one-vs-rest head's first weight need not sit on a vector. The
// four lanes of a vector's products are added in their own sums, then
// together; any order is certified (src/engine/certify.rs), which counts the same
// m = cols + bias terms and at most 2m rounded operations.
// CPU twin: src/engine/gpu/twin/row_dot_dense4.rs.
//
// `live`: whether this thread's row exists; `wbase`: the row's head's
// first weight. Call from uniform control flow (reduce_lanes has barriers).
fn row_dot_dense(li: u32, lane: u32, live: bool, row: u32, wbase: u32) -> RowDot {
    var s4 = vec4<real>(0.0);
    var t4 = vec4<real>(0.0);
    if live {
        let vectors = params.cols / 4u;
        let xbase = row * vectors;
        for (var j = lane; j < vectors; j = j + LANES) {
            let k = wbase + 4u * j;
            let w = vec4<real>(weights[k], weights[k + 1u], weights[k + 2u], weights[k + 3u]);
            let p = w * x[xbase + j];
            s4 = s4 + p;
            t4 = t4 + abs(p);
        }
    }
    var s = (s4.x + s4.y) + (s4.z + s4.w);
    var t = (t4.x + t4.y) + (t4.z + t4.w);
    // One lane per row needs no reduction, and no barrier. LANES is a
    // pipeline constant, so this branch is uniform.
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
