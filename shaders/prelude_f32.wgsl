// Precision prelude for f32 kernels (prepended by src/gpu/shaders.rs).
alias real = f32;

// Finite test on the bit pattern: integer operations, which no driver
// flushes or fast-maths away.
fn is_finite_real(v: real) -> bool {
    return (bitcast<u32>(v) & 0x7f800000u) != 0x7f800000u;
}
