//! The two training precisions, `f32` and `f64`, behind one trait.
//!
//! Everything exact in this crate is generic over [`Real`]. The trait only
//! exposes plain IEEE-754 operations (one rounding each, never fused), so the
//! reference arithmetic reads the same in both precisions.

use std::fmt::{Debug, Display};
use std::ops::{Add, Mul, Neg, Sub};
use std::path::Path;

use crate::error::{Error, Result};
use std::str::FromStr;

/// The precision a run computes in.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, serde::Serialize, serde::Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Precision {
    F32,
    F64,
}

/// What to do about features too large for `precision` (named as
/// [`Precision::name`] writes it): rescale them, or train in f64, unless the
/// training already is f64.
pub fn overflow_remedy(precision: &str) -> &'static str {
    if precision == "f64" {
        "rescale them (they overflow f64 too)"
    } else {
        "rescale them or use f64 precision"
    }
}

impl Precision {
    pub fn name(self) -> &'static str {
        match self {
            Precision::F32 => "f32",
            Precision::F64 => "f64",
        }
    }
}

impl Display for Precision {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.name())
    }
}

impl FromStr for Precision {
    type Err = String;
    fn from_str(s: &str) -> Result<Self, String> {
        match s {
            "f32" => Ok(Precision::F32),
            "f64" => Ok(Precision::F64),
            other => Err(format!("unknown precision `{other}` (expected f32 or f64)")),
        }
    }
}

/// An IEEE-754 binary floating-point type the perceptron can train in.
pub trait Real:
    Copy
    + Default
    + PartialEq
    + PartialOrd
    + Debug
    + Display
    + Send
    + Sync
    + 'static
    + bytemuck::Pod
    + Add<Output = Self>
    + Sub<Output = Self>
    + Mul<Output = Self>
    + std::ops::Div<Output = Self>
    + Neg<Output = Self>
    + FromStr
{
    const PRECISION: Precision;
    const ZERO: Self;
    const ONE: Self;
    /// Unit roundoff u = 2^-p (half an ulp of 1.0): |fl(x) - x| <= u |x| for
    /// results in the normal range.
    const UNIT_ROUNDOFF: f64;
    /// Smallest positive normal number (lambda). Below it, results are
    /// subnormal and a device may flush them to zero.
    const MIN_NORMAL: f64;
    /// The largest finite value, as f64.
    const MAX_VALUE: f64;

    fn to_f64(self) -> f64;
    /// Rounds to nearest; used only where the rounding is part of the spec
    /// (reading decimal text goes through [`FromStr`] instead, to avoid double
    /// rounding).
    fn from_f64(v: f64) -> Self;
    fn is_finite(self) -> bool;
    /// True for non-zero numbers below [`Real::MIN_NORMAL`] in magnitude.
    fn is_subnormal(self) -> bool;
    fn abs(self) -> Self;

    /// An atomic cell holding this type's bits: for weights that one core
    /// updates while others read them (see [`crate::engine::cpu::lookahead`]).
    /// Relaxed loads and stores are plain moves on x86-64 and AArch64.
    type Cell: Send + Sync;
    fn cell(v: Self) -> Self::Cell;
    /// The same memory seen as cells, while it is borrowed exclusively;
    /// `None` where a cell needs stricter alignment than the values have.
    fn as_cells(values: &mut [Self]) -> Option<&[Self::Cell]>;
    fn load(cell: &Self::Cell) -> Self;
    fn store(cell: &Self::Cell, v: Self);
}

/// `values` as cells of the same size, if their address suits the cell's
/// alignment.
fn as_cells<T, C>(values: &mut [T]) -> Option<&[C]> {
    const { assert!(std::mem::size_of::<T>() == std::mem::size_of::<C>()) };
    if !(values.as_ptr() as usize).is_multiple_of(std::mem::align_of::<C>()) {
        return None;
    }
    // SAFETY: same size, suitable alignment, and the exclusive borrow of
    // `values` lasts as long as the cells' shared one, so nothing else reads
    // or writes the memory meanwhile except through the cells. Every bit
    // pattern is a valid integer and a valid float.
    Some(unsafe { &*(values as *mut [T] as *const [C]) })
}

impl Real for f32 {
    const PRECISION: Precision = Precision::F32;
    const ZERO: Self = 0.0;
    const ONE: Self = 1.0;
    const UNIT_ROUNDOFF: f64 = 5.960_464_477_539_063e-8; // 2^-24
    const MIN_NORMAL: f64 = 1.175_494_350_822_287_5e-38; // 2^-126
    const MAX_VALUE: f64 = f32::MAX as f64;

    #[inline]
    fn to_f64(self) -> f64 {
        self as f64
    }
    #[inline]
    fn from_f64(v: f64) -> Self {
        v as f32
    }
    #[inline]
    fn is_finite(self) -> bool {
        f32::is_finite(self)
    }
    #[inline]
    fn is_subnormal(self) -> bool {
        f32::is_subnormal(self)
    }
    #[inline]
    fn abs(self) -> Self {
        f32::abs(self)
    }

    type Cell = std::sync::atomic::AtomicU32;
    fn cell(v: Self) -> Self::Cell {
        std::sync::atomic::AtomicU32::new(v.to_bits())
    }
    fn as_cells(values: &mut [Self]) -> Option<&[Self::Cell]> {
        as_cells(values)
    }
    #[inline]
    fn load(cell: &Self::Cell) -> Self {
        f32::from_bits(cell.load(std::sync::atomic::Ordering::Relaxed))
    }
    #[inline]
    fn store(cell: &Self::Cell, v: Self) {
        cell.store(v.to_bits(), std::sync::atomic::Ordering::Relaxed)
    }
}

impl Real for f64 {
    const PRECISION: Precision = Precision::F64;
    const ZERO: Self = 0.0;
    const ONE: Self = 1.0;
    const UNIT_ROUNDOFF: f64 = 1.110_223_024_625_156_5e-16; // 2^-53
    const MIN_NORMAL: f64 = 2.2250738585072014e-308; // 2^-1022
    const MAX_VALUE: f64 = f64::MAX;

    #[inline]
    fn to_f64(self) -> f64 {
        self
    }
    #[inline]
    fn from_f64(v: f64) -> Self {
        v
    }
    #[inline]
    fn is_finite(self) -> bool {
        f64::is_finite(self)
    }
    #[inline]
    fn is_subnormal(self) -> bool {
        f64::is_subnormal(self)
    }
    #[inline]
    fn abs(self) -> Self {
        f64::abs(self)
    }

    type Cell = std::sync::atomic::AtomicU64;
    fn cell(v: Self) -> Self::Cell {
        std::sync::atomic::AtomicU64::new(v.to_bits())
    }
    fn as_cells(values: &mut [Self]) -> Option<&[Self::Cell]> {
        as_cells(values)
    }
    #[inline]
    fn load(cell: &Self::Cell) -> Self {
        f64::from_bits(cell.load(std::sync::atomic::Ordering::Relaxed))
    }
    #[inline]
    fn store(cell: &Self::Cell, v: Self) {
        cell.store(v.to_bits(), std::sync::atomic::Ordering::Relaxed)
    }
}

/// A number read back from a model or checkpoint file: it must be finite
/// and exactly a value of `F` (files store every value exactly), else the
/// file is corrupt or claims the wrong precision.
pub fn exact_value<F: Real>(path: &Path, what: &str, v: f64) -> Result<F> {
    let x = F::from_f64(v);
    if !v.is_finite() {
        return Err(Error::model(
            path,
            format!("is corrupt: {what} is {v}, not a finite number"),
        ));
    }
    if x.to_f64() != v {
        return Err(Error::model(
            path,
            format!(
                "has the wrong precision: {what} = {v} is not an {} value, though the file says \"precision\": \"{}\"",
                F::PRECISION,
                F::PRECISION
            ),
        ));
    }
    Ok(x)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn constants_are_the_powers_of_two_they_claim() {
        assert_eq!(<f32 as Real>::UNIT_ROUNDOFF, 2f64.powi(-24));
        assert_eq!(<f64 as Real>::UNIT_ROUNDOFF, 2f64.powi(-53));
        assert_eq!(<f32 as Real>::MIN_NORMAL, f32::MIN_POSITIVE as f64);
        assert_eq!(<f64 as Real>::MIN_NORMAL, f64::MIN_POSITIVE);
    }
}
