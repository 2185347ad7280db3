// Shared by the margin kernels: the pass layout and the certified slack.
// CPU twin: src/engine/gpu/twin/common.rs (same names, same order of operations).

struct Params {
    // First chunk-local row this dispatch evaluates, and how many.
    row_begin: u32,
    row_count: u32,
    // Pass-relative position of row_begin (indexes the slack output).
    pos_offset: u32,
    // Feature columns (the bias excluded) and whether the bias is on.
    cols: u32,
    bias: u32,
    // Perceptrons evaluated together (one-vs-rest classes; 1 for binary).
    // Thread groups work on virtual rows: one per (row, head) pair.
    heads: u32,
    _pad1: u32,
    _pad2: u32,
}

// Head `head`'s label of chunk-local `row`: the -1/+1 label bit with one
// head, "class id == head" with several.
fn positive_for(row: u32, head: u32) -> bool {
    if params.heads == 1u {
        return ((labels[row / 32u] >> (row % 32u)) & 1u) == 1u;
    }
    return class_ids[row] == head;
}

// The certified slack of a row for the rule y*s <= TAU (bound[3]; 0 for
// the classic rule), with E = (m*REL)*t + (m*ABS + FLUSH); see slack.wgsl.
fn write_slack(q: u32, row: u32, head: u32, s: real, t: real, m: u32) {
    let mr = real(m);
    let e = (mr * bound[0]) * t + (mr * bound[1] + bound[2]);
    let positive = positive_for(row, head);
    let ys = select(-s, s, positive) - bound[3];
    slack[q] = normalised_slack(s, t, ys, e, real(norms[row]));
}
