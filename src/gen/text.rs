//! The gen report as text: the lines a person reads after `perceptron gen`
//! (the data written, the planted margin and its bound, the labels, the
//! time).

use super::GenReport;
use crate::text::{count, fmt_g};

impl GenReport {
    /// The human-readable summary (`perceptron gen`'s, without `--json`).
    pub fn render(&self) -> String {
        let r = self;
        let s = &r.summary;
        let mut out = String::new();
        let mut line = |k: &str, v: String| crate::text::summary_line(&mut out, k, v);
        line(
            "data",
            format!(
                "{} ({}, {} x {}, {}, {}), {}, {}",
                r.output,
                r.format.name(),
                count(s.rows, "row"),
                count(s.cols, "feature"),
                if r.sparse { "sparse" } else { "dense" },
                r.precision,
                count(s.nnz, "stored value"),
                crate::text::bytes(s.bytes)
            ),
        );
        line(
            "planted",
            format!(
                "margin gamma = {}, radius R = {}{}: the perceptron makes at most (R/gamma)^2 = {} \
             mistakes",
                fmt_g(r.planted_margin),
                fmt_g(r.radius),
                if r.bias {
                    " (x~ = [x, 1])"
                } else {
                    " (no bias)"
                },
                fmt_g(r.mistake_bound)
            ),
        );
        let noise = if s.flipped > 0 {
            format!(
                "; noise {} flipped {}, so the data is NOT separable",
                fmt_g(r.noise),
                count(s.flipped, "label")
            )
        } else {
            "; separable".to_owned()
        };
        line(
            "labels",
            format!(
                "+1 ({}), -1 ({}){noise}",
                count(s.positive, "row"),
                count(s.rows - s.positive, "row")
            ),
        );
        line(
            "time",
            format!(
                "{:.3} s ({} rows/s, {:.1} MB/s)",
                s.seconds,
                fmt_g(r.rows_per_second),
                r.megabytes_per_second
            ),
        );
        out
    }
}
