// The GPU walk: the training loop's walk over the rows, run on the device
// one decision per iteration, so a round trip to the host is needed only
// every few hundred decisions. CPU twin: src/gpu/walk_twin.rs.
//
// An iteration is two dispatches:
//   walk_scan_*: every workgroup scans rows from state.p on (grid-stride, in
//     row order, stopping early once an earlier row has been found) and
//     records with atomicMin the first row that is not certainly correct
//     under the device's weights: 2*row if certainly a mistake, 2*row + 1 if
//     uncertain or a row no device may settle.
//   walk_step_*: one workgroup decides that row. A certain mistake is
//     applied to the device's weights; an uncertain row, or a row no device
//     may settle, gets the reference dot (products in parallel, summed in
//     order by one thread through workgroup memory, so no driver can fuse
//     them): a *speculative* decision that the host checks. state.p moves
//     past the row.
// Every decision, and the new values of the weights each update touched, go
// to the batch's entries. The host replays them with its own arithmetic,
// compares the values bit for bit and re-decides speculative rows; on any
// difference it discards what the device did after that row.

// Set by the host for a chunk and a run (see src/gpu/walk.rs: WalkParams).
struct WalkParams {
    rel: real,
    abs: real,
    flush: real,
    tau: real,
    cols: u32,
    bias: u32,
    // Rows of this chunk.
    rows: u32,
    // Values per entry: the longest row's stored terms plus the bias.
    stride: u32,
}

// Shared by every batch of a run; the host resets it between runs.
struct WalkState {
    // Next chunk-local row to decide, and where this run ends.
    p: u32,
    limit: u32,
    // 0 while running; else why the walk stopped (STOP_*), at stop_row.
    stop: u32,
    stop_row: u32,
    // Updates the device may still make before its weights could overflow.
    updates_left: u32,
    iterations: u32,
    // 2*row (+1 if uncertain) of the first row found by walk_scan; NONE if none.
    found: atomic<u32>,
    _pad: u32,
}

const NONE: u32 = 0xffffffffu;
const STOP_LIMIT: u32 = 1u;      // reached state.limit
const STOP_SUBNORMAL: u32 = 3u;  // an update met a subnormal value
const STOP_SAFETY: u32 = 4u;     // updates_left ran out

// Entry flags.
const ENTRY_MISTAKE: u32 = 1u;
const ENTRY_SPECULATIVE: u32 = 2u;
const ENTRY_SUBNORMAL: u32 = 4u;

// Label bit of chunk-local `row` (1: the +1 class).
fn positive(row: u32) -> bool {
    return ((bits[row / 32u] >> (row % 32u)) & 1u) == 1u;
}

// Rows no device may settle (certify::needs_host), after the label bits.
fn host_only(row: u32) -> bool {
    let words = (params.rows + 31u) / 32u;
    return ((bits[words + row / 32u] >> (row % 32u)) & 1u) == 1u;
}

// The certified decision of src/certify.rs under the device's weights:
// 0 certainly correct, 1 certainly a mistake, 2 uncertain.
fn certify(row: u32, s: real, t: real, m: u32) -> u32 {
    if host_only(row) {
        return 2u;
    }
    let mr = real(m);
    let e = (mr * params.rel) * t + (mr * params.abs + params.flush);
    let ys = select(-s, s, positive(row)) - params.tau;
    if !(is_finite_real(s) && is_finite_real(e) && t <= REAL_QUARTER_MAX) {
        return 2u;
    }
    if ys > e {
        return 0u;
    }
    if ys < -e {
        return 1u;
    }
    return 2u;
}

var<workgroup> wg_u32: u32;
var<workgroup> wg_flag: atomic<u32>;
var<workgroup> products: array<real, WG>;

// state.found read by invocation 0, shared as a workgroup-uniform value.
fn uniform_found(li: u32) -> u32 {
    if li == 0u {
        wg_u32 = atomicLoad(&state.found);
    }
    return workgroupUniformLoad(&wg_u32);
}

// state.stop, likewise.
fn uniform_stop(li: u32) -> u32 {
    if li == 0u {
        wg_u32 = state.stop;
    }
    return workgroupUniformLoad(&wg_u32);
}

fn uniform_p(li: u32) -> u32 {
    if li == 0u {
        wg_u32 = state.p;
    }
    return workgroupUniformLoad(&wg_u32);
}
fn uniform_limit(li: u32) -> u32 {
    if li == 0u {
        wg_u32 = state.limit;
    }
    return workgroupUniformLoad(&wg_u32);
}

// Records row `q` with `flags` as entry `n` (invocation 0 only).
fn record(n: u32, q: u32, flags: u32) {
    entry_rows[1u + 2u * n] = q;
    entry_rows[2u + 2u * n] = flags;
    entry_rows[0] = n + 1u;
}

// Moves the walk past row `q` and ends the run where it must (invocation 0).
fn advance(q: u32, subnormal: bool) {
    state.p = q + 1u;
    state.iterations = state.iterations + 1u;
    atomicStore(&state.found, NONE);
    if subnormal {
        state.stop = STOP_SUBNORMAL;
        state.stop_row = q + 1u;
    } else if state.updates_left == 0u {
        state.stop = STOP_SAFETY;
        state.stop_row = q + 1u;
    } else if q + 1u >= state.limit {
        state.stop = STOP_LIMIT;
        state.stop_row = state.limit;
    }
}

// One coordinate's update w_k <- w_k ± v, flagging values a device may
// flush (a subnormal operand or result, or a result flushed to 0).
fn update_coordinate(k: u32, v: real, plus: bool, entry: u32) {
    let old = weights[k];
    let updated = select(old - v, old + v, plus);
    let signed_v = select(-v, v, plus);
    if is_subnormal_real(old) || is_subnormal_real(v) || is_subnormal_real(updated)
        || (updated == 0.0 && old != -signed_v) {
        atomicOr(&wg_flag, 1u);
    }
    weights[k] = updated;
    entry_values[entry] = updated;
}

// The start of walk_step_*, shared by both layouts: the found word, or NONE
// when the step has nothing to decide (the walk stopped, or every row up
// to the limit is certainly correct, which invocation 0 records).
fn step_head(li: u32) -> u32 {
    if li == 0u {
        atomicStore(&wg_flag, 0u);
    }
    if uniform_stop(li) != 0u {
        return NONE;
    }
    let found = uniform_found(li);
    if found == NONE && li == 0u {
        state.iterations = state.iterations + 1u;
        state.p = state.limit;
        state.stop = STOP_LIMIT;
        state.stop_row = state.limit;
    }
    return found;
}

// The end of a speculative decision: invocation 0's in-order sum `s` of
// the row's products, the bias last, against tau; the same for every
// invocation.
fn reference_decision(li: u32, s: real, plus: bool) -> bool {
    if li == 0u {
        var total = s;
        if params.bias != 0u {
            total = total + weights[params.cols];
        }
        let ys = select(-total, total, plus);
        wg_u32 = select(0u, 1u, ys <= params.tau);
    }
    return workgroupUniformLoad(&wg_u32) == 1u;
}

// The end of walk_step_*, once the update's invocations are done: count the
// update, record the entry, advance (invocation 0).
fn step_tail(li: u32, n: u32, q: u32, flags: u32, mistake: bool) {
    workgroupBarrier();
    if li == 0u {
        var entry_flags = flags;
        let subnormal = atomicLoad(&wg_flag) != 0u;
        if subnormal {
            entry_flags = entry_flags | ENTRY_SUBNORMAL;
        }
        if mistake {
            state.updates_left = state.updates_left - 1u;
        }
        record(n, q, entry_flags);
        advance(q, subnormal);
    }
}
