// Dense rows read four values at a time (16 or 32 bytes a load, so a pass
// runs nearer the memory's speed): for rows whose column count is a
// multiple of 4, so every row starts on a vector. The other variant,
// x_scalar.wgsl, serves any column count. CPU twin: the rows' values.

@group(0) @binding(1) var<storage, read> x: array<vec4<real>>;     // chunk rows, row-major

// Value `i` of the chunk's rows (row-major).
fn x_at(i: u32) -> real {
    return x[i / 4u][i % 4u];
}
