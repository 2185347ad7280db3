//! Reading data so that no value changes: in f64, then kept in f32 only
//! where every value fits it exactly. For the commands that rewrite data
//! (`convert`, `split`) when no precision is asked for.

use std::path::Path;

use super::matrix::{CsrMatrix, DenseMatrix, Features};
use super::options::LoadOptions;
use super::raw::RawData;
use crate::error::Result;

/// A value that f32 cannot hold exactly: its 0-based row and column, and
/// the value.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct NeedsF64 {
    pub row: usize,
    pub column: usize,
    pub value: f64,
}

impl std::fmt::Display for NeedsF64 {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(
            f,
            "row {}, column {}: {}",
            self.row + 1,
            self.column + 1,
            self.value
        )
    }
}

/// Data read without changing a value: in f32 when every value is exactly
/// an f32 (then the same as parsing the text in f32), else in f64, with
/// the first value that needs it.
pub enum Exact {
    F32(RawData<f32>),
    F64(RawData<f64>, NeedsF64),
}

/// Reads `path` in f64 and keeps it in f32 where that changes nothing.
pub fn load_exact(path: &Path, opts: &LoadOptions) -> Result<Exact> {
    let raw = super::load_raw::<f64>(path, opts)?;
    Ok(match first_inexact_in_f32(&raw.features) {
        Some(at) => Exact::F64(raw, at),
        None => Exact::F32(to_f32(raw)),
    })
}

/// The first stored value, in row order, that f32 cannot hold exactly
/// (out of its range, or with more bits).
pub fn first_inexact_in_f32(features: &Features<f64>) -> Option<NeedsF64> {
    let inexact = |v: f64| (v as f32) as f64 != v;
    match features {
        Features::Dense(m) => {
            let k = m.values.iter().position(|&v| inexact(v))?;
            let cols = m.cols.max(1);
            Some(NeedsF64 {
                row: k / cols,
                column: k % cols,
                value: m.values[k],
            })
        }
        Features::Sparse(m) => {
            let k = m.values.iter().position(|&v| inexact(v))?;
            let row = m.row_ptr.partition_point(|&p| p <= k) - 1;
            Some(NeedsF64 {
                row,
                column: m.indices[k] as usize,
                value: m.values[k],
            })
        }
    }
}

/// The same data in f32: exact where [`first_inexact_in_f32`] found
/// nothing, else each value rounded to nearest.
pub fn to_f32(raw: RawData<f64>) -> RawData<f32> {
    let features = match raw.features {
        Features::Dense(m) => Features::Dense(DenseMatrix {
            rows: m.rows,
            cols: m.cols,
            values: m.values.iter().map(|&v| v as f32).collect(),
        }),
        Features::Sparse(m) => Features::Sparse(CsrMatrix {
            cols: m.cols,
            row_ptr: m.row_ptr,
            indices: m.indices,
            values: m.values.iter().map(|&v| v as f32).collect(),
        }),
    };
    RawData {
        features,
        class_ids: raw.class_ids,
        table: raw.table,
        format: raw.format,
        csv: raw.csv,
        libsvm: raw.libsvm,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn f32_is_kept_only_where_every_value_fits() {
        let dense = |values: Vec<f64>| {
            Features::Dense(DenseMatrix {
                rows: 2,
                cols: 2,
                values: values.into(),
            })
        };
        // 2^100 is an f32; 1e30 is not.
        let big = 2f64.powi(100);
        assert_eq!(
            first_inexact_in_f32(&dense(vec![0.5, -2.0, big, 0.0])),
            None
        );
        for (v, at) in [
            (0.123456789012345, 1),
            (12345678.9, 2),
            (1e-50, 3),
            (1e300, 0),
        ] {
            let mut values = vec![0.5, 0.25, 1.0, 2.0];
            values[at] = v;
            let found = first_inexact_in_f32(&dense(values)).unwrap();
            assert_eq!((found.row * 2 + found.column, found.value), (at, v));
        }
        let sparse = Features::Sparse(CsrMatrix {
            cols: 10,
            row_ptr: vec![0, 1, 1, 3].into(),
            indices: vec![4, 2, 9].into(),
            values: vec![1.0, 2.0, 0.1].into(),
        });
        let found = first_inexact_in_f32(&sparse).unwrap();
        assert_eq!((found.row, found.column, found.value), (2, 9, 0.1));
    }
}
