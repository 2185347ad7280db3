// Dense rows read one value at a time: any number of columns. The other
// variant, x_vec4.wgsl, reads four at a time where the columns allow.
// CPU twin: the rows' values themselves.

@group(0) @binding(1) var<storage, read> x: array<real>;           // chunk rows, row-major

// Value `i` of the chunk's rows (row-major).
fn x_at(i: u32) -> real {
    return x[i];
}
