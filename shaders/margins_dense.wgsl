// Certified slacks of dense rows: s^ = w·x and t^ = sum |w_k x_k| per row,
// in any summation order, turned into the normalised slack.
// CPU twin: src/gpu/twin.rs::dense_row.

@group(0) @binding(0) var<uniform> params: Params;
@group(0) @binding(1) var<storage, read> x: array<real>;        // chunk rows, row-major
@group(0) @binding(2) var<storage, read> labels: array<u32>;    // bit set = label +1
@group(0) @binding(3) var<storage, read> weights: array<real>;  // w~, bias last
@group(0) @binding(4) var<storage, read> norms: array<f32>;     // >= ||x~|| per row
@group(0) @binding(5) var<storage, read> bound: array<real>;    // REL, ABS, FLUSH
@group(0) @binding(6) var<storage, read_write> slack: array<f32>;
@group(0) @binding(9) var<storage, read> class_ids: array<u32>; // one-vs-rest

@compute @workgroup_size(256)
fn margins_dense(
    @builtin(local_invocation_index) li: u32,
    @builtin(workgroup_id) wg: vec3<u32>,
    @builtin(num_workgroups) nwg: vec3<u32>,
) {
    let rows_per_group = WG / LANES;
    let lane = li % LANES;
    let slot = li / LANES;
    let virtual_rows = params.row_count * params.heads;
    let groups = (virtual_rows + rows_per_group - 1u) / rows_per_group;
    // Grid-stride over groups of rows; the bound is uniform per workgroup.
    for (var g = wg.x; g < groups; g = g + nwg.x) {
        let vr = g * rows_per_group + slot;
        let live = vr < virtual_rows;
        let head = vr % params.heads;
        let row = params.row_begin + vr / params.heads;
        let wbase = head * (params.cols + params.bias);
        var s: real = 0.0;
        var t: real = 0.0;
        if live {
            let xbase = row * params.cols;
            for (var k = lane; k < params.cols; k = k + LANES) {
                let p = weights[wbase + k] * x[xbase + k];
                s = s + p;
                t = t + abs(p);
            }
        }
        var s_row = s;
        var t_row = t;
        // One lane per row needs no reduction, and no barrier (which some
        // adapters, such as lavapipe, make very slow). LANES is a pipeline
        // constant, so this branch is uniform.
        if LANES > 1u {
            part_s[li] = s;
            part_t[li] = t;
            reduce_lanes(li, lane);
            s_row = part_s[li];
            t_row = part_t[li];
        }
        if live && lane == 0u {
            if params.bias != 0u {
                let b = weights[wbase + params.cols];
                s_row = s_row + b;
                t_row = t_row + abs(b);
            }
            write_slack(params.pos_offset * params.heads + vr, row, head, s_row, t_row, params.cols + params.bias);
        }
        if LANES > 1u {
            workgroupBarrier();
        }
    }
}
