// Shared by every kernel: LANES threads share a row, and their partial
// sums meet in a tree. CPU twin: src/engine/gpu/twin/lanes.rs::reduce_lanes.

// Rows handled by one workgroup = WG / LANES.
const WG: u32 = 256u;
override LANES: u32 = 32u;

var<workgroup> part_s: array<real, WG>;
var<workgroup> part_t: array<real, WG>;

// Tree reduction of part_s/part_t within each group of LANES threads; the
// group's lane 0 ends with the sums. Call from uniform control flow.
fn reduce_lanes(li: u32, lane: u32) {
    workgroupBarrier();
    var off = LANES / 2u;
    loop {
        if off == 0u {
            break;
        }
        if lane < off {
            part_s[li] = part_s[li] + part_s[li + off];
            part_t[li] = part_t[li] + part_t[li + off];
        }
        workgroupBarrier();
        off = off / 2u;
    }
}

// One row's dot product as the row-dot blocks (row_dot_dense.wgsl,
// row_dot_sparse.wgsl) leave it in lane 0 of a live row: s^ = sum w_k x_k
// and t^ = sum |w_k x_k|, the bias added last, and the row's terms m
// (stored entries plus the bias), which the certificate's bound counts.
// CPU twin: src/engine/gpu/twin/lanes.rs::RowDot.
struct RowDot {
    s: real,
    t: real,
    terms: u32,
}
