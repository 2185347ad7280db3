//! What an online run reports, as text or JSON.

use crate::text::Quoted;
use serde::Serialize;

use crate::data::Format;
use crate::float::Precision;
use crate::online::OnlineState;
use crate::run::online::OnlineSummary;

/// The summary of an online run, printed as text or JSON.
#[derive(Serialize, Debug)]
pub struct OnlineReport {
    pub data: String,
    pub format: Format,
    pub precision: Precision,
    pub bias: bool,
    pub positive_label: String,
    pub negative_label: String,
    /// How labels map to -1/+1: `model` (the --init model's), `positive`
    /// (--positive) or `numeric` (-1, +1, 0, 1).
    pub label_rule: &'static str,
    pub init: Option<String>,
    /// Features of the starting weights (0 from w = 0).
    pub init_features: usize,
    pub state: OnlineState,
    pub examples: u64,
    pub features: usize,
    pub features_added: usize,
    pub margin_threshold: Option<String>,
    /// Updates (y w~.x~ <= tau), M of the theorem.
    pub total_mistakes: u64,
    /// Predictions, each made before learning from its example, that were
    /// wrong.
    pub wrong_predictions: u64,
    pub prediction_accuracy: f64,
    /// D = max ||x~|| over the examples seen.
    pub radius: f64,
    /// Whether a second pass was asked for (--report-bound).
    pub report_bound: bool,
    /// The second pass's examples and the right predictions of the final
    /// weights among them (absent when it did not run).
    pub second_pass_rows: Option<u64>,
    pub second_pass_correct: Option<u64>,
    /// gamma of the final weights over every example (second pass).
    pub margin: Option<f64>,
    pub mistake_bound: Option<f64>,
    pub bound_holds: Option<bool>,
    pub model: Option<String>,
    pub snapshot: Option<String>,
    pub snapshots: u64,
    pub seconds: f64,
    pub peak_memory_bytes: Option<u64>,
}

impl OnlineReport {
    /// The report of the run `s` summarises; `model` and `snapshot` are
    /// where its model was saved, as shown.
    pub(super) fn new(s: OnlineSummary, model: Option<String>, snapshot: Option<String>) -> Self {
        OnlineReport {
            data: s.data,
            format: s.format,
            precision: s.precision,
            bias: s.bias,
            positive_label: s.positive_label,
            negative_label: s.negative_label,
            label_rule: s.label_rule,
            init: s.init,
            init_features: s.init_features,
            state: s.state,
            examples: s.examples,
            features: s.features,
            features_added: s.features_added,
            margin_threshold: s.margin_threshold,
            total_mistakes: s.total_mistakes,
            wrong_predictions: s.wrong_predictions,
            prediction_accuracy: s.prediction_accuracy,
            radius: s.radius,
            report_bound: s.report_bound,
            second_pass_rows: s.second_pass_rows,
            second_pass_correct: s.second_pass_correct,
            margin: s.margin,
            mistake_bound: s.mistake_bound,
            bound_holds: s.bound_holds,
            model,
            snapshot,
            snapshots: s.snapshots,
            seconds: s.seconds,
            peak_memory_bytes: s.peak_memory_bytes,
        }
    }
}

/// One `key value` line of the summary, the keys in a column of eleven.
fn line(s: &mut String, k: &str, v: String) {
    s.push_str(&format!("{k:<11} {v}\n"));
}

/// The human-readable summary.
pub(super) fn render(r: &OnlineReport) -> String {
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

/// The `labels` line's text: the map to -1/+1, and where it came from.
fn labels_text(r: &OnlineReport) -> String {
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
fn mistake_lines(s: &mut String, r: &OnlineReport) {
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
fn theorem_lines(s: &mut String, r: &OnlineReport) {
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
fn bound_text(r: &OnlineReport) -> String {
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
