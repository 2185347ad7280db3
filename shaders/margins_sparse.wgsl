// Certified slacks of CSR rows: like margins_dense.wgsl, over the stored
// entries of each row (row_dot_sparse.wgsl).
// CPU twin: src/engine/gpu/twin/margins_sparse.rs.

@group(0) @binding(0) var<uniform> params: Params;
@group(0) @binding(1) var<storage, read> row_ptr: array<u32>;   // chunk-local offsets
@group(0) @binding(2) var<storage, read> labels: array<u32>;
@group(0) @binding(3) var<storage, read> weights: array<real>;
@group(0) @binding(4) var<storage, read> norms: array<f32>;
@group(0) @binding(5) var<storage, read> bound: array<real>;
@group(0) @binding(6) var<storage, read_write> slack: array<f32>;
@group(0) @binding(9) var<storage, read> class_ids: array<u32>; // one-vs-rest
@group(0) @binding(7) var<storage, read> col_index: array<u32>;
@group(0) @binding(8) var<storage, read> values: array<real>;

@compute @workgroup_size(256)
fn margins_sparse(
    @builtin(local_invocation_index) li: u32,
    @builtin(workgroup_id) wg: vec3<u32>,
    @builtin(num_workgroups) nwg: vec3<u32>,
) {
    let rows_per_group = WG / LANES;
    let lane = li % LANES;
    let slot = li / LANES;
    let virtual_rows = params.row_count * params.heads;
    let groups = (virtual_rows + rows_per_group - 1u) / rows_per_group;
    for (var g = wg.x; g < groups; g = g + nwg.x) {
        let vr = g * rows_per_group + slot;
        let live = vr < virtual_rows;
        let head = vr % params.heads;
        let row = params.row_begin + vr / params.heads;
        let wbase = head * (params.cols + params.bias);
        let d = row_dot_sparse(li, lane, live, row, wbase);
        if live && lane == 0u {
            write_slack(params.pos_offset * params.heads + vr, row, head, d.s, d.t, d.terms);
        }
        if LANES > 1u {
            workgroupBarrier();
        }
    }
}
