//! Rewriting data read in one format in another (`perceptron convert`):
//! the output's format, layout and LIBSVM index base are settled first
//! ([`Conversion::plan`]), so that a front end can say what will change
//! before anything is written, then the file is written
//! ([`Conversion::write`]), which returns the one record of what was
//! written ([`Converted`]) that front ends print: as JSON (serde; its fields
//! are the JSON's) or as text ([`Converted::render`]). The label values are
//! kept as they are (no -1/+1 mapping), so any label column converts.

use std::path::Path;
use std::time::Instant;

use serde::Serialize;

use super::binary::Layout;
use super::matrix::Features;
use super::options::{Format, IndexBase};
use super::raw::{LibsvmInfo, RawData};
use super::write::{OutputFormat, with_layout, write_raw_based};
use crate::error::Result;
use crate::float::{Precision, Real};

/// Data ready to be written: in the layout asked for, with the output's
/// format and index base settled.
pub struct Conversion<F> {
    raw: RawData<F>,
    /// The input's name as messages give it (`<stdin>` for `-`).
    input: String,
    /// The output's format (by its extension; standard output's by the
    /// layout).
    pub format: OutputFormat,
    /// How LIBSVM output counts features (ignored for other formats).
    pub index_base: IndexBase,
}

/// What was written: `perceptron convert`'s summary, its fields and their
/// order the JSON's.
#[derive(Serialize, Clone, Debug, PartialEq)]
pub struct Converted {
    /// The input's name as messages give it (`<stdin>` for `-`).
    pub input: String,
    pub input_format: Format,
    /// The output's name as messages give it (`<stdout>` for `-`).
    pub output: String,
    pub output_format: OutputFormat,
    /// LIBSVM output: how it counts features (`one`, the standard, unless
    /// `zero` was asked for).
    pub index_base: Option<IndexBase>,
    pub layout: Layout,
    pub precision: Precision,
    /// Why the precision, in the front end's words: asked for, or the
    /// first value that needs f64 when none was.
    pub precision_reason: String,
    pub rows: usize,
    pub features: usize,
    /// Stored values (dense: rows * features).
    pub stored_values: usize,
    /// Feature values that are not zero.
    pub nonzeros: usize,
    /// Distinct label values.
    pub labels: usize,
    pub bytes: u64,
    /// Reading the input, as the front end timed it.
    pub read_seconds: f64,
    pub write_seconds: f64,
}

impl<F: Real> Conversion<F> {
    /// Settles how `raw`, read from `input`, is written to `output`: in
    /// `layout` (default: the input's), LIBSVM output counted from
    /// `index_base` (default: one, the LIBSVM standard). A dense copy of
    /// sparse data going to a binary file is refused before it is made if
    /// the disk lacks room for it.
    pub fn plan(
        raw: RawData<F>,
        input: &Path,
        output: &Path,
        layout: Option<Layout>,
        index_base: Option<IndexBase>,
    ) -> Result<Self> {
        check_dense_space(&raw, output, layout)?;
        let raw = match layout {
            Some(l) => with_layout(raw, l, input)?,
            None => raw,
        };
        let format = OutputFormat::of_output(output, raw.features.is_sparse())?;
        Ok(Conversion {
            raw,
            input: super::source::name(input).display().to_string(),
            format,
            index_base: index_base.unwrap_or(IndexBase::One),
        })
    }

    /// LIBSVM output counted from another base than the input was read
    /// in: how the input was read (to say that the indices shift).
    pub fn index_base_change(&self) -> Option<&LibsvmInfo> {
        if self.format != OutputFormat::Libsvm {
            return None;
        }
        let base = self.index_base;
        self.raw.libsvm.as_ref().filter(|i| i.base != base)
    }

    /// Writes the data to `output` (atomically; `-` is standard output).
    /// `precision_reason` and `read_seconds` are the caller's, for the
    /// summary: why the data was read in its precision, and how long
    /// reading it took.
    pub fn write(
        &self,
        output: &Path,
        precision_reason: String,
        read_seconds: f64,
    ) -> Result<Converted> {
        let (raw, format) = (&self.raw, self.format);
        let start = Instant::now();
        let bytes = write_raw_based(output, raw, format, self.index_base)?;
        let write_seconds = start.elapsed().as_secs_f64();
        let stored_values = match &raw.features {
            Features::Dense(m) => m.values.len(),
            Features::Sparse(m) => m.values.len(),
        };
        Ok(Converted {
            input: self.input.clone(),
            input_format: raw.format,
            output: crate::output::shown(output),
            output_format: format,
            index_base: (format == OutputFormat::Libsvm).then_some(self.index_base),
            layout: Layout::of(&raw.features),
            precision: F::PRECISION,
            precision_reason,
            rows: raw.features.rows(),
            features: raw.features.cols(),
            stored_values,
            nonzeros: raw.features.nonzeros(),
            labels: raw.table.classes().len(),
            bytes,
            read_seconds,
            write_seconds,
        })
    }
}

impl Converted {
    /// The one-line text summary of the conversion (no line break).
    pub fn render(&self) -> String {
        let format = self.output_format;
        format!(
            "wrote {}: {}{} ({}{} values: {}), {} rows x {} features, {} stored values, {} \
             label values, {}; read in {:.3} s, written in {:.3} s",
            self.output,
            format.name(),
            if self.index_base == Some(IndexBase::Zero) {
                " zero-based"
            } else {
                ""
            },
            if format == OutputFormat::Binary {
                format!("{}, ", self.layout.name())
            } else {
                String::new()
            },
            self.precision,
            self.precision_reason,
            self.rows,
            self.features,
            self.stored_values,
            self.labels,
            crate::text::bytes(self.bytes),
            self.read_seconds,
            self.write_seconds
        )
    }
}

/// A dense copy of sparse data can be thousands of times its size (one
/// index of 2^31 asks for 16 GiB): the disk is checked before the copy
/// is made, and again, for every output, before writing.
fn check_dense_space<F: Real>(
    raw: &RawData<F>,
    output: &Path,
    layout: Option<Layout>,
) -> Result<()> {
    if let (Some(Layout::Dense), Features::Sparse(m)) = (layout, &raw.features)
        && !crate::output::is_stdout(output)
        && OutputFormat::from_path(output)? == OutputFormat::Binary
    {
        let cells = (m.rows() as u64).saturating_mul(m.cols as u64);
        let bytes = cells.saturating_mul(std::mem::size_of::<F>() as u64);
        crate::output::check_space(output, bytes)?;
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn svm(text: &str) -> RawData<f32> {
        crate::data::libsvm::parse(text.as_bytes(), Path::new("t.svm")).unwrap()
    }

    #[test]
    fn libsvm_output_is_one_based_and_says_when_the_input_was_not() {
        let raw = svm("1 0:1 2:3\n-1 1:2\n");
        let (input, output) = (Path::new("t.svm"), Path::new("out.svm"));
        let plan = Conversion::plan(raw, input, output, None, None).unwrap();
        assert_eq!(plan.format, OutputFormat::Libsvm);
        assert_eq!(plan.index_base, IndexBase::One);
        assert_eq!(
            plan.index_base_change().map(|i| i.base),
            Some(IndexBase::Zero)
        );
        let raw = svm("1 0:1 2:3\n-1 1:2\n");
        let plan = Conversion::plan(raw, input, output, None, Some(IndexBase::Zero)).unwrap();
        assert!(plan.index_base_change().is_none());
    }

    #[test]
    fn writes_the_layout_asked_for_and_counts_it() {
        let dir = tempfile::tempdir().unwrap();
        let out = dir.path().join("t.pbin");
        let raw = svm("1 1:1 3:3\n-1 2:2\n");
        let plan =
            Conversion::plan(raw, Path::new("t.svm"), &out, Some(Layout::Dense), None).unwrap();
        assert!(plan.index_base_change().is_none());
        let done = plan.write(&out, "asked".into(), 0.0).unwrap();
        assert_eq!(done.output_format, OutputFormat::Binary);
        assert_eq!(done.layout, Layout::Dense);
        assert_eq!((done.rows, done.features, done.stored_values), (2, 3, 6));
        assert_eq!((done.nonzeros, done.labels, done.index_base), (3, 2, None));
        assert_eq!(done.bytes, std::fs::metadata(&out).unwrap().len());
    }

    #[test]
    fn the_summary_is_the_json_record_and_renders_its_own_line() {
        let dir = tempfile::tempdir().unwrap();
        let out = dir.path().join("t.svm");
        let raw = svm("1 0:1 2:3\n-1 1:2\n");
        let plan =
            Conversion::plan(raw, Path::new("-"), &out, None, Some(IndexBase::Zero)).unwrap();
        let done = plan.write(&out, "asked".into(), 0.5).unwrap();
        let json = serde_json::to_string(&done).unwrap();
        let head = r#"{"input":"<stdin>","input_format":"libsvm","output":"#;
        assert!(json.starts_with(head));
        assert!(json.contains(r#""output_format":"libsvm","index_base":"zero","layout":"csr","#));
        assert!(json.contains(r#""precision_reason":"asked","rows":2,"#));
        assert!(json.contains(r#""read_seconds":0.5,"write_seconds":"#));
        let text = done.render();
        assert!(text.contains(": LIBSVM zero-based (f32 values: asked), 2 rows x 3 features,"));
        assert!(text.contains("read in 0.500 s"));
    }
}
