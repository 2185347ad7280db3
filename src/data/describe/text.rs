//! A data file's description as text: the lines `perceptron info` prints
//! unless asked for JSON, here beside the record so that every front end
//! prints the same words. The first lines, the file's name and how it was
//! read (`data`, `indices`), are worded as the training report words them
//! ([`crate::data::notes`]).

use super::Description;
use crate::text::{Quoted, count, summary_line as line};

impl Description {
    /// The human-readable description: the file's own lines in the words
    /// of the training report, then the rest ([`Description::render_body`]).
    pub fn render(&self) -> String {
        let d = self;
        let mut s = String::new();
        line(
            &mut s,
            "data",
            format!(
                "{} ({}{})",
                d.data.display(),
                d.format.name(),
                crate::data::notes::header_note(d.header_line)
                    + &crate::data::notes::ignored_note(&d.ignored_columns)
            ),
        );
        crate::data::notes::indices_line(&mut s, d.index_base_why.as_deref());
        d.render_body(&mut s);
        s
    }

    /// The human-readable description below the file's own lines, one
    /// `key  value` line per fact, appended to `s`.
    pub fn render_body(&self, s: &mut String) {
        let r = self;
        line(
            s,
            "shape",
            format!(
                "{} x {}; {} (density {:.2}%)",
                count(r.rows, "row"),
                count(r.features, "feature"),
                count(r.nonzeros, "non-zero"),
                100.0 * r.density
            ),
        );
        line(s, "storage", storage_text(r));
        let values: Vec<String> = r
            .labels
            .iter()
            .map(|l| format!("{} ({})", Quoted(&l.label), count(l.rows, "row")))
            .collect();
        line(
            s,
            "labels",
            format!("{} distinct: {}", r.labels.len(), values.join(", ")),
        );
        classes_line(s, r);
        line(
            s,
            "radius",
            format!(
                "D = max ||x~|| = {} with the bias feature 1 appended; max ||x|| = {} without it",
                crate::text::fmt_g(r.radius_with_bias),
                crate::text::fmt_g(r.radius_without_bias)
            ),
        );
        if let (Some(lo), Some(hi)) = (r.min_value, r.max_value) {
            let (lo, hi) = (exact(lo), exact(hi));
            line(
                s,
                "values",
                if r.sparse {
                    format!("min {lo}, max {hi} (implicit zeros of sparse rows included)")
                } else {
                    format!("min {lo}, max {hi}")
                },
            );
        }
        for w in &r.warnings {
            line(s, "warning", w.clone());
        }
    }
}

/// A value exactly as read (its shortest decimal), in scientific notation
/// where fmt_g uses it too, so that 1e30 does not print 31 digits.
fn exact(v: f64) -> String {
    if v != 0.0 && (v.abs() >= 1e7 || v.abs() < 1e-3) {
        format!("{v:e}")
    } else {
        v.to_string()
    }
}

/// The `storage` line's text: the layout and its size, beside what the
/// other layout would take.
fn storage_text(r: &Description) -> String {
    let (this, other) = if r.sparse {
        ("sparse (CSR)", "dense")
    } else {
        ("dense", "sparse (CSR)")
    };
    format!(
        "{this} {}, {} in memory ({other} would take {})",
        r.precision,
        crate::text::bytes(r.storage_bytes as u64),
        crate::text::bytes(r.other_layout_bytes as u64)
    )
}

/// The `classes` line: how training would map the labels, or why it would
/// refuse them.
fn classes_line(s: &mut String, r: &Description) {
    match (&r.mapping, &r.mapping_error) {
        (Ok(m), _) => line(
            s,
            "classes",
            format!(
                "+1 = {} ({}), -1 = {} ({})",
                Quoted(&m.positive_label),
                count(m.positive_rows, "row"),
                match &m.negative_label {
                    Some(n) => Quoted(n).to_string(),
                    None => "the rest".to_owned(),
                },
                count(m.negative_rows, "row")
            ),
        ),
        (Err(e), words) => line(
            s,
            "classes",
            format!(
                "train would refuse: {}",
                words.clone().unwrap_or_else(|| e.to_string())
            ),
        ),
    }
}
