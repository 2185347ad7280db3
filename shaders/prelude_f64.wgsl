// Precision prelude for f64 kernels (needs SHADER_F64; prepended by src/gpu/shaders.rs).
alias real = f64;

const REAL_MAX: f64 = 1.7976931348623157e308;

// naga cannot bitcast f64, so finiteness is a comparison: NaN and +-inf both
// fail `abs(v) <= MAX`. naga emits no NotNaN/NotInf fast-math decorations,
// so drivers must evaluate it as IEEE comparisons.
fn is_finite_real(v: real) -> bool {
    return abs(v) <= REAL_MAX;
}
