//! LIBSVM/svmlight parsing into CSR.

use std::io::BufRead;
use std::path::Path;

use crate::error::Result;
use crate::float::Real;

use super::RawData;

pub fn parse<F: Real, R: BufRead>(_reader: R, _path: &Path) -> Result<RawData<F>> {
    unimplemented!("data parsers are being written")
}
