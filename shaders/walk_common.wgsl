// The GPU walk: the training loop's walk over the rows, run on the device
// many decisions per iteration, so a round trip to the host is needed only
// every few hundred decisions. CPU twin: src/engine/gpu/twin/walk_common.rs.
//
// An iteration is two dispatches in one compute pass:
//   walk_scan_*: every workgroup computes the certified slack (slack.wgsl)
//     of rows state.p .. state.p + batch.window under the device's weights,
//     at memory speed, into walk_slack.
//   walk_step_*: one workgroup walks those rows in order. It keeps an upper
//     bound of how far its weights moved since the scan (the drift, a sum
//     of one bound per update), and each row's slack remembers the drift
//     at the moment it was computed. A search (256 x SEARCH_PER rows at
//     once) skips every row whose slack settles it correct under the drift
//     since (certify.rs, "Drift"). A row the slack settles a mistake is
//     updated without a dot product. Any other row gets fresh slacks under
//     the current weights, it and the next BLOCK - 1 rows that need one, in
//     one pass of the workgroup; a row still uncertain under weights that
//     have not moved since gets the reference dot (summed in order by one
//     invocation): a *speculative* decision that the host checks. The step
//     ends at the window's end, once too many fresh slacks came out correct
//     (the drift has grown: a new scan is cheaper), when the batch's
//     entries are full, or at a stop.
// Every decision that is not "certainly correct", and the new values of the
// weights each update touched, go to the batch's entries. The host replays
// them with its own arithmetic, compares the values bit for bit and
// re-decides speculative rows; on any difference it discards what the
// device did after that row.

// Set by the host for a chunk and a run (see src/engine/gpu/layout.rs: WalkParams).
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

// Set by the host for each batch (one per readback slot).
struct BatchParams {
    // Rows each iteration's scan covers from state.p.
    window: u32,
    // Entries the batch may record.
    capacity: u32,
    // Fresh dots that may come out correct in one step before it hands the
    // rest of the window back to a new scan.
    waste: u32,
    _pad: u32,
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
    // Counters for reports: steps that walked, fresh dots, searches.
    iterations: u32,
    dots: u32,
    searches: u32,
    // An upper bound of ||w~|| for the device's weights (may be +inf).
    wnorm: f32,
    _pad0: u32,
    _pad1: u32,
    _pad2: u32,
}

const NONE: u32 = 0xffffffffu;
const STOP_LIMIT: u32 = 1u;      // reached state.limit
const STOP_SUBNORMAL: u32 = 3u;  // an update met a subnormal value
const STOP_SAFETY: u32 = 4u;     // updates_left ran out

// Entry flags.
const ENTRY_MISTAKE: u32 = 1u;
const ENTRY_SPECULATIVE: u32 = 2u;
const ENTRY_SUBNORMAL: u32 = 4u;

// Slacks each invocation checks per search: WG * SEARCH_PER rows a search.
const SEARCH_PER: u32 = 16u;
// Rows of one fresh-slack pass, and the invocations that share each row.
const BLOCK: u32 = 16u;
const BLOCK_LANES: u32 = 16u;

// Label bit of chunk-local `row` (1: the +1 class).
fn positive(row: u32) -> bool {
    return ((bits[row / 32u] >> (row % 32u)) & 1u) == 1u;
}

// Rows no device may settle (certify::needs_host), after the label bits.
fn host_only(row: u32) -> bool {
    let words = (params.rows + 31u) / 32u;
    return ((bits[words + row / 32u] >> (row % 32u)) & 1u) == 1u;
}

// The slack of a row (label `plus`, norm bound `nrm`) under the current
// weights.
fn slack_of(plus: bool, nrm: f32, s: real, t: real, m: u32) -> f32 {
    let mr = real(m);
    let e = (mr * params.rel) * t + (mr * params.abs + params.flush);
    let ys = select(-s, s, plus) - params.tau;
    return normalised_slack(s, t, ys, e, real(nrm));
}

// What the scan keeps of chunk-local `row`: its slack, computed at drift 0;
// a host-only row, which no slack may settle, is marked by the drift
// HOST_ONLY instead (so the step's tests need no other load).
const HOST_ONLY: f32 = -1.0;

fn scanned(row: u32, s: real, t: real, m: u32) -> vec2<f32> {
    if host_only(row) {
        return vec2<f32>(0.0, HOST_ONLY);
    }
    return vec2<f32>(slack_of(positive(row), norms[row], s, t, m), 0.0);
}

// The scan's tile minimum: each live row's first lane leaves its slack in
// tile_part (LOWEST for a host-only row), then invocation 0 keeps the
// smallest of the group's `rows` in walk_tiles[g]. Call from uniform
// control flow.
fn scan_tile(li: u32, lane: u32, slot: u32, live: bool, rs: vec2<f32>, g: u32, rows: u32) {
    if live && lane == 0u {
        tile_part[slot] = select(rs.x, LOWEST, rs.y < 0.0);
    }
    workgroupBarrier();
    if li == 0u {
        var m = tile_part[0];
        for (var j = 1u; j < rows; j = j + 1u) {
            m = min(m, tile_part[j]);
        }
        walk_tiles[g] = m;
    }
}

// Finite test of an f32 on its bit pattern (the drift is f32 in both
// precisions).
fn is_finite_f32(v: f32) -> bool {
    return (bitcast<u32>(v) & 0x7f800000u) != 0x7f800000u;
}

// certify.rs `threshold` (DRIFT_FACTOR * delta + DRIFT_FLOOR), rounded up:
// 1.1001 and 1e-19 cover the faithful rounding of the two operations.
fn drift_threshold(delta: f32) -> f32 {
    return delta * 1.1001 + 1e-19;
}

// certify.rs `settle` of a row whose slack `rs.x` was computed when the
// drift was `rs.y`, under the drift `delta` now: 0 settled correct, 1
// settled a mistake, 2 not settled (a host-only row, or a drift too large
// to bound). The drift since is delta - rs.y (each update's bound was
// added to both, rounded up), rounded up once more.
fn settle(rs: vec2<f32>, delta: f32) -> u32 {
    if rs.y < 0.0 || !is_finite_f32(delta) {
        return 2u;
    }
    let thr = drift_threshold((delta - rs.y) * ROUND_UP);
    if rs.x > thr {
        return 0u;
    }
    if rs.x < -thr {
        return 1u;
    }
    return 2u;
}

// One plus 2^-20: rounds up a sum of non-negative f32 terms over the
// faithful rounding (at most 2^-23 relative) of up to four operations.
const ROUND_UP: f32 = 1.00000095367431640625;
// 2^-22: bounds an update's rounding, 2u * ||w~'|| at most in either
// precision (2^-23 for f32, 2^-52 for f64).
const UPDATE_ROUNDING: f32 = 2.384185791015625e-7;

// The walk step's scalars, kept by invocation 0 and read by all through
// workgroupUniformLoad.
struct Step {
    // 1 while the step walks on.
    go: u32,
    // The scan's first row, the window's end, the next row to decide.
    p: u32,
    end: u32,
    cur: u32,
    // The candidate found by the last search, its verdict, and whether its
    // slack was computed under the current weights.
    row: u32,
    verdict: u32,
    fresh: u32,
    // Fresh slacks that came out correct; entries recorded in the batch.
    wasted: u32,
    n: u32,
    // 1 after a search that found nothing: the next one skips whole tiles.
    quiet: u32,
    // The drift since the scan, and the bound of ||w~||.
    delta: f32,
    wnorm: f32,
}

var<workgroup> step: Step;
var<workgroup> wg_first: atomic<u32>;
var<workgroup> wg_waste: atomic<u32>;
var<workgroup> wg_ballot: array<atomic<u32>, 8>; // WG / 32
var<workgroup> wg_block: array<u32, BLOCK>;
var<workgroup> wg_rs: vec2<f32>;
var<workgroup> tile_part: array<f32, WG>;
var<workgroup> wg_flag: atomic<u32>;
var<workgroup> wg_u32: u32;
var<workgroup> products: array<real, WG>;

// The start of both kernels of an iteration: whether the walk goes on
// (not stopped, the batch not full), its first row and the window's end.
fn walk_open(li: u32) -> Step {
    if li == 0u {
        let n = entry_rows[0];
        step.go = select(0u, 1u, state.stop == 0u && n < batch.capacity && state.p < state.limit);
        step.p = state.p;
        step.end = min(state.p + min(batch.window, state.limit - state.p), state.limit);
        step.cur = state.p;
        step.row = NONE;
        step.verdict = 2u;
        step.fresh = 0u;
        step.wasted = 0u;
        step.n = n;
        step.quiet = 0u;
        step.delta = 0.0;
        step.wnorm = state.wnorm;
        atomicStore(&wg_flag, 0u);
    }
    return workgroupUniformLoad(&step);
}

// A tile's rows are those one scan workgroup handles at a time (WG /
// LANES); the scan keeps their smallest slack in walk_tiles (LOWEST if a
// row is host-only).
const LOWEST: f32 = -3.4028234663852886e38;

// Moves step.cur past the tiles whose every row the scan's slack settles
// correct under the drift now: WG * SEARCH_PER tiles a round, the first
// tile that is not so found by atomicMin. Rows of those tiles refreshed
// since the scan are settled too, by the scan's certificate, which still
// holds; and a search only skips tiles after one that found nothing, so
// past every refreshed row. Returns the step as it then stands.
fn skip_tiles(li: u32, s: Step) -> Step {
    let TILE = WG / LANES;
    let tiles = (s.end - s.p + TILE - 1u) / TILE;
    let first_tile = (s.cur - s.p) / TILE;
    let thr = drift_threshold(s.delta);
    let bounded = is_finite_f32(s.delta);
    var found = NONE;
    for (var i = 0u; i < SEARCH_PER; i = i + 1u) {
        let tile = first_tile + i * WG + li;
        let m = walk_tiles[min(tile, tiles - 1u)];
        if found == NONE && tile < tiles && !(bounded && m > thr) {
            found = tile;
        }
    }
    if found != NONE {
        atomicMin(&wg_first, found);
    }
    workgroupBarrier();
    if li == 0u {
        state.searches = state.searches + 1u;
        let first = atomicLoad(&wg_first);
        if first == NONE {
            step.cur = min(s.p + (first_tile + WG * SEARCH_PER) * TILE, s.end);
        } else {
            step.cur = max(s.cur, s.p + first * TILE);
        }
        atomicStore(&wg_first, NONE);
    }
    return workgroupUniformLoad(&step);
}

// Finds the first row from step.cur (before step.end) that its slack does
// not settle correct under the drift since, with its verdict (1 a settled
// mistake, 2 not settled) and whether its slack is as fresh as can be
// (computed under the current weights, or a host-only row's). go == 0 when
// there is none: the step has reached the window's end.
fn step_search(li: u32) -> Step {
    var t: Step;
    loop {
        if li == 0u {
            atomicStore(&wg_first, NONE);
        }
        var s = workgroupUniformLoad(&step);
        if s.cur >= s.end {
            t = s;
            t.go = 0u;
            break;
        }
        if s.quiet != 0u {
            s = skip_tiles(li, s);
            if s.cur >= s.end {
                t = s;
                t.go = 0u;
                break;
            }
        }
        // Interleaved, so that neighbouring invocations read neighbouring
        // slacks; all loads first (they do not wait on each other), then
        // each invocation keeps its first row that is not settled correct.
        var found = NONE;
        var found_rs = vec2<f32>(0.0);
        for (var i = 0u; i < SEARCH_PER; i = i + 1u) {
            let row = s.cur + i * WG + li;
            let rs = walk_slack[min(row, s.end - 1u) - s.p];
            if found == NONE && row < s.end && settle(rs, s.delta) != 0u {
                found = row;
                found_rs = rs;
            }
        }
        if found != NONE {
            atomicMin(&wg_first, found);
        }
        workgroupBarrier();
        // The invocation that found the first row says what it is.
        let first = atomicLoad(&wg_first);
        if found != NONE && found == first {
            step.row = found;
            step.verdict = settle(found_rs, s.delta);
            step.fresh = select(0u, 1u, found_rs.y == s.delta || found_rs.y < 0.0);
        }
        if li == 0u {
            state.searches = state.searches + 1u;
            step.quiet = select(0u, 1u, first == NONE);
            if first == NONE {
                step.row = NONE;
                step.cur = min(s.cur + WG * SEARCH_PER, s.end);
            }
        }
        t = workgroupUniformLoad(&step);
        if t.row != NONE {
            break;
        }
    }
    return t;
}

// Fresh slacks, under the current weights, of the rows from q (before the
// window's end) that the search would stop at (`block_row`): BLOCK rows,
// BLOCK_LANES invocations each, their partial sums (`d`, from the layout's
// `block_dot_*`) added in order by the row's first invocation, the bias
// last. Each refreshed row's slack remembers the drift now; a refreshed row
// that comes out settled correct counts as waste. Row q's (slot 0) is kept
// in wg_rs. Call from uniform control flow.
fn fresh_slack(li: u32, row: u32, live: bool, d: RowDot) {
    let first = live && li % BLOCK_LANES == 0u;
    // Loaded before the barrier, so that their latency overlaps the sums'.
    var plus = false;
    var nrm: f32 = 0.0;
    var b: real = 0.0;
    if first {
        plus = positive(row);
        nrm = norms[row];
        b = weights[params.cols];
    }
    part_s[li] = d.s;
    part_t[li] = d.t;
    workgroupBarrier();
    if first {
        var s: real = 0.0;
        var t: real = 0.0;
        for (var j = 0u; j < BLOCK_LANES; j = j + 1u) {
            s = s + part_s[li + j];
            t = t + part_t[li + j];
        }
        if params.bias != 0u {
            s = s + b;
            t = t + abs(b);
        }
        let delta = step.delta;
        let rs = vec2<f32>(slack_of(plus, nrm, s, t, d.terms + params.bias), delta);
        walk_slack[row - step.p] = rs;
        if li == 0u {
            wg_rs = rs;
        }
        atomicAdd(&wg_waste, select(0u, 1u, settle(rs, delta) == 0u));
    }
}

// The row of a fresh-slack pass from q this invocation helps with, and
// whether there is one: the first BLOCK rows of q .. q + WG (before the
// window's end) that are not settled correct now and not host-only, in
// order, found by a ballot of one row an invocation and the ranks it
// gives. Starts the pass's count of waste. Call from uniform control flow.
fn block_row(li: u32, q: u32) -> vec2<u32> {
    if li < WG / 32u {
        atomicStore(&wg_ballot[li], 0u);
    }
    if li < BLOCK {
        wg_block[li] = NONE;
    }
    if li == 0u {
        atomicStore(&wg_waste, 0u);
    }
    let end = step.end;
    let row = q + li;
    let rs = walk_slack[min(row, end - 1u) - step.p];
    workgroupBarrier();
    let needs = row < end && rs.y >= 0.0 && settle(rs, step.delta) != 0u;
    if needs {
        atomicOr(&wg_ballot[li / 32u], 1u << (li % 32u));
    }
    workgroupBarrier();
    var rank = countOneBits(atomicLoad(&wg_ballot[li / 32u]) & ((1u << (li % 32u)) - 1u));
    for (var w = 0u; w < li / 32u; w = w + 1u) {
        rank = rank + countOneBits(atomicLoad(&wg_ballot[w]));
    }
    if needs && rank < BLOCK {
        wg_block[rank] = row;
    }
    workgroupBarrier();
    let mine = wg_block[li / BLOCK_LANES];
    return vec2<u32>(mine, select(0u, 1u, mine != NONE));
}

// Counts a fresh-slack pass, which `wg_waste` counted the waste of, and
// ends the step once the waste is over its budget; else row q's verdict
// under its fresh slack (wg_rs), and past q if that settles it correct
// (invocation 0). The storage barrier makes the new slacks visible.
fn step_refreshed(li: u32, q: u32) -> Step {
    storageBarrier();
    workgroupBarrier();
    if li == 0u {
        state.dots = state.dots + 1u;
        step.wasted = step.wasted + atomicLoad(&wg_waste);
        let verdict = settle(wg_rs, step.delta);
        step.verdict = verdict;
        if step.wasted > batch.waste {
            step.go = 0u;
        } else if verdict == 0u {
            step.cur = q + 1u;
            if step.cur >= step.end {
                step.go = 0u;
            }
        }
    }
    return workgroupUniformLoad(&step);
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

// Records row `q` with `flags` as entry `n` (invocation 0 only).
fn record(n: u32, q: u32, flags: u32) {
    entry_rows[1u + 2u * n] = q;
    entry_rows[2u + 2u * n] = flags;
    entry_rows[0] = n + 1u;
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

// After row q (norm bound nq) is decided: records its entry, counts the
// update and grows the drift; ends the step where it must (invocation 0). Call once the
// update's invocations are done: the storage barrier makes the new weights
// visible to the whole workgroup.
fn step_decided(li: u32, q: u32, flags: u32, mistake: bool, nq: f32) -> Step {
    storageBarrier();
    workgroupBarrier();
    if li == 0u {
        step.cur = q + 1u;
        let subnormal = atomicLoad(&wg_flag) != 0u;
        record(step.n, q, select(flags, flags | ENTRY_SUBNORMAL, subnormal));
        step.n = step.n + 1u;
        if mistake {
            state.updates_left = state.updates_left - 1u;
            // ||w~|| grows by at most N_q; the weights move by at most N_q
            // plus the update's rounding.
            step.wnorm = (step.wnorm + nq) * ROUND_UP;
            step.delta = (step.delta + nq + step.wnorm * UPDATE_ROUNDING) * ROUND_UP;
        }
        if subnormal {
            state.stop = STOP_SUBNORMAL;
            state.stop_row = q + 1u;
            step.go = 0u;
        } else if state.updates_left == 0u {
            state.stop = STOP_SAFETY;
            state.stop_row = q + 1u;
            step.go = 0u;
        } else if step.n >= batch.capacity || step.cur >= step.end {
            step.go = 0u;
        }
    }
    return workgroupUniformLoad(&step);
}

// The end of a step that walked: the walk moves to the step's row, and
// ends at the chunk's limit (invocation 0).
fn step_close(li: u32) {
    if li == 0u {
        state.p = step.cur;
        state.iterations = state.iterations + 1u;
        state.wnorm = step.wnorm;
        if state.stop == 0u && step.cur >= state.limit {
            state.stop = STOP_LIMIT;
            state.stop_row = state.limit;
        }
    }
}
