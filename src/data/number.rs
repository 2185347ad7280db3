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

/// The value of `text` when it is a plain decimal number that [`parse_value`]
/// accepts: `[+-]digits[.digits][(e|E)[+-]digits]`, at least one mantissa
/// digit, ASCII only, finite in `F`. `None` for anything else (a name, an
/// empty field, infinity, `nan`, an overflow, a stray byte): the caller then
/// reads the text the slow way, which says what is wrong.
///
/// The value is the same, bit for bit, as [`parse_value`]'s: both round the
/// decimal's exact value once to the nearest `F` (ties to even). Integers of
/// at most 19 digits are converted by a cast from `u64` (which rounds so);
/// decimals whose digits and power of ten are both exact in f64 take one
/// correctly rounded multiplication or division ([`clinger`]); the rest go
/// to an Eisel-Lemire parser with an exact fallback (`fast-float2`).
#[cfg(test)]
pub(crate) fn parse_fast<F: Real>(text: &[u8]) -> Option<F> {
    match parse_prefix::<F>(text) {
        Some((v, n)) if n == text.len() => Some(v),
        _ => None,
    }
}

/// The number at the start of `text` (see [`parse_fast`]) and the bytes it
/// takes; the caller checks that what follows ends the field.
#[inline(always)]
pub(crate) fn parse_prefix<F: Real>(text: &[u8]) -> Option<(F, usize)> {
    let mut i = 0;
    let negative = match text.first() {
        Some(b'-') => {
            i = 1;
            true
        }
        Some(b'+') => {
            i = 1;
            false
        }
        _ => false,
    };
    let start = i;
    // Mantissa digits (exact while there are at most 19), the point and
    // the exponent, in one pass.
    let mut w: u64 = 0;
    i = digits_into(text, i, &mut w);
    let mut digits = i - start;
    let integer_end = i;
    let mut scale: i64 = 0;
    if text.get(i) == Some(&b'.') {
        i += 1;
        let frac = i;
        i = digits_into(text, i, &mut w);
        scale = (i - frac) as i64;
        digits += i - frac;
    } else if digits > 0 && digits <= 19 && !matches!(text.get(i), Some(b'e' | b'E')) {
        return Some((integer_value(negative, w), integer_end));
    }
    if digits == 0 {
        return None;
    }
    let mut exp: i64 = 0;
    if let Some(b'e' | b'E') = text.get(i) {
        i += 1;
        let minus = match text.get(i) {
            Some(b'-') => {
                i += 1;
                true
            }
            Some(b'+') => {
                i += 1;
                false
            }
            _ => false,
        };
        let first = i;
        while let Some(&b) = text.get(i) {
            let d = b.wrapping_sub(b'0');
            if d >= 10 {
                break;
            }
            exp = (exp * 10 + i64::from(d)).min(1 << 20);
            i += 1;
        }
        if i == first {
            return None;
        }
        if minus {
            exp = -exp;
        }
    }
    let exact = if digits <= 19 {
        clinger(negative, w, exp - scale)
    } else {
        None
    };
    let v = match exact {
        Some(v) => v,
        None => slow_decimal::<F>(negative, &text[start..i])?,
    };
    v.is_finite().then_some((v, i))
}

/// `±digits` (checked to be of the plain form, without its sign),
/// correctly rounded to `F`.
#[cold]
fn slow_decimal<F: Real>(negative: bool, digits: &[u8]) -> Option<F> {
    let v = match F::PRECISION {
        Precision::F32 => f64::from(fast_float2::parse::<f32, _>(digits).ok()?),
        Precision::F64 => fast_float2::parse::<f64, _>(digits).ok()?,
    };
    Some(F::from_f64(if negative { -v } else { v }))
}

/// `w` (or `-w`) rounded once to `F`: a cast from `u64` rounds to nearest,
/// ties to even, as the parser does.
#[inline]
pub(crate) fn integer_value<F: Real>(negative: bool, w: u64) -> F {
    // The f32 result is exact in f64 and back, so `from_f64` rounds nothing.
    let v = match F::PRECISION {
        Precision::F32 => f64::from(if negative { -(w as f32) } else { w as f32 }),
        Precision::F64 => {
            if negative {
                -(w as f64)
            } else {
                w as f64
            }
        }
    };
    F::from_f64(v)
}

/// Appends the decimal digits of `text` from `i` on to `w` (wrapping: the
/// caller uses `w` only for at most 19 digits); returns where they end.
/// Eight digits at a time where it can (Lemire's SWAR conversion).
#[inline]
fn digits_into(text: &[u8], mut i: usize, w: &mut u64) -> usize {
    while let Some(eight) = text.get(i..i + 8).and_then(eight_digits) {
        *w = w.wrapping_mul(100_000_000).wrapping_add(eight);
        i += 8;
    }
    while let Some(&b) = text.get(i) {
        let d = b.wrapping_sub(b'0');
        if d >= 10 {
            break;
        }
        *w = w.wrapping_mul(10).wrapping_add(u64::from(d));
        i += 1;
    }
    i
}

/// The value of eight ASCII digits, or `None` when one of the bytes is not
/// a digit.
#[inline]
fn eight_digits(bytes: &[u8]) -> Option<u64> {
    let v = u64::from_le_bytes(bytes.try_into().ok()?);
    let high = 0xf0f0_f0f0_f0f0_f0f0;
    if (v & high) | ((v.wrapping_add(0x0606_0606_0606_0606) & high) >> 4) != 0x3333_3333_3333_3333 {
        return None;
    }
    Some(digit_bytes_value(v.wrapping_sub(0x3030_3030_3030_3030)))
}

/// The number that eight digit values (0 to 9, one a byte, the first
/// digit in the lowest byte) spell.
#[inline(always)]
fn digit_bytes_value(v: u64) -> u64 {
    let v = v.wrapping_mul(10).wrapping_add(v >> 8);
    let mask = 0x0000_00ff_0000_00ff;
    let v = (v & mask)
        .wrapping_mul(100 + (1_000_000 << 32))
        .wrapping_add(((v >> 16) & mask).wrapping_mul(1 + (10_000 << 32)));
    v >> 32
}

/// The plain digits that start the eight bytes `chunk` and their value,
/// when there are one to seven of them (so the byte after them is in the
/// chunk): one load and no loop, so fields of varying length cost no
/// mispredicted branch.
#[inline(always)]
pub(crate) fn leading_digits(chunk: &[u8; 8]) -> Option<(usize, u64)> {
    let d = u64::from_le_bytes(*chunk) ^ 0x3030_3030_3030_3030;
    // A byte is not a digit when it is above 9 after the xor: its high bit
    // is set, or adding 0x76 sets it. A carry out of a byte only reaches the
    // bytes after it, past the first non-digit.
    let non_digit = (d.wrapping_add(0x7676_7676_7676_7676) | d) & 0x8080_8080_8080_8080;
    let n = (non_digit.trailing_zeros() / 8) as usize;
    if !(1..8).contains(&n) {
        return None;
    }
    // The digits moved to the top bytes: zeros (leading zeros) below them.
    Some((n, digit_bytes_value(d << (8 * (8 - n)))))
}

/// Powers of ten exact in f64 (5^22 < 2^53).
const POW10: [f64; 23] = [
    1e0, 1e1, 1e2, 1e3, 1e4, 1e5, 1e6, 1e7, 1e8, 1e9, 1e10, 1e11, 1e12, 1e13, 1e14, 1e15, 1e16,
    1e17, 1e18, 1e19, 1e20, 1e21, 1e22,
];

/// `±w * 10^e10` when `w` and `10^|e10|` are both exact in f64: one
/// multiplication or division, correctly rounded (Clinger, "How to read
/// floating point numbers accurately", 1990). That is the f64 value; for
/// f32 it is rounded once more, which is the correctly rounded f32 unless
/// the f64 lies exactly halfway between two f32s (then `None`): a midpoint
/// is an f64, so no midpoint lies strictly between the exact value and its
/// nearest f64, and both round to the same f32. (The results here, between
/// 10^-22 and 2^53 * 10^22, are normal f32s or overflow, where the halfway
/// points are the bit pattern tested.)
#[inline]
fn clinger<F: Real>(negative: bool, w: u64, e10: i64) -> Option<F> {
    let p = *POW10.get(usize::try_from(e10.unsigned_abs()).ok()?)?;
    if w > 1 << 53 {
        return None;
    }
    let m = w as f64;
    let v = match F::PRECISION {
        Precision::F64 => {
            if e10 < 0 {
                m / p
            } else {
                m * p
            }
        }
        Precision::F32 => {
            // A division costs a dozen multiplications, and most values in
            // text have a fraction. `m * 10^-k` (10^-k itself rounded) is
            // within about 2 units in the last place of the exact value:
            // its f32 is the correct one unless an f32 midpoint, a 1 and 28
            // zeros in the 29 bits below an f32's precision, lies that
            // close. Only then is the quotient taken.
            let near = if e10 < 0 {
                let q = m * INV_POW10[p_index(e10)];
                let low = (q.to_bits() & 0x1fff_ffff) as i64;
                if (low - 0x1000_0000).abs() > 4 {
                    return Some(F::from_f64(sign(negative, f64::from(q as f32))));
                }
                m / p
            } else {
                m * p
            };
            if near.to_bits() & 0x1fff_ffff == 0x1000_0000 {
                return None;
            }
            f64::from(near as f32)
        }
    };
    Some(F::from_f64(sign(negative, v)))
}

/// `-v` when `negative`.
#[inline(always)]
fn sign(negative: bool, v: f64) -> f64 {
    if negative { -v } else { v }
}

/// Where 10^-|e10| is in [`INV_POW10`] (checked against [`POW10`]'s length
/// by the caller).
#[inline(always)]
fn p_index(e10: i64) -> usize {
    e10.unsigned_abs() as usize
}

/// 10^-k rounded to the nearest f64, for k up to 22.
const INV_POW10: [f64; 23] = [
    1e0, 1e-1, 1e-2, 1e-3, 1e-4, 1e-5, 1e-6, 1e-7, 1e-8, 1e-9, 1e-10, 1e-11, 1e-12, 1e-13, 1e-14,
    1e-15, 1e-16, 1e-17, 1e-18, 1e-19, 1e-20, 1e-21, 1e-22,
];

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

    /// The fast path gives the standard parser's bits, or leaves the text
    /// to it.
    fn agrees(text: &str) {
        let bits32 = |v: Option<f32>| v.map(f32::to_bits);
        let bits64 = |v: Option<f64>| v.map(f64::to_bits);
        let std32 = text.parse::<f32>().ok().filter(|v| v.is_finite());
        let std64 = text.parse::<f64>().ok().filter(|v| v.is_finite());
        let fast32 = parse_fast::<f32>(text.as_bytes());
        let fast64 = parse_fast::<f64>(text.as_bytes());
        if fast32.is_some() {
            assert_eq!(bits32(fast32), bits32(std32), "f32 {text:?}");
        }
        if fast64.is_some() {
            assert_eq!(bits64(fast64), bits64(std64), "f64 {text:?}");
        }
        // Plain finite decimals are never left to the slow path.
        let plain = text
            .bytes()
            .all(|b| b.is_ascii_digit() || b"+-.eE".contains(&b));
        if plain && std64.is_some() {
            assert!(fast64.is_some(), "{text:?}");
        }
        if plain && std32.is_some() {
            assert!(fast32.is_some(), "{text:?}");
        }
    }

    #[test]
    fn the_fast_path_gives_the_parsers_bits() {
        for text in [
            "0",
            "-0",
            "+0",
            "-0.0",
            "1",
            "+1",
            "007",
            "255",
            "16777217",
            "-16777217",
            "9007199254740993",
            "18446744073709551615",
            "99999999999999999999",
            "1.",
            ".5",
            "+.5",
            "-.5e-3",
            "1.e5",
            "1e",
            "1e+",
            "e5",
            ".",
            "-",
            "+",
            "",
            "1..2",
            "1e5.5",
            "0.008900964",
            "-0.0091879405",
            "0.10169041",
            "1e-50",
            "1e39",
            "1e308",
            "1e309",
            "2.2250738585072014e-308",
            "4.9e-324",
            "3.4028235e38",
            "3.4028236e38",
            "0.000000000000000000000000000001",
            "123456789012345678901234567890",
            "1.0000000596046447753906250001",
            "1.00000005960464477539062500",
            "12345678.5",
            "nan",
            "inf",
            "-infinity",
            "1,5",
            " 1",
            "1 ",
            "0x10",
            "1_000",
        ] {
            agrees(text);
        }
        for (text, _) in double_rounding_cases() {
            agrees(&text);
        }
        // f32 midpoints written exactly: the f64 route must not round twice.
        let mut x = 1.0f32;
        for _ in 0..2000 {
            let up = f32::from_bits(x.to_bits() + 1);
            let mid = (x as f64 + up as f64) / 2.0;
            agrees(&format!("{mid}"));
            agrees(&format!("{mid:e}"));
            // 16 to 19 significant digits: the f32 path's product lands
            // within a few units of the midpoint, where it must divide.
            for digits in 15..19 {
                agrees(&format!("{mid:.digits$e}"));
            }
            x = x * 1.618 + 0.3;
        }
    }

    /// The digits at the start of eight bytes, against a loop over them,
    /// for every byte value after one to seven digits.
    #[test]
    fn leading_digits_count_and_read_the_digits_before_any_other_byte() {
        let slow = |chunk: &[u8; 8]| {
            let n = chunk.iter().take_while(|b| b.is_ascii_digit()).count();
            let v = chunk[..n]
                .iter()
                .fold(0u64, |v, b| v * 10 + u64::from(b - b'0'));
            (1..8).contains(&n).then_some((n, v))
        };
        let digits = b"90817263";
        for n in 0..=8 {
            for stop in 0..=255u8 {
                let mut chunk = [stop; 8];
                chunk[..n].copy_from_slice(&digits[..n]);
                assert_eq!(leading_digits(&chunk), slow(&chunk), "{chunk:?}");
            }
        }
        assert_eq!(leading_digits(b"0000007:"), Some((7, 7)));
        assert_eq!(leading_digits(b"1055:0.0"), Some((4, 1055)));
    }

    proptest::proptest! {
        #![proptest_config(proptest::prelude::ProptestConfig::with_cases(4096))]
        #[test]
        fn any_decimal_parses_as_the_parser_does(
            sign in proptest::sample::select(vec!["", "-", "+"]),
            int in "[0-9]{0,22}",
            frac in proptest::option::of("[0-9]{0,22}"),
            exp in proptest::option::of((proptest::sample::select(vec!["e", "E"]),
                proptest::sample::select(vec!["", "-", "+"]), 0u32..400)),
        ) {
            let mut text = format!("{sign}{int}");
            if let Some(f) = frac {
                text.push('.');
                text.push_str(&f);
            }
            if let Some((e, s, n)) = exp {
                text.push_str(&format!("{e}{s}{n}"));
            }
            agrees(&text);
        }

        /// Integers below 2^53 scaled by 10^-k: the f32 path multiplies
        /// by a rounded 10^-k and divides only near a midpoint.
        #[test]
        fn scaled_integers_parse_as_the_parser_does(w in 0u64..(1 << 53), k in 0u32..26) {
            agrees(&format!("{w}e-{k}"));
        }

        #[test]
        fn any_bytes_parse_as_the_parser_does(
            bytes in proptest::collection::vec(proptest::sample::select(b"0123456789.eE+-x ".to_vec()), 0..30),
        ) {
            agrees(std::str::from_utf8(&bytes).unwrap());
        }
    }
}
