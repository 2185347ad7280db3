// The normalised slack of src/engine/certify.rs (Bound::slack), shared by the
// margin pass (common.wgsl) and the walk's scan (walk_common.wgsl).
// CPU twin: Bound::slack.
//
// With ys = y*s - TAU and E the row's bound: (ys - E)/N if ys > E,
// (ys + E)/N if ys < -E, else 0 (also when anything is non-finite, t is
// huge, or N is tiny).
fn normalised_slack(s: real, t: real, ys: real, e: real, nrm: real) -> f32 {
    var r: f32 = 0.0;
    if is_finite_real(s) && is_finite_real(e) && t <= REAL_QUARTER_MAX && nrm >= 1e-10 {
        if ys > e {
            r = slack_f32((ys - e) / nrm);
        } else if ys < -e {
            r = slack_f32((ys + e) / nrm);
        }
    }
    return r;
}
