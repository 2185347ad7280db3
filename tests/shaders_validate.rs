//! Every WGSL kernel, in every precision, parses and validates with naga:
//! no adapter needed, so this runs everywhere.

use perceptron::Precision;
use perceptron::gpu::shaders::{Kernel, source};

fn validate(kernel: Kernel, precision: Precision) -> Result<(), String> {
    let src = source(kernel, precision);
    let module = naga::front::wgsl::parse_str(&src).map_err(|e| e.emit_to_string(&src))?;
    let caps = match precision {
        Precision::F32 => naga::valid::Capabilities::empty(),
        Precision::F64 => naga::valid::Capabilities::FLOAT64,
    };
    naga::valid::Validator::new(naga::valid::ValidationFlags::all(), caps)
        .validate(&module)
        .map_err(|e| e.emit_to_string(&src))?;
    let names: Vec<_> = module
        .entry_points
        .iter()
        .map(|e| e.name.as_str())
        .collect();
    if names != kernel.entry_points() {
        return Err(format!("entry points {names:?}"));
    }
    Ok(())
}

#[test]
fn all_kernels_validate_in_both_precisions() {
    for kernel in Kernel::ALL {
        for precision in [Precision::F32, Precision::F64] {
            if let Err(e) = validate(kernel, precision) {
                panic!("{kernel:?} {precision}: {e}");
            }
        }
    }
}

#[test]
fn f64_kernels_need_the_float64_capability() {
    let src = source(Kernel::Dense, Precision::F64);
    let module = naga::front::wgsl::parse_str(&src).unwrap();
    let r = naga::valid::Validator::new(
        naga::valid::ValidationFlags::all(),
        naga::valid::Capabilities::empty(),
    )
    .validate(&module);
    assert!(
        r.is_err(),
        "validation must notice f64 without the capability"
    );
}
