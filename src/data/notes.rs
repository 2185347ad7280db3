//! How a data file was read, in the words the summaries' `data` lines use
//! (`perceptron train`'s and `perceptron info`'s alike): the CSV header
//! skipped, the columns left out, the LIBSVM indices' base.

/// The `indices` line of LIBSVM data: its base and why.
pub fn indices_line(s: &mut String, why: Option<&str>) {
    if let Some(why) = why {
        crate::text::summary_line(s, "indices", why.to_owned());
    }
}

/// ", ignoring \"id\", column 4" when columns were left out.
pub fn ignored_note(names: &[String]) -> String {
    if names.is_empty() {
        return String::new();
    }
    format!(", ignoring {}", names.join(", "))
}

/// ", header on line N" when a header line was skipped.
pub fn header_note(line: Option<u64>) -> String {
    line.map(|n| format!(", header on line {n}"))
        .unwrap_or_default()
}
