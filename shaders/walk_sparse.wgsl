// The GPU walk over CSR rows (see walk_common.wgsl); the scan sums each
// row with the margin pass's block (row_dot_sparse.wgsl).
// CPU twins: src/gpu/walk_twin.rs::scan_sparse and ::step_sparse.

@group(0) @binding(0) var<uniform> params: WalkParams;
@group(0) @binding(1) var<storage, read> row_ptr: array<u32>;     // chunk-local offsets
@group(0) @binding(2) var<storage, read> bits: array<u32>;        // labels, then host-only rows
@group(0) @binding(3) var<storage, read_write> weights: array<real>;
@group(0) @binding(4) var<storage, read_write> state: WalkState;
@group(0) @binding(5) var<storage, read_write> entry_rows: array<u32>;
@group(0) @binding(6) var<storage, read_write> entry_values: array<real>;
@group(0) @binding(7) var<storage, read> col_index: array<u32>;
@group(0) @binding(8) var<storage, read> values: array<real>;

@compute @workgroup_size(256)
fn walk_scan_sparse(
    @builtin(local_invocation_index) li: u32,
    @builtin(workgroup_id) wg: vec3<u32>,
    @builtin(num_workgroups) nwg: vec3<u32>,
) {
    if uniform_stop(li) != 0u {
        return;
    }
    let p = uniform_p(li);
    let limit = uniform_limit(li);
    let rows_per_group = WG / LANES;
    let lane = li % LANES;
    let slot = li / LANES;
    let groups = (limit - p + rows_per_group - 1u) / rows_per_group;
    for (var g = wg.x; g < groups; g = g + nwg.x) {
        let first = p + g * rows_per_group;
        if (uniform_found(li) >> 1u) < first {
            break;
        }
        let row = first + slot;
        let live = row < limit;
        let d = row_dot_sparse(li, lane, live, row, 0u);
        if live && lane == 0u {
            let verdict = certify(row, d.s, d.t, d.terms);
            if verdict != 0u {
                atomicMin(&state.found, 2u * row + select(0u, 1u, verdict == 2u));
            }
        }
        if LANES > 1u {
            workgroupBarrier();
        }
    }
}

@compute @workgroup_size(256)
fn walk_step_sparse(@builtin(local_invocation_index) li: u32) {
    let found = step_head(li);
    if found == NONE {
        return;
    }
    let q = found >> 1u;
    let plus = positive(q);
    // Uniform values of the row's extent, for the loops with barriers.
    if li == 0u {
        wg_u32 = row_ptr[q];
    }
    let begin = workgroupUniformLoad(&wg_u32);
    if li == 0u {
        wg_u32 = row_ptr[q + 1u];
    }
    let end = workgroupUniformLoad(&wg_u32);
    var mistake = true;
    var flags = ENTRY_MISTAKE;
    if (found & 1u) == 1u {
        flags = ENTRY_SPECULATIVE;
        var s: real = 0.0;
        for (var base = begin; base < end; base = base + WG) {
            let e = base + li;
            if e < end {
                products[li] = weights[col_index[e]] * values[e];
            }
            workgroupBarrier();
            if li == 0u {
                let n = min(WG, end - base);
                for (var j = 0u; j < n; j = j + 1u) {
                    s = s + products[j];
                }
            }
            workgroupBarrier();
        }
        mistake = reference_decision(li, s, plus);
        if mistake {
            flags = flags | ENTRY_MISTAKE;
        }
    }
    let n = entry_rows[0];
    if mistake {
        let out = n * params.stride;
        for (var e = begin + li; e < end; e = e + WG) {
            update_coordinate(col_index[e], values[e], plus, out + (e - begin));
        }
        if li == 0u && params.bias != 0u {
            update_coordinate(params.cols, 1.0, plus, out + (end - begin));
        }
    }
    step_tail(li, n, q, flags, mistake);
}
