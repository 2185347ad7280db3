//! What an online run reports, as text or JSON.

use crate::text::Quoted;
use serde::Serialize;

use crate::data::Format;
use crate::float::Precision;
use crate::online::OnlineState;

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

/// The human-readable summary.
pub(super) fn render(r: &OnlineReport) -> String {
    let fmt_g = crate::text::fmt_g;
    let mut s = String::new();
    let mut line = |k: &str, v: String| s.push_str(&format!("{k:<11} {v}\n"));
    line(
        "data",
        format!(
            "{} ({}, {}, {})",
            r.data,
            r.format.name(),
            r.precision,
            if r.bias { "with bias" } else { "no bias" }
        ),
    );
    let how = match r.label_rule {
        "model" => " (the --init model's)",
        "positive" => " (--positive: every other label is -1)",
        _ => " (numeric labels: 1 is +1; 0 and -1 are -1)",
    };
    line(
        "labels",
        format!(
            "+1 = {}, -1 = {}{how}",
            Quoted(&r.positive_label),
            Quoted(&r.negative_label)
        ),
    );
    line(
        "start",
        match &r.init {
            Some(p) => format!("the weights of {p} ({} features)", r.init_features),
            None => "w~ = 0".into(),
        },
    );
    let why = match r.state {
        OnlineState::Ended => "the input ended",
        OnlineState::Interrupted => "interrupted",
        OnlineState::Closed => "the reader of the predictions went away",
        OnlineState::Running => "running",
    };
    line("examples", format!("{} ({why})", r.examples));
    line(
        "features",
        format!("{} ({} beyond the start)", r.features, r.features_added),
    );
    let n = r.examples.max(1) as f64;
    let rule = format!(
        "y w~.x~ <= {}",
        r.margin_threshold.as_deref().unwrap_or("0")
    );
    line(
        "mistakes",
        format!(
            "M = {} ({:.2}% of examples): updates, where {rule}",
            r.total_mistakes,
            100.0 * r.total_mistakes as f64 / n
        ),
    );
    line(
        "predictions",
        format!(
            "{} of {} right ({:.2}%), each made before learning from its example",
            r.examples - r.wrong_predictions,
            r.examples,
            100.0 * r.prediction_accuracy
        ),
    );
    line(
        "radius",
        format!(
            "D = max ||x~|| = {} over the examples seen",
            fmt_g(r.radius)
        ),
    );
    if r.report_bound {
        match (r.second_pass_rows, r.margin) {
            (None, _) => line(
                "margin",
                "not computed: the run stopped before the end of the input".into(),
            ),
            (Some(_), Some(g)) => {
                line(
                    "margin",
                    format!(
                        "gamma = min y w~.x~ / ||w~|| = {} for the final weights over all {} examples (second pass)",
                        fmt_g(g),
                        r.examples
                    ),
                );
                let text = match r.mistake_bound {
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
                };
                line("bound", text);
            }
            (Some(rows), None) => line(
                "margin",
                format!(
                    "none: the final weights do not separate the examples ({} of {rows} \
                     predicted right, or one on the boundary), so the theorem gives no bound",
                    r.second_pass_correct.unwrap_or(0),
                ),
            ),
        }
    }
    line(
        "model",
        r.model
            .clone()
            .unwrap_or_else(|| "not saved (no -o)".into()),
    );
    if let Some(p) = &r.snapshot {
        line("snapshot", format!("{p} (written {} times)", r.snapshots));
    }
    line("time", format!("{:.3} s", r.seconds));
    line("memory", crate::memory::describe(r.peak_memory_bytes));
    s
}
