// The GPU walk over CSR rows (see walk_common.wgsl); the scan sums each
// row with the margin pass's block (row_dot_sparse.wgsl).
// CPU twins: src/engine/gpu/twin/walk_sparse.rs.

@group(0) @binding(0) var<uniform> params: WalkParams;
@group(0) @binding(1) var<storage, read> row_ptr: array<u32>;     // chunk-local offsets
@group(0) @binding(2) var<storage, read> bits: array<u32>;        // labels, then host-only rows
@group(0) @binding(3) var<storage, read_write> weights: array<real>;
@group(0) @binding(4) var<storage, read_write> state: WalkState;
@group(0) @binding(5) var<storage, read_write> entry_rows: array<u32>;
@group(0) @binding(6) var<storage, read_write> entry_values: array<real>;
@group(0) @binding(7) var<storage, read> col_index: array<u32>;
@group(0) @binding(8) var<storage, read> values: array<real>;
@group(0) @binding(10) var<storage, read> norms: array<f32>;      // >= ||x~|| per row
@group(0) @binding(11) var<storage, read_write> walk_slack: array<vec2<f32>>; // slack, drift then
@group(0) @binding(12) var<uniform> batch: BatchParams;
@group(0) @binding(13) var<storage, read_write> walk_tiles: array<f32>;  // smallest slack a tile

@compute @workgroup_size(256)
fn walk_scan_sparse(
    @builtin(local_invocation_index) li: u32,
    @builtin(workgroup_id) wg: vec3<u32>,
    @builtin(num_workgroups) nwg: vec3<u32>,
) {
    let w = walk_open(li);
    if w.go == 0u {
        return;
    }
    let rows_per_group = WG / LANES;
    let lane = li % LANES;
    let slot = li / LANES;
    let groups = (w.end - w.p + rows_per_group - 1u) / rows_per_group;
    for (var g = wg.x; g < groups; g = g + nwg.x) {
        let row = w.p + g * rows_per_group + slot;
        let live = row < w.end;
        let d = row_dot_sparse(li, lane, live, row, 0u);
        var rs = vec2<f32>(0.0);
        if live && lane == 0u {
            rs = scanned(row, d.s, d.t, d.terms);
            walk_slack[row - w.p] = rs;
        }
        scan_tile(li, lane, slot, live, rs, g, min(rows_per_group, w.end - (w.p + g * rows_per_group)));
        workgroupBarrier();
    }
}

var<workgroup> wg_extent: vec2<u32>;

// Row q's entries, as values every invocation holds (the loops over them
// have barriers).
fn row_extent(li: u32, q: u32) -> vec2<u32> {
    if li == 0u {
        wg_extent = vec2<u32>(row_ptr[q], row_ptr[q + 1u]);
    }
    return workgroupUniformLoad(&wg_extent);
}

// This invocation's share of a fresh-slack pass over `row`: the entries
// lane, lane + BLOCK_LANES, ... (see walk_common.wgsl `fresh_slack`).
fn block_dot_sparse(li: u32, row: u32, live: bool) -> RowDot {
    var s: real = 0.0;
    var t: real = 0.0;
    var stored = 0u;
    if live {
        let begin = row_ptr[row];
        let end = row_ptr[row + 1u];
        stored = end - begin;
        for (var e = begin + li % BLOCK_LANES; e < end; e = e + BLOCK_LANES) {
            let p = weights[col_index[e]] * values[e];
            s = s + p;
            t = t + abs(p);
        }
    }
    return RowDot(s, t, stored);
}

// The reference dot's decision over entries `ext` of row q: each product
// rounded on its own, then added in order by one invocation, the bias last.
fn reference_sparse(li: u32, q: u32, ext: vec2<u32>) -> bool {
    var s: real = 0.0;
    for (var base = ext.x; base < ext.y; base = base + WG) {
        let e = base + li;
        if e < ext.y {
            products[li] = weights[col_index[e]] * values[e];
        }
        workgroupBarrier();
        if li == 0u {
            let n = min(WG, ext.y - base);
            for (var j = 0u; j < n; j = j + 1u) {
                s = s + products[j];
            }
        }
        workgroupBarrier();
    }
    return reference_decision(li, s, positive(q));
}

@compute @workgroup_size(256)
fn walk_step_sparse(@builtin(local_invocation_index) li: u32) {
    var s = walk_open(li);
    if s.go == 0u {
        return;
    }
    loop {
        s = step_search(li);
        if s.go == 0u {
            break;
        }
        let q = s.row;
        if s.verdict == 2u && s.fresh == 0u {
            // Fresh slacks for q and the next rows that need one; q's
            // verdict under its own.
            let b = block_row(li, q);
            let live = b.y == 1u;
            fresh_slack(li, b.x, live, block_dot_sparse(li, b.x, live));
            s = step_refreshed(li, q);
            if s.go == 0u {
                break;
            }
            if s.verdict == 0u {
                continue;
            }
        }
        var mistake = s.verdict == 1u;
        var flags = ENTRY_MISTAKE;
        if s.verdict == 2u {
            // Uncertain under the current weights: the reference dot.
            flags = ENTRY_SPECULATIVE;
            mistake = reference_sparse(li, q, row_extent(li, q));
            if mistake {
                flags = flags | ENTRY_MISTAKE;
            }
        }
        // Loaded now, for the drift after the update.
        let nq = norms[q];
        if mistake {
            let plus = positive(q);
            let begin = row_ptr[q];
            let end = row_ptr[q + 1u];
            let out = s.n * params.stride;
            for (var e = begin + li; e < end; e = e + WG) {
                update_coordinate(col_index[e], values[e], plus, out + (e - begin));
            }
            if li == 0u && params.bias != 0u {
                update_coordinate(params.cols, 1.0, plus, out + (end - begin));
            }
        }
        s = step_decided(li, q, flags, mistake, nq);
        if s.go == 0u {
            break;
        }
    }
    step_close(li);
}
