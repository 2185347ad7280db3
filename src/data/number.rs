//! Feature values as text: parsed straight into the training precision, and
//! written back in the shortest form that parses to the same bits.

use std::io::Write;

use crate::float::{Precision, Real};

use super::message::quote;

/// Parses a feature value directly into `F` (never through f64, which would
/// round twice). Only finite values are accepted. The error says what is wrong
/// with `text`; `what` names where it was expected, e.g. `column 3`.
pub(crate) fn parse_value<F: Real>(
    text: &str,
    what: &dyn std::fmt::Display,
) -> std::result::Result<F, String> {
    match text.parse::<F>() {
        Ok(v) if v.is_finite() => Ok(v),
        Ok(_) => {
            let lower = text.to_ascii_lowercase();
            let bare = lower.trim_start_matches(['+', '-']);
            if matches!(bare, "nan" | "inf" | "infinity") {
                Err(format!(
                    "expected a finite number {what}, found {}",
                    quote(text)
                ))
            } else {
                Err(format!(
                    "value {} {what} is too large for {} (largest finite magnitude {})",
                    quote(text),
                    F::PRECISION,
                    max_finite::<F>()
                ))
            }
        }
        Err(_) if text.is_empty() => Err(format!("empty field {what} (expected a number)")),
        Err(_) => Err(format!("expected a number {what}, found {}", quote(text))),
    }
}

fn max_finite<F: Real>() -> String {
    match F::PRECISION {
        Precision::F32 => format!("{:e}", f32::MAX),
        Precision::F64 => format!("{:e}", f64::MAX),
    }
}

/// Appends `v` in the shortest form that parses back to the same value.
#[inline]
pub fn push_value<F: Real>(out: &mut Vec<u8>, v: F) {
    // Writing to a Vec cannot fail.
    let _ = write!(out, "{v}");
}

#[cfg(test)]
mod tests {
    use super::*;
    #[test]
    fn values_parse_directly_and_must_be_finite() {
        let col = format_args!("in column 2").to_string();
        assert_eq!(parse_value::<f64>("-1.5e3", &col), Ok(-1500.0));
        assert_eq!(parse_value::<f32>("+.5", &col), Ok(0.5));
        assert_eq!(parse_value::<f32>("1e-50", &col), Ok(0.0));
        for bad in ["nan", "NaN", "-inf", "inf", "+Infinity"] {
            assert_eq!(
                parse_value::<f64>(bad, &col),
                Err(format!(
                    "expected a finite number in column 2, found \"{bad}\""
                ))
            );
        }
        assert_eq!(
            parse_value::<f32>("1e39", &col),
            Err(
                "value \"1e39\" in column 2 is too large for f32 (largest finite magnitude \
                 3.4028235e38)"
                    .to_owned()
            )
        );
        assert_eq!(parse_value::<f64>("1e39", &col), Ok(1e39));
        assert_eq!(
            parse_value::<f64>("-1e999", &col),
            Err(
                "value \"-1e999\" in column 2 is too large for f64 (largest finite magnitude \
                 1.7976931348623157e308)"
                    .to_owned()
            )
        );
        assert_eq!(
            parse_value::<f64>("1,5", &col),
            Err("expected a number in column 2, found \"1,5\"".to_owned())
        );
        assert_eq!(
            parse_value::<f64>("", &col),
            Err("empty field in column 2 (expected a number)".to_owned())
        );
    }

    /// A decimal whose nearest f64 lies exactly halfway between two f32s, so
    /// that going through f64 rounds it a second time, the wrong way.
    fn double_rounding_cases() -> Vec<(String, f32)> {
        let mut found = Vec::new();
        let mut x = 1.0f32;
        while found.len() < 5 && x < 1e6 {
            let up = f32::from_bits(x.to_bits() + 1);
            // The midpoint fits exactly in f64 (25 significant bits); a
            // decimal a hair above it belongs to `up`.
            let mid = (x as f64 + up as f64) / 2.0;
            let s = format!("{mid:.40}1");
            let direct: f32 = s.parse().unwrap();
            let via_f64 = s.parse::<f64>().unwrap() as f32;
            if direct != via_f64 {
                found.push((s, direct));
            }
            x = x * 1.37 + 0.11;
        }
        found
    }

    #[test]
    fn f32_values_are_not_rounded_twice() {
        let cases = double_rounding_cases();
        assert!(cases.len() >= 3, "{cases:?}");
        for (s, direct) in &cases {
            assert_eq!(parse_value::<f32>(s, &"here"), Ok(*direct), "{s}");
            assert_ne!(s.parse::<f64>().unwrap() as f32, *direct, "{s}");
        }
        // The textbook case: 1 + 2^-24 + a hair is above the midpoint of
        // 1 and 1 + 2^-23.
        let s = "1.0000000596046447753906250001";
        assert_eq!(parse_value::<f32>(s, &"here"), Ok(1.000_000_1_f32));
        assert_eq!(s.parse::<f64>().unwrap() as f32, 1.0);
    }
}
