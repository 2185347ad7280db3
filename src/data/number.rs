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
    let k = usize::try_from(e10.unsigned_abs()).ok()?;
    let p = *POW10.get(k)?;
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
                let q = m * INV_POW10[k];
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

/// Appends `v` in the shortest form that parses back to the same value,
/// byte for byte as the standard library's `Display` writes it: the
/// shortest digits that round-trip, the closest of them to `v` (the larger
/// in magnitude when two are equally close), in plain decimal notation,
/// never with an exponent (`1e-7` is `0.0000001`, `1e20` is
/// `100000000000000000000`, `1.0` is `1`, `-0.0` is `-0`).
///
/// The digits come from `zmij` (Schubfach), several times faster than
/// `Display`. They are the same digits except at an exact tie, which zmij
/// resolves to the even digit and `Display` upwards: ties are found exactly
/// (`tie`) and moved up. The text is laid out here as `Display` lays it
/// out. Checked on every finite f32 and on millions of f64 bit patterns
/// (see the tests). Non-finite values, which no reader lets through, are
/// left to `Display`.
#[inline]
pub fn push_value<F: Real>(out: &mut Vec<u8>, v: F) {
    if !v.is_finite() {
        // Writing to a Vec cannot fail.
        let _ = write!(out, "{v}");
        return;
    }
    let mut buf = zmij::Buffer::new();
    let text = match F::PRECISION {
        // Exact: an f32 goes to f64 and back unchanged.
        Precision::F32 => buf.format_finite(v.to_f64() as f32),
        Precision::F64 => buf.format_finite(v.to_f64()),
    };
    let text = text.as_bytes();
    let (m, e) = odd_significand(v.to_f64());
    let ties = match F::PRECISION {
        Precision::F32 => TIE_EXPONENTS_F32,
        Precision::F64 => TIE_EXPONENTS_F64,
    };
    if ties.contains(&e) && m != 0 {
        let (negative, mut digits, mut last) = decimal(text);
        if tie(m, e, digits, last) {
            digits += 1;
            while digits.is_multiple_of(10) {
                digits /= 10;
                last += 1;
            }
        }
        push_digits(out, negative, digits, last);
    } else {
        // An exponent (`e-7`, `e+20`, `e-308`) ends the text.
        let n = text.len();
        let exponent = (3..=5).any(|back| n >= back && text[n - back] == b'e');
        if exponent {
            let (negative, digits, last) = decimal(text);
            push_digits(out, negative, digits, last);
        } else {
            // zmij's plain form is `Display`'s, with `.0` after an integer.
            out.extend_from_slice(text.strip_suffix(b".0").unwrap_or(text));
        }
    }
}

/// The binary exponents `e` of the values `m * 2^e` (`m` odd) that can lie
/// exactly halfway between two shortest candidates (see [`tie`]): outside
/// them, zmij's digits are `Display`'s. A tie has `e = t` with `t >= 0`
/// and `5^(t+1) <= m < 2^53` (`2^24` in f32), or `t < 0` and `5^(-t-1) <=
/// 2 digits + 1 < 2 * 10^17` (`2 * 10^9` in f32: at most 9 digits).
const TIE_EXPONENTS_F32: std::ops::RangeInclusive<i32> = -14..=9;
const TIE_EXPONENTS_F64: std::ops::RangeInclusive<i32> = -25..=21;

/// `x = m * 2^e` with `m` odd (`m = 0` for zero).
#[inline]
fn odd_significand(x: f64) -> (u64, i32) {
    let bits = x.to_bits();
    let field = ((bits >> 52) & 0x7ff) as i32;
    let fraction = bits & ((1 << 52) - 1);
    let (m, e) = if field == 0 {
        (fraction, -1074)
    } else {
        (fraction | 1 << 52, field - 1075)
    };
    if m == 0 {
        return (0, 0);
    }
    let zeros = m.trailing_zeros();
    (m >> zeros, e + zeros as i32)
}

/// Whether `m * 2^e` (`m` odd) is exactly `(digits + 1/2) * 10^last`, the
/// midpoint of `digits` and `digits + 1` in the place of the last digit.
/// With `t = last - 1` the midpoint is `(2 digits + 1) * 5^(t+1) * 2^t`,
/// and `2 digits + 1` is odd, so a tie needs `e = t` and, for `t >= 0`,
/// `m = (2 digits + 1) * 5^(t+1)`, for `t < 0`, `m * 5^(-t-1) = 2 digits + 1`.
/// (`m < 2^53` and `digits < 10^17` bound `t`: [`TIE_EXPONENTS_F64`].)
fn tie(m: u64, e: i32, digits: u64, last: i32) -> bool {
    let t = last - 1;
    if e != t {
        return false;
    }
    let odd = 2 * u128::from(digits) + 1;
    let five = |k: i32| 5u128.checked_pow(k.unsigned_abs());
    if t >= 0 {
        five(t + 1).and_then(|f| odd.checked_mul(f)) == Some(u128::from(m))
    } else {
        five(-t - 1).and_then(|f| u128::from(m).checked_mul(f)) == Some(odd)
    }
}

/// The number zmij wrote (`12.5`, `0.001`, `100.0`, `1.5e-7`, `-1e+20`):
/// its sign, its digits without trailing zeros (at most 17), and the power
/// of ten of the last of them.
fn decimal(text: &[u8]) -> (bool, u64, i32) {
    let (negative, text) = match text.split_first() {
        Some((b'-', rest)) => (true, rest),
        _ => (false, text),
    };
    let mut digits = 0u64;
    let mut last = 0i32;
    let mut after_point = false;
    let mut i = 0;
    while let Some(&b) = text.get(i) {
        match b {
            b'0'..=b'9' => {
                digits = digits * 10 + u64::from(b - b'0');
                if after_point {
                    last -= 1;
                }
            }
            b'.' => after_point = true,
            _ => break,
        }
        i += 1;
    }
    if let Some(b'e') = text.get(i) {
        let (minus, exponent) = match text.get(i + 1) {
            Some(b'-') => (true, &text[i + 2..]),
            Some(b'+') => (false, &text[i + 2..]),
            _ => (false, &text[i + 1..]),
        };
        let magnitude = exponent
            .iter()
            .fold(0i32, |e, &d| e * 10 + i32::from(d.wrapping_sub(b'0')));
        last += if minus { -magnitude } else { magnitude };
    }
    while digits != 0 && digits.is_multiple_of(10) {
        digits /= 10;
        last += 1;
    }
    (negative, digits, last)
}

/// Appends `digits * 10^last` in plain decimal notation, as `Display` does:
/// `0.000ddd` below 1, `ddd000` for an integer, `dd.ddd` otherwise.
fn push_digits(out: &mut Vec<u8>, negative: bool, digits: u64, last: i32) {
    let mut buf = itoa::Buffer::new();
    let text = buf.format(digits).as_bytes();
    let n = text.len() as i64;
    // The value is 0.DIGITS * 10^point.
    let point = i64::from(last) + n;
    if negative {
        out.push(b'-');
    }
    if digits == 0 {
        out.push(b'0');
    } else if point <= 0 {
        out.extend_from_slice(b"0.");
        out.resize(out.len() + point.unsigned_abs() as usize, b'0');
        out.extend_from_slice(text);
    } else if point >= n {
        out.extend_from_slice(text);
        out.resize(out.len() + (point - n) as usize, b'0');
    } else {
        let (int, frac) = text.split_at(point as usize);
        out.extend_from_slice(int);
        out.push(b'.');
        out.extend_from_slice(frac);
    }
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

    /// `push_value`'s text of `v`, and `Display`'s.
    fn both<F: Real>(v: F, ours: &mut Vec<u8>, theirs: &mut String) {
        use std::fmt::Write as _;
        ours.clear();
        push_value(ours, v);
        theirs.clear();
        let _ = write!(theirs, "{v}");
    }

    fn same_as_display<F: Real>(v: F) {
        let (mut ours, mut theirs) = (Vec::new(), String::new());
        both(v, &mut ours, &mut theirs);
        assert_eq!(std::str::from_utf8(&ours), Ok(theirs.as_str()), "{v:?}");
    }

    /// Bit patterns near the layout's and the digits' edges: zeros,
    /// subnormals, the extremes, integers, powers of two and of ten and
    /// their neighbours (where `Display` switches from `0.000ddd` to digits
    /// and where zmij switches to an exponent), each with its negative.
    fn edge_values() -> (Vec<f32>, Vec<f64>) {
        let mut f = vec![
            0.0,
            f32::MIN_POSITIVE,
            f32::MAX,
            f32::EPSILON,
            f32::from_bits(1),
            f32::from_bits(0x007f_ffff),
            0.1,
            0.3,
            1.0 / 3.0,
            16_777_216.0,
            16_777_217.0,
        ];
        let mut d = vec![
            0.0,
            f64::MIN_POSITIVE,
            f64::MAX,
            f64::EPSILON,
            f64::from_bits(1),
            f64::from_bits(0x000f_ffff_ffff_ffff),
            0.1,
            0.3,
            1.0 / 3.0,
            9_007_199_254_740_992.0,
            9_007_199_254_740_993.0,
            5e-324,
            1.7976931348623157e308,
        ];
        for e in -45..=38 {
            f.push(format!("1e{e}").parse().unwrap());
            f.push(format!("1.5e{e}").parse().unwrap());
            f.push(format!("9.999999e{e}").parse().unwrap());
        }
        for e in -324..=308 {
            d.push(format!("1e{e}").parse().unwrap());
            d.push(format!("1.25e{e}").parse().unwrap());
            d.push(format!("9.999999999999999e{e}").parse().unwrap());
        }
        for e in -149..128 {
            f.push(2f32.powi(e));
        }
        for e in -1074..1024 {
            d.push(2f64.powi(e));
        }
        for i in 0..2000u32 {
            f.push(i as f32);
            d.push(f64::from(i) * 1_000_003.0);
        }
        let n32 = f.len();
        for i in 0..n32 {
            let b = f[i].to_bits();
            for u in [1, 2, 3] {
                f.push(f32::from_bits(b.wrapping_add(u)));
                f.push(f32::from_bits(b.wrapping_sub(u)));
            }
        }
        let n64 = d.len();
        for i in 0..n64 {
            let b = d[i].to_bits();
            for u in [1, 2, 3] {
                d.push(f64::from_bits(b.wrapping_add(u)));
                d.push(f64::from_bits(b.wrapping_sub(u)));
            }
        }
        f.retain(|v| v.is_finite());
        d.retain(|v| v.is_finite());
        let neg32: Vec<f32> = f.iter().map(|v| -v).collect();
        let neg64: Vec<f64> = d.iter().map(|v| -v).collect();
        f.extend(neg32);
        d.extend(neg64);
        (f, d)
    }

    /// Whether zmij's digits of `v` are a tie moved up by `push_value`.
    fn is_tie(v: f64, text: &str) -> bool {
        let (m, e) = odd_significand(v);
        let (_, digits, last) = decimal(text.as_bytes());
        m != 0 && tie(m, e, digits, last)
    }

    #[test]
    fn values_are_written_as_display_writes_them() {
        let (f, d) = edge_values();
        assert!(f.len() > 10_000 && d.len() > 20_000);
        for v in f {
            same_as_display(v);
        }
        for v in d {
            same_as_display(v);
        }
        // Random bit patterns (every exponent and sign) and random values
        // of the sizes data holds.
        let mut rng = crate::train::shuffle::SplitMix64::new(7);
        let (mut ours, mut theirs) = (Vec::new(), String::new());
        let (mut ties32, mut ties64) = (0, 0);
        for _ in 0..200_000 {
            let bits = rng.next_u64();
            for v in [
                f64::from_bits(bits),
                (bits >> 11) as f64 / (1u64 << 53) as f64 - 0.5,
            ] {
                if v.is_finite() {
                    both(v, &mut ours, &mut theirs);
                    assert_eq!(ours, theirs.as_bytes(), "{v:?}");
                }
            }
            // Dyadic values with few binary places, where ties live.
            let places = (bits & 63) as i32;
            let odd = (bits >> 8) | 1;
            for v in [
                (odd >> 11) as f64 * 2f64.powi(-places),
                (odd >> (11 + ((bits >> 58) & 31))) as f64 * 2f64.powi(places - 30),
            ] {
                both(v, &mut ours, &mut theirs);
                assert_eq!(ours, theirs.as_bytes(), "{v:?}");
                ties64 += usize::from(is_tie(v, zmij::Buffer::new().format_finite(v)));
            }
            for v in [
                (odd >> 40) as f32 * 2f32.powi(-places / 2),
                (odd >> (40 + (bits >> 60))) as f32 * 2f32.powi(places / 2 - 20),
            ] {
                both(v, &mut ours, &mut theirs);
                assert_eq!(ours, theirs.as_bytes(), "{v:?}");
                ties32 += usize::from(is_tie(f64::from(v), zmij::Buffer::new().format_finite(v)));
            }
            for v in [
                f32::from_bits(bits as u32),
                (bits >> 40) as f32 / 16_777_216.0,
            ] {
                if v.is_finite() {
                    both(v, &mut ours, &mut theirs);
                    assert_eq!(ours, theirs.as_bytes(), "{v:?}");
                }
            }
        }
        // The ties, where zmij's digits are not `Display`'s, were met.
        assert!(ties32 > 100 && ties64 > 100, "{ties32} {ties64}");
    }

    #[test]
    fn exponents_are_laid_out_in_plain_decimals() {
        let plain = |text: &str| {
            let (negative, digits, last) = decimal(text.as_bytes());
            let mut out = Vec::new();
            push_digits(&mut out, negative, digits, last);
            String::from_utf8(out).unwrap()
        };
        assert_eq!(plain("1e-7"), "0.0000001");
        assert_eq!(plain("-1.25e-7"), "-0.000000125");
        assert_eq!(plain("1e+20"), "100000000000000000000");
        assert_eq!(plain("1.5e+20"), "150000000000000000000");
        assert_eq!(plain("1.2345e+2"), "123.45");
        assert_eq!(plain("1.2345e+0"), "1.2345");
        assert_eq!(plain("1.2345e-1"), "0.12345");
        assert_eq!(plain("100.0"), "100");
        assert_eq!(plain("-0.0"), "-0");
        assert_eq!(plain("0.015"), "0.015");
        assert_eq!(plain("12340000000.0"), "12340000000");
    }

    /// Values exactly halfway between two shortest candidates: `Display`
    /// takes the larger, zmij the even one.
    #[test]
    fn ties_go_up_as_in_display() {
        let mut out = Vec::new();
        push_value(&mut out, 2f32.powi(-12));
        assert_eq!(out, b"0.00024414063");
        assert_eq!(format!("{}", 2f32.powi(-12)), "0.00024414063");
        assert!(tie(1, -12, 24414062, -11));
        assert!(!tie(1, -12, 24414063, -11));
        // 0.5 is exact: its digit is not a midpoint.
        assert!(!tie(1, -1, 5, -1));
    }

    /// Every finite f32 (2^32 bit patterns less the non-finite ones), on
    /// all cores: minutes in release, so run by hand:
    /// `cargo test --release --lib every_f32 -- --ignored`.
    #[test]
    #[ignore]
    fn every_f32_is_written_as_display_writes_it() {
        use rayon::prelude::*;
        let mismatches: Vec<u32> = (0u32..1 << 16)
            .into_par_iter()
            .flat_map_iter(|high| {
                let (mut ours, mut theirs) = (Vec::new(), String::new());
                let mut bad = Vec::new();
                for low in 0..1u32 << 16 {
                    let v = f32::from_bits(high << 16 | low);
                    if v.is_finite() {
                        both(v, &mut ours, &mut theirs);
                        if ours != theirs.as_bytes() {
                            bad.push(v.to_bits());
                        }
                    }
                }
                bad
            })
            .collect();
        assert!(
            mismatches.is_empty(),
            "{} differ: {:x?}",
            mismatches.len(),
            &mismatches[..mismatches.len().min(20)]
        );
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
