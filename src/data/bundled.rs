//! The small real dataset compiled into the binary, so `perceptron train` with
//! no file shows the whole tool working on any machine.

use std::path::Path;

use crate::error::Result;
use crate::float::Real;

use super::blocks::{Reading, Text};
use super::csv;
use super::dataset::Dataset;
use super::options::LoadOptions;
use super::raw::RawData;

/// Display name used in reports and model files.
pub const NAME: &str = "<bundled: digits 3 vs 5>";

/// UCI optical digits (via scikit-learn's `load_digits`, BSD-3-Clause):
/// 8x8 images of the digits 3 (-1) and 5 (+1), pixel counts 0..16.
/// Provenance: `data/README.md`.
pub const DIGITS_3V5_CSV: &str = include_str!("../../data/digits_3v5.csv");

/// Parses the bundled dataset.
pub fn digits_3v5<F: Real>(opts: &LoadOptions) -> Result<Dataset<F>> {
    let (raw, path) = raw_digits_3v5(opts)?;
    Dataset::from_raw(raw, &path, opts.positive.as_deref())
}

/// The bundled dataset before its labels are mapped, with its display path.
pub fn raw_digits_3v5<F: Real>(opts: &LoadOptions) -> Result<(RawData<F>, std::path::PathBuf)> {
    let path = Path::new(NAME);
    Ok((
        csv::parse_text(
            Text::bytes(DIGITS_3V5_CSV.as_bytes()),
            path,
            opts,
            None,
            Reading::default(),
        )?,
        path.to_path_buf(),
    ))
}
