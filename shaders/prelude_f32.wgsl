// Precision prelude for f32 kernels (prepended by src/engine/gpu/shaders.rs).
alias real = f32;

const REAL_QUARTER_MAX: f32 = 8.507059e37; // f32::MAX / 4

// Finite test on the bit pattern: integer operations, which no driver
// flushes or fast-maths away.
fn is_finite_real(v: real) -> bool {
    return (bitcast<u32>(v) & 0x7f800000u) != 0x7f800000u;
}

// Already f32: the slack's roundings are covered by DRIFT_FACTOR.
fn slack_f32(v: real) -> f32 {
    return v;
}

// Subnormal test on the bit pattern (exponent 0, mantissa not 0), which no
// flushing can disturb.
fn is_subnormal_real(v: real) -> bool {
    let b = bitcast<u32>(v);
    return (b & 0x7f800000u) == 0u && (b & 0x007fffffu) != 0u;
}
