//! Build script: assembles the WGSL modules the GPU backend runs from the
//! files of `shaders/`, and with the `gpu` feature checks them with naga
//! before the crate compiles: every module parses and validates in both
//! precisions (f64 with the FLOAT64 capability), declares exactly the entry
//! points the host calls, and every struct the host shares with a kernel has
//! the byte layout of its Rust type in `src/engine/gpu/layout.rs`.
//!
//! Written to `OUT_DIR`:
//! - `<module>.<precision>.wgsl`: each assembled module, which
//!   `src/engine/gpu/shaders.rs` embeds (so the crate runs what was checked);
//! - `wgsl_modules.rs`: their table, included by `src/engine/gpu/shaders.rs`;
//! - `wgsl_layout.rs`: compile-time assertions on the Rust types' field
//!   offsets, field types and sizes, included by `src/engine/gpu/layout.rs`; a
//!   mismatch fails the build there, naming the struct and the field.

use std::fmt::Write as _;
use std::path::{Path, PathBuf};

/// A WGSL module: the files after the precision's prelude, in order, and
/// its entry points.
struct Module {
    name: &'static str,
    parts: &'static [&'static str],
    entry_points: &'static [&'static str],
}

/// WGSL has no generics: each module is written once against the alias
/// `real`, which the precision's prelude defines.
const PRECISIONS: [(&str, &str); 2] = [("f32", "prelude_f32.wgsl"), ("f64", "prelude_f64.wgsl")];

const MODULES: &[Module] = &[
    Module {
        name: "margins_dense",
        parts: &[
            "lanes.wgsl",
            "slack.wgsl",
            "common.wgsl",
            "x_scalar.wgsl",
            "row_dot_dense.wgsl",
            "margins_dense.wgsl",
        ],
        entry_points: &["margins_dense"],
    },
    Module {
        name: "margins_dense4",
        parts: &[
            "lanes.wgsl",
            "slack.wgsl",
            "common.wgsl",
            "x_vec4.wgsl",
            "row_dot_dense4.wgsl",
            "margins_dense.wgsl",
        ],
        entry_points: &["margins_dense"],
    },
    Module {
        name: "margins_sparse",
        parts: &[
            "lanes.wgsl",
            "slack.wgsl",
            "common.wgsl",
            "row_dot_sparse.wgsl",
            "margins_sparse.wgsl",
        ],
        entry_points: &["margins_sparse"],
    },
    Module {
        name: "walk_dense",
        parts: &[
            "lanes.wgsl",
            "slack.wgsl",
            "walk_common.wgsl",
            "x_scalar.wgsl",
            "row_dot_dense.wgsl",
            "walk_dense.wgsl",
        ],
        entry_points: &["walk_scan_dense", "walk_step_dense"],
    },
    Module {
        name: "walk_dense4",
        parts: &[
            "lanes.wgsl",
            "slack.wgsl",
            "walk_common.wgsl",
            "x_vec4.wgsl",
            "row_dot_dense4.wgsl",
            "walk_dense.wgsl",
        ],
        entry_points: &["walk_scan_dense", "walk_step_dense"],
    },
    Module {
        name: "walk_sparse",
        parts: &[
            "lanes.wgsl",
            "slack.wgsl",
            "walk_common.wgsl",
            "row_dot_sparse.wgsl",
            "walk_sparse.wgsl",
        ],
        entry_points: &["walk_scan_sparse", "walk_step_sparse"],
    },
];

/// The structs the host writes into or reads from a kernel's buffers, and
/// their Rust types in src/engine/gpu/layout.rs (`{real}`: the precision's float).
/// A uniform or storage buffer of a struct type not listed fails the build.
#[cfg_attr(not(feature = "gpu"), allow(dead_code))]
const HOST_STRUCTS: &[(&str, &str)] = &[
    ("Params", "Params"),
    ("WalkParams", "WalkParams<{real}>"),
    ("WalkState", "WalkState"),
    ("BatchParams", "BatchParams"),
];

/// An assembled module and where each of its parts starts.
struct Assembled {
    text: String,
    /// (byte offset in `text`, file name, the file's text), in order.
    parts: Vec<(usize, &'static str, String)>,
}

impl Assembled {
    /// `shaders/FILE:LINE:COLUMN` of a byte offset of the assembled text.
    #[cfg_attr(not(feature = "gpu"), allow(dead_code))]
    fn locate(&self, offset: usize) -> String {
        let Some((start, file, text)) = self.parts.iter().rev().find(|p| p.0 <= offset) else {
            return "(assembled module)".into();
        };
        // Past the part's end is the newline before the next part.
        let before = text.get(..offset - start).unwrap_or(text);
        let line = before.matches('\n').count() + 1;
        let column = before.len() - before.rfind('\n').map_or(0, |i| i + 1) + 1;
        format!("shaders/{file}:{line}:{column}")
    }
}

fn read_part(dir: &Path, file: &'static str) -> Result<String, String> {
    std::fs::read_to_string(dir.join(file)).map_err(|e| format!("shaders/{file}: {e}"))
}

/// The module's text in a precision: the prelude, then each part, one
/// newline between them.
fn assemble(dir: &Path, prelude: &'static str, module: &Module) -> Result<Assembled, String> {
    let mut text = String::new();
    let mut parts = Vec::new();
    for (i, &file) in std::iter::once(&prelude).chain(module.parts).enumerate() {
        if i > 0 {
            text.push('\n');
        }
        let part = read_part(dir, file)?;
        parts.push((text.len(), file, part.clone()));
        text.push_str(&part);
    }
    Ok(Assembled { text, parts })
}

fn constant_name(module: &Module) -> String {
    module.name.to_uppercase()
}

fn main() {
    if let Err(e) = run() {
        eprintln!("error: {e}");
        std::process::exit(1);
    }
}

fn run() -> Result<(), String> {
    let manifest = std::env::var_os("CARGO_MANIFEST_DIR").ok_or("CARGO_MANIFEST_DIR is not set")?;
    let out = PathBuf::from(std::env::var_os("OUT_DIR").ok_or("OUT_DIR is not set")?);
    let dir = Path::new(&manifest).join("shaders");
    println!("cargo::rerun-if-changed=shaders");

    let mut table =
        String::from("// Generated by build.rs from shaders/: the assembled WGSL modules.\n");
    let mut checks = check::Checks::default();
    for module in MODULES {
        let mut sources = Vec::new();
        for (precision, prelude) in PRECISIONS {
            let assembled = assemble(&dir, prelude, module)?;
            let file = out.join(format!("{}.{precision}.wgsl", module.name));
            std::fs::write(&file, &assembled.text)
                .map_err(|e| format!("{}: {e}", file.display()))?;
            checks.module(module, precision, &assembled, &file)?;
            sources.push(format!(
                "include_str!(concat!(env!(\"OUT_DIR\"), \"/{}.{precision}.wgsl\"))",
                module.name
            ));
        }
        let _ = writeln!(
            table,
            "/// `{}`: {} after the precision's prelude.\npub const {}: WgslModule = WgslModule {{\n    f32: {},\n    f64: {},\n    entry_points: &{:?},\n}};",
            module.name,
            module.parts.join(" + "),
            constant_name(module),
            sources[0],
            sources[1],
            module.entry_points,
        );
    }
    let write = |name: &str, text: &str| {
        let file = out.join(name);
        std::fs::write(&file, text).map_err(|e| format!("{}: {e}", file.display()))
    };
    write("wgsl_modules.rs", &table)?;
    write("wgsl_layout.rs", &checks.finish())
}

#[cfg(feature = "gpu")]
mod check {
    use super::*;
    use naga::valid::{Capabilities, ValidationFlags, Validator};
    use naga::{AddressSpace, ArraySize, Handle, ScalarKind, Type, TypeInner};

    /// The assertions of `wgsl_layout.rs`, each line once.
    #[derive(Default)]
    pub struct Checks {
        lines: Vec<String>,
    }

    impl Checks {
        /// Validates one assembled module and adds the layout checks of
        /// the structs it shares with the host.
        pub fn module(
            &mut self,
            module: &Module,
            precision: &str,
            assembled: &Assembled,
            file: &Path,
        ) -> Result<(), String> {
            let what = format!("the {precision} `{}` module", module.name);
            let ir = parse_and_validate(&what, precision, assembled, file)?;
            let entry_points: Vec<&str> = ir.entry_points.iter().map(|e| e.name.as_str()).collect();
            if entry_points != module.entry_points {
                return Err(format!(
                    "{what} has the entry points {entry_points:?}; the host calls {:?} (build.rs: MODULES)",
                    module.entry_points
                ));
            }
            let real = precision;
            for (_, var) in ir.global_variables.iter() {
                if !matches!(
                    var.space,
                    AddressSpace::Uniform | AddressSpace::Storage { .. }
                ) {
                    continue;
                }
                self.host_struct(&ir, var.ty, &what, real, assembled)?;
            }
            Ok(())
        }

        /// The layout checks of one struct bound as a buffer: its size, and
        /// each named field's offset and type, against its Rust type.
        fn host_struct(
            &mut self,
            ir: &naga::Module,
            handle: Handle<Type>,
            what: &str,
            real: &str,
            assembled: &Assembled,
        ) -> Result<(), String> {
            let ty = &ir.types[handle];
            let TypeInner::Struct { members, span } = &ty.inner else {
                return Ok(());
            };
            let name = ty.name.as_deref().unwrap_or("?");
            let at = ir
                .types
                .get_span(handle)
                .to_range()
                .map_or_else(|| "shaders".into(), |r| assembled.locate(r.start));
            let Some((_, rust)) = HOST_STRUCTS.iter().find(|(w, _)| *w == name) else {
                return Err(format!(
                    "{at}: struct {name} is bound as a buffer in {what} but has no Rust type to check its layout against (build.rs: HOST_STRUCTS)"
                ));
            };
            let rust = rust.replace("{real}", real);
            self.push(format!(
                "const _: () = assert!(::core::mem::size_of::<{rust}>() == {span}, \"{rust}: not the {span} bytes of WGSL struct {name} ({at})\");"
            ));
            for m in members {
                let Some(field) = m.name.as_deref() else {
                    continue;
                };
                // Padding members need no Rust field of their name: the
                // size check covers them.
                if field.starts_with('_') {
                    continue;
                }
                let offset = m.offset;
                let field_ty = rust_type(ir, m.ty).map_err(|t| {
                    format!("{at}: {name}.{field} has the type {t}, which the layout check does not know")
                })?;
                self.push(format!(
                    "const _: () = assert!(::core::mem::offset_of!({rust}, {field}) == {offset}, \"{rust}.{field}: not at byte {offset} as in WGSL struct {name} ({at})\");"
                ));
                self.push(format!(
                    "const _: fn(&{rust}) -> &{field_ty} = |s| &s.{field}; // WGSL {name}.{field} ({at})"
                ));
            }
            Ok(())
        }

        fn push(&mut self, line: String) {
            if !self.lines.contains(&line) {
                self.lines.push(line);
            }
        }

        pub fn finish(self) -> String {
            let mut text = String::from(
                "// Generated by build.rs: the Rust types of the structs the kernels share with\n// the host have the WGSL structs' byte layout, field by field.\n",
            );
            for line in self.lines {
                text.push_str(&line);
                text.push('\n');
            }
            text
        }
    }

    /// The module's IR, once it parses and validates (f64 only with the
    /// FLOAT64 capability, and only then: it must compute in f64).
    fn parse_and_validate(
        what: &str,
        precision: &str,
        assembled: &Assembled,
        file: &Path,
    ) -> Result<naga::Module, String> {
        let src = &assembled.text;
        let path = file.display().to_string();
        let ir = naga::front::wgsl::parse_str(src).map_err(|e| {
            diagnostic(
                assembled,
                format!("{what} does not parse: {}", e.message()),
                e.labels().map(|(span, label)| (span, label.to_string())),
                e.emit_to_string_with_path(src, &path),
            )
        })?;
        let capabilities = match precision {
            "f64" => Capabilities::FLOAT64,
            _ => Capabilities::empty(),
        };
        Validator::new(ValidationFlags::all(), capabilities)
            .validate(&ir)
            .map_err(|e| {
                diagnostic(
                    assembled,
                    format!("{what} does not validate: {}", e.as_inner()),
                    e.spans().cloned(),
                    e.emit_to_string_with_path(src, &path),
                )
            })?;
        if precision == "f64"
            && Validator::new(ValidationFlags::all(), Capabilities::empty())
                .validate(&ir)
                .is_ok()
        {
            // Then the module does not compute in f64 at all: the
            // prelude's `real` has come loose.
            return Err(format!(
                "{what} validates without the FLOAT64 capability, so it does not use f64"
            ));
        }
        Ok(ir)
    }

    /// A naga error as `shaders/FILE:LINE:COLUMN: headline`, each place it
    /// names likewise, then naga's rendering of it on the assembled module.
    fn diagnostic(
        assembled: &Assembled,
        headline: String,
        spans: impl Iterator<Item = (naga::Span, String)>,
        rendered: String,
    ) -> String {
        let places: Vec<(String, String)> = spans
            .filter_map(|(span, label)| Some((assembled.locate(span.to_range()?.start), label)))
            .collect();
        let at = places
            .first()
            .map_or("shaders", |(place, _)| place.as_str());
        let mut text = format!("{at}: {headline}");
        for (place, label) in &places {
            let _ = write!(text, "\n  {place}: {label}");
        }
        format!("{text}\n{rendered}")
    }

    /// The Rust type a WGSL member must have; `Err` with the WGSL type
    /// when there is no simple counterpart.
    fn rust_type(ir: &naga::Module, ty: Handle<Type>) -> Result<String, String> {
        let inner = &ir.types[ty].inner;
        match inner {
            TypeInner::Scalar(s) | TypeInner::Atomic(s) => match (s.kind, s.width) {
                (ScalarKind::Uint, 4) => Ok("u32".into()),
                (ScalarKind::Sint, 4) => Ok("i32".into()),
                (ScalarKind::Float, 4) => Ok("f32".into()),
                (ScalarKind::Float, 8) => Ok("f64".into()),
                _ => Err(format!("{inner:?}")),
            },
            // A Rust array's elements are packed: so must the WGSL ones be.
            TypeInner::Array {
                base,
                size: ArraySize::Constant(n),
                stride,
            } if matches!(ir.types[*base].inner, TypeInner::Scalar(s) if u32::from(s.width) == *stride) => {
                Ok(format!("[{}; {n}]", rust_type(ir, *base)?))
            }
            _ => Err(format!("{inner:?}")),
        }
    }
}

/// Without the `gpu` feature (CARGO_FEATURE_GPU unset) naga is not built
/// and nothing is checked; the modules are still assembled.
#[cfg(not(feature = "gpu"))]
mod check {
    use super::*;

    /// Braced, not a unit struct, so that `Checks::default()` reads the
    /// same with and without the GPU feature.
    #[derive(Default)]
    pub struct Checks {}

    impl Checks {
        pub fn module(
            &mut self,
            _: &Module,
            _: &str,
            _: &Assembled,
            _: &Path,
        ) -> Result<(), String> {
            Ok(())
        }

        pub fn finish(self) -> String {
            "// Generated by build.rs without the `gpu` feature: no layout checks.\n".into()
        }
    }
}
