// Precision prelude for f64 kernels (needs SHADER_F64; prepended by src/engine/gpu/shaders.rs).
alias real = f64;

const REAL_QUARTER_MAX: f64 = 4.49423283715579e307; // f64::MAX / 4
const F32_MAX_AS_REAL: f64 = 3.4028234663852886e38;

// naga cannot bitcast f64, so this is a comparison: NaN and +-inf both fail
// `abs(v) <= MAX` under IEEE rules. A driver may assume no NaN or infinity
// and fold it to true, so it is only a second line: the host hands a kernel
// only weights that cannot overflow (src/engine/certify.rs, "No infinities, by
// construction").
fn is_finite_real(v: real) -> bool {
    return abs(v) <= 1.7976931348623157e308;
}

// Converts to f32 without growing in magnitude (CPU twin:
// certify::to_f32_toward_zero).
fn slack_f32(v: real) -> f32 {
    let c = clamp(v, -F32_MAX_AS_REAL, F32_MAX_AS_REAL);
    let r = f32(c);
    if abs(f64(r)) > abs(c) {
        return bitcast<f32>(bitcast<u32>(r) - 1u);
    }
    return r;
}

// Subnormal test by comparison (naga cannot bitcast f64). The walk applies it
// only to finite values, for which comparisons are exact.
fn is_subnormal_real(v: real) -> bool {
    return v != 0.0 && abs(v) < 2.2250738585072014e-308;
}
