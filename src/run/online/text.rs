//! The online run's summary as text: the lines `perceptron online` prints
//! unless asked for JSON, here beside the record so that every front end
//! prints the same words.

use super::OnlineSummary;
use crate::online::OnlineState;
use crate::text::Quoted;

/// One `key value` line of the summary, the keys in a column of eleven.
fn line(s: &mut String, k: &str, v: String) {
    s.push_str(&format!("{k:<11} {v}\n"));
}

impl OnlineSummary {
    /// The human-readable summary, one `key value` line per figure.
    pub fn render(&self) -> String {
        let r = self;
        let fmt_g = crate::text::fmt_g;
        let mut s = String::new();
        line(
            &mut s,
            "data",
            format!(
                "{} ({}, {}, {})",
                r.data,
                r.format.name(),
                r.precision,
                if r.bias { "with bias" } else { "no bias" }
            ),
        );
        line(&mut s, "labels", labels_text(r));
        line(
            &mut s,
            "start",
            match &r.init {
                Some(p) => format!("the weights of {p} ({} features)", r.init_features),
                None => "w~ = 0".into(),
            },
        );
        line(
            &mut s,
            "examples",
            format!("{} ({})", r.examples, why_ended(r.state)),
        );
        line(
            &mut s,
            "features",
            format!("{} ({} beyond the start)", r.features, r.features_added),
        );
        mistake_lines(&mut s, r);
        line(
            &mut s,
            "radius",
            format!(
                "D = max ||x~|| = {} over the examples seen",
                fmt_g(r.radius)
            ),
        );
        if r.report_bound {
            theorem_lines(&mut s, r);
        }
        line(
            &mut s,
            "model",
            r.model
                .clone()
                .unwrap_or_else(|| "not saved (no -o)".into()),
        );
        if let Some(p) = &r.snapshot {
            line(
                &mut s,
                "snapshot",
                format!("{p} (written {} times)", r.snapshots),
            );
        }
        line(&mut s, "time", format!("{:.3} s", r.seconds));
        line(
            &mut s,
            "memory",
            crate::memory::describe(r.peak_memory_bytes),
        );
        s
    }
}

/// The `labels` line's text: the map to -1/+1, and where it came from.
fn labels_text(r: &OnlineSummary) -> String {
    let how = match r.label_rule {
        "model" => " (the --init model's)",
        "positive" => " (--positive: every other label is -1)",
        _ => " (numeric labels: 1 is +1; 0 and -1 are -1)",
    };
    format!(
        "+1 = {}, -1 = {}{how}",
        Quoted(&r.positive_label),
        Quoted(&r.negative_label)
    )
}

/// Why the run stopped reading, for the `examples` line.
fn why_ended(state: OnlineState) -> &'static str {
    match state {
        OnlineState::Ended => "the input ended",
        OnlineState::Interrupted => "interrupted",
        OnlineState::Closed => "the reader of the predictions went away",
        OnlineState::Running => "running",
    }
}

/// The `mistakes` (the updates, M) and `predictions` (made before each
/// update) lines: online learning counts both.
fn mistake_lines(s: &mut String, r: &OnlineSummary) {
    let n = r.examples.max(1) as f64;
    let rule = format!(
        "y w~.x~ <= {}",
        r.margin_threshold.as_deref().unwrap_or("0")
    );
    line(
        s,
        "mistakes",
        format!(
            "M = {} ({:.2}% of examples): updates, where {rule}",
            r.total_mistakes,
            100.0 * r.total_mistakes as f64 / n
        ),
    );
    line(
        s,
        "predictions",
        format!(
            "{} of {} right ({:.2}%), each made before learning from its example",
            r.examples - r.wrong_predictions,
            r.examples,
            100.0 * r.prediction_accuracy
        ),
    );
}

/// The `margin` and `bound` lines of --report-bound: what the second
/// pass found, and what the convergence theorem then says.
fn theorem_lines(s: &mut String, r: &OnlineSummary) {
    match (r.second_pass_rows, r.margin) {
        (None, _) => line(
            s,
            "margin",
            "not computed: the run stopped before the end of the input".into(),
        ),
        (Some(_), Some(g)) => {
            line(
                s,
                "margin",
                format!(
                    "gamma = min y w~.x~ / ||w~|| = {} for the final weights over all {} examples (second pass)",
                    crate::text::fmt_g(g),
                    r.examples
                ),
            );
            line(s, "bound", bound_text(r));
        }
        (Some(rows), None) => line(
            s,
            "margin",
            format!(
                "none: the final weights do not separate the examples ({} of {rows} \
                 predicted right, or one on the boundary), so the theorem gives no bound",
                r.second_pass_correct.unwrap_or(0),
            ),
        ),
    }
}

/// The `bound` line's text for final weights that separate the examples:
/// none after --init, else the theorem's bound for the update rule.
fn bound_text(r: &OnlineSummary) -> String {
    let fmt_g = crate::text::fmt_g;
    match r.mistake_bound {
        None => "none: the run started from --init, and the theorem bounds runs \
                 that start from w~ = 0"
            .to_owned(),
        Some(b) => {
            let name = if r.margin_threshold.is_none() {
                "(D/gamma)^2"
            } else {
                "(D^2 + 2 tau)/gamma^2"
            };
            let verdict = if r.bound_holds == Some(true) {
                "the convergence theorem's bound holds"
            } else {
                "EXCEEDED (only possible through rounding)"
            };
            format!(
                "{name} = {}, and M = {} <= {}: {verdict}",
                fmt_g(b),
                r.total_mistakes,
                fmt_g(b)
            )
        }
    }
}
