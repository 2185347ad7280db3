//! CSV parsing: one row per line, the label in one column, `,` `;` or tab.

use std::io::BufRead;
use std::path::Path;

use crate::error::Result;
use crate::float::Real;

use super::{LoadOptions, RawData};

pub fn parse<F: Real, R: BufRead>(
    _reader: R,
    _path: &Path,
    _opts: &LoadOptions,
) -> Result<RawData<F>> {
    unimplemented!("data parsers are being written")
}
