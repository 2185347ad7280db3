// Shared by the margin kernels: the pass layout and the certification test.
// CPU twin: src/gpu/twin.rs (same names, same order of operations).

// Rows handled by one workgroup = WG / LANES; LANES threads share a row.
const WG: u32 = 256u;
override LANES: u32 = 32u;

struct Params {
    // First chunk-local row this dispatch evaluates, and how many.
    row_begin: u32,
    row_count: u32,
    // Pass-relative position of row_begin (indexes flags and segments).
    pos_offset: u32,
    // Feature columns (the bias excluded) and whether the bias is on.
    cols: u32,
    bias: u32,
    // Segments after the base, and the stride between weight slots.
    num_segments: u32,
    w_stride: u32,
    _pad: u32,
}

// Slot of the weights in force at pass-relative position q: the number of
// segment starts <= q (slot 0 is the pass's base weights).
fn segment_of(q: u32) -> u32 {
    var lo = 0u;
    var hi = params.num_segments;
    loop {
        if lo >= hi {
            break;
        }
        let mid = (lo + hi) / 2u;
        if seg_from[mid] <= q {
            lo = mid + 1u;
        } else {
            hi = mid;
        }
    }
    return lo;
}

// The decision test of src/certify.rs: settled iff s and E are finite and
// y*s > E, with E = (m*REL)*t + (m*ABS + FLUSH). Flags every row it cannot
// settle, including certain mistakes: the host decides those.
fn flag_unless_settled(q: u32, row: u32, s: real, t: real, m: u32) {
    let mr = real(m);
    let e = (mr * bound[0]) * t + (mr * bound[1] + bound[2]);
    let positive = ((labels[row / 32u] >> (row % 32u)) & 1u) == 1u;
    let ys = select(-s, s, positive);
    let settled = is_finite_real(s) && is_finite_real(e) && ys > e;
    if !settled {
        atomicOr(&flags[q / 32u], 1u << (q % 32u));
    }
}

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
