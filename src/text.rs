//! Small helpers for the English of messages and reports.

/// A label (a class's text, read from a data file) in double quotes for
/// reports and messages, its control characters, quotes and backslashes
/// escaped (`"a\tb"`, `"\u{1b}[31m"`): no label can break a report's
/// lines or columns, or send a sequence to the terminal.
pub struct Quoted<'a>(pub &'a str);

impl std::fmt::Display for Quoted<'_> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{:?}", self.0)
    }
}

/// A label as a line of `predict` prints it: as it is, unless it holds a
/// control character (a tab, a line break, an escape) or starts with a
/// double quote; then quoted as [`Quoted`] writes it. Ordinary labels are
/// printed unchanged, and no label can break the one-label-a-line and
/// tab-separated layouts.
pub fn printed_label(label: &str) -> std::borrow::Cow<'_, str> {
    if label.chars().any(char::is_control) || label.starts_with('"') {
        std::borrow::Cow::Owned(Quoted(label).to_string())
    } else {
        std::borrow::Cow::Borrowed(label)
    }
}

/// Counts of any unsigned integer type.
pub trait Count: Copy + std::fmt::Display + PartialEq {
    const ONE: Self;
}

macro_rules! counts {
    ($($t:ty),*) => { $(impl Count for $t { const ONE: Self = 1; })* };
}
counts!(u8, u16, u32, u64, usize);

/// One `key  value` line of a summary (`train`, `info`, `eval`, `split`,
/// `cv`, `gen`): the keys in a column of ten.
pub fn summary_line(s: &mut String, key: &str, value: String) {
    s.push_str(&format!("{key:<10}  {value}\n"));
}

/// `n` and the noun, singular for 1: "1 row", "2 rows", "0 classes".
pub fn count<N: Count>(n: N, noun: &str) -> String {
    if n == N::ONE {
        format!("1 {noun}")
    } else if noun.ends_with(['s', 'x']) {
        // "class"; the nouns used here need nothing subtler.
        format!("{n} {noun}es")
    } else {
        format!("{n} {noun}s")
    }
}

/// The noun alone, plural unless `n` is 1: "row" or "rows".
pub fn noun<N: Count>(n: N, noun: &str) -> String {
    let text = count(n, noun);
    match text.split_once(' ') {
        Some((_, rest)) => rest.to_owned(),
        None => text,
    }
}

/// Abbreviates a long list: the first 10 and the last 5 values.
pub fn abbreviate(values: &[u64]) -> String {
    let show = |v: &[u64]| v.iter().map(u64::to_string).collect::<Vec<_>>().join(" ");
    if values.len() <= 16 {
        show(values)
    } else {
        format!(
            "{} ... ({} more) ... {}",
            show(&values[..10]),
            values.len() - 15,
            show(&values[values.len() - 5..])
        )
    }
}

/// A size in binary units, the one unit of every report: `512 bytes`,
/// `449.2 KiB`, `64.8 MiB`, `1.5 GiB`.
pub fn bytes(n: u64) -> String {
    const UNITS: [&str; 5] = ["bytes", "KiB", "MiB", "GiB", "TiB"];
    let mut v = n as f64;
    let mut u = 0;
    while v >= 1024.0 && u + 1 < UNITS.len() {
        v /= 1024.0;
        u += 1;
    }
    if u == 0 {
        count(n, "byte")
    } else {
        format!("{v:.1} {}", UNITS[u])
    }
}

/// Six significant figures, in scientific notation outside [1e-3, 1e7).
pub fn fmt_g(v: f64) -> String {
    if v == 0.0 || !v.is_finite() {
        return v.to_string();
    }
    if v.abs() >= 1e7 || v.abs() < 1e-3 {
        return format!("{v:.5e}");
    }
    let decimals = (5 - v.abs().log10().floor() as i32).max(0) as usize;
    let s = format!("{v:.decimals$}");
    if s.contains('.') {
        s.trim_end_matches('0').trim_end_matches('.').to_owned()
    } else {
        s
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn one_is_singular_everything_else_plural() {
        assert_eq!(count(1u64, "row"), "1 row");
        assert_eq!(count(0u64, "row"), "0 rows");
        assert_eq!(count(2usize, "epoch"), "2 epochs");
        assert_eq!(count(3u32, "class"), "3 classes");
        assert_eq!(count(1u32, "class"), "1 class");
        assert_eq!(noun(1u8, "mistake"), "mistake");
        assert_eq!(noun(7u8, "mistake"), "mistakes");
    }

    #[test]
    fn sizes_are_in_binary_units() {
        assert_eq!(bytes(1), "1 byte");
        assert_eq!(bytes(1023), "1023 bytes");
        assert_eq!(bytes(1024), "1.0 KiB");
        assert_eq!(bytes(460_000), "449.2 KiB");
        assert_eq!(bytes(3 << 30), "3.0 GiB");
    }
}
