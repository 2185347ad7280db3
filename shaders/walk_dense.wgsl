// The GPU walk over dense rows (see walk_common.wgsl).
// CPU twins: src/gpu/walk_twin.rs::scan_dense and ::step_dense.

@group(0) @binding(0) var<uniform> params: WalkParams;
@group(0) @binding(1) var<storage, read> x: array<real>;           // chunk rows, row-major
@group(0) @binding(2) var<storage, read> bits: array<u32>;        // labels, then host-only rows
@group(0) @binding(3) var<storage, read_write> weights: array<real>;
@group(0) @binding(4) var<storage, read_write> state: WalkState;
@group(0) @binding(5) var<storage, read_write> entry_rows: array<u32>;
@group(0) @binding(6) var<storage, read_write> entry_values: array<real>;

@compute @workgroup_size(256)
fn walk_scan_dense(
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
        // A row before this group already needs a decision: nothing here
        // can matter this iteration.
        if (uniform_found(li) >> 1u) < first {
            break;
        }
        let row = first + slot;
        let live = row < limit;
        var s: real = 0.0;
        var t: real = 0.0;
        if live {
            let xbase = row * params.cols;
            for (var k = lane; k < params.cols; k = k + LANES) {
                let prod = weights[k] * x[xbase + k];
                s = s + prod;
                t = t + abs(prod);
            }
        }
        var s_row = s;
        var t_row = t;
        if LANES > 1u {
            part_s[li] = s;
            part_t[li] = t;
            reduce_lanes(li, lane);
            s_row = part_s[li];
            t_row = part_t[li];
        }
        if live && lane == 0u {
            if params.bias != 0u {
                let b = weights[params.cols];
                s_row = s_row + b;
                t_row = t_row + abs(b);
            }
            let verdict = certify(row, s_row, t_row, params.cols + params.bias);
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
fn walk_step_dense(@builtin(local_invocation_index) li: u32) {
    let found = step_head(li);
    if found == NONE {
        return;
    }
    let q = found >> 1u;
    let plus = positive(q);
    let xbase = q * params.cols;
    var mistake = true;
    var flags = ENTRY_MISTAKE;
    if (found & 1u) == 1u {
        // The reference dot: each product rounded on its own, then added in
        // index order from 0 by one invocation, the bias last.
        flags = ENTRY_SPECULATIVE;
        var s: real = 0.0;
        for (var base = 0u; base < params.cols; base = base + WG) {
            let k = base + li;
            if k < params.cols {
                products[li] = weights[k] * x[xbase + k];
            }
            workgroupBarrier();
            if li == 0u {
                let n = min(WG, params.cols - base);
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
        let base = n * params.stride;
        for (var k = li; k < params.cols; k = k + WG) {
            update_coordinate(k, x[xbase + k], plus, base + k);
        }
        if li == 0u && params.bias != 0u {
            update_coordinate(params.cols, 1.0, plus, base + params.cols);
        }
    }
    step_tail(li, n, q, flags, mistake);
}
