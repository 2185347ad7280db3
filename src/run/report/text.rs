//! The train report as text: the lines a person reads, binary and
//! one-vs-rest, with the theory, early stopping and what a run on several
//! processes adds.

use crate::data::ScaleKind;
use crate::data::notes::{header_note, ignored_note, indices_line};
use crate::text::Quoted;
use crate::text::{abbreviate, count, fmt_g};
use crate::train::{EarlyStopReport, Variant};

use super::{ClassReport, ReportLabels, TrainReport};
use crate::text::summary_line as line;

/// What a run on several processes adds to its summary's text, in the
/// words of the distributed layer's report, which makes it (the run layer
/// knows nothing of processes).
pub struct OnProcesses {
    /// The `processes` line, after the `backend` line.
    pub processes: String,
    /// Parameter mixing's bound, which the `bound` line then says instead
    /// of the single-process theorem's.
    pub mixing_bound: Option<MixingBound>,
}

/// The bound of parameter mixing, as the `bound` line says it.
pub struct MixingBound {
    /// The mixing-weighted mistakes sum_n sum_i mu_i k_i.
    pub weighted_mistakes: f64,
    /// Whether they kept to (D/gamma)^2.
    pub holds: bool,
}

/// "; 1.41 s in all (reading the data 1.10 s)": the whole command, when
/// measured, with the engine's start where it took a millisecond or more
/// (a device's), and a device's start beside the CPU engine, which the
/// run did not wait for (`auto`'s pair).
fn whole_run(r: &TrainReport) -> String {
    if r.run_seconds <= 0.0 {
        return String::new();
    }
    let mut start = String::new();
    if r.engine_start_seconds >= 1e-3 {
        start += &format!(", starting the engine {:.3} s", r.engine_start_seconds);
    }
    let beside = r.engine_stats.start_beside_seconds;
    if beside >= 1e-3 {
        start += &format!("; the GPU started beside the CPU engine in {beside:.3} s");
    }
    format!(
        "; {:.3} s in all (reading the data {:.3} s{start})",
        r.run_seconds, r.reading_seconds
    )
}

/// The human-readable summary of a run in one process.
pub fn render(r: &TrainReport) -> String {
    render_with(r, None)
}

/// The human-readable summary of a run on several processes.
pub fn render_on_processes(r: &TrainReport, processes: &OnProcesses) -> String {
    render_with(r, Some(processes))
}

/// The summary, with the lines of the processes when there were several.
fn render_with(r: &TrainReport, p: Option<&OnProcesses>) -> String {
    match &r.labels {
        ReportLabels::Binary {
            positive_label,
            negative_label,
            positive_rows,
            negative_rows,
        } => render_binary(
            r,
            p,
            positive_label,
            negative_label,
            *positive_rows,
            *negative_rows,
        ),
        ReportLabels::OneVsRest { classes } => render_ovr(r, p, classes),
    }
}

/// The engines of the run, as the summary names them.
fn engines(r: &TrainReport) -> String {
    let names: Vec<&str> = r.backend.engines.iter().map(|e| e.name.as_str()).collect();
    names.join(", then ")
}

/// " (note)" when the backend's choice has one.
fn note(r: &TrainReport) -> String {
    r.backend
        .note
        .as_ref()
        .map(|n| format!(" ({n})"))
        .unwrap_or_default()
}

/// The `scaling` line, for a run with `--scale`.
fn scaling_line(s: &mut String, scaling: Option<ScaleKind>) {
    if let Some(k) = scaling {
        line(
            s,
            "scaling",
            format!(
                "{}: {}, statistics of the training rows; the loop trained on the scaled \
                 rows (D and gamma below are theirs), and predict and eval apply the same scaling",
                k.name(),
                k.formula()
            ),
        );
    }
}

/// The `epochs` line's verdict for a run the early-stopping rule ended.
pub(super) fn stopped_early(e: &EarlyStopReport) -> String {
    format!(
        "stopped early: {} in a row did not beat the best {} by {} or more",
        count(e.n_iter_no_change, "epoch"),
        if e.validation_rows.is_some() {
            "held-out accuracy"
        } else if !e.mean_loss.is_empty() {
            "mean loss"
        } else {
            "mistakes per row"
        },
        fmt_g(e.tol)
    )
}

/// The `held-out` line (with --validation-fraction) or the `early stop`
/// line (on the training mistakes or mean loss), for a run with early
/// stopping.
fn early_stopping_lines(s: &mut String, r: &TrainReport) {
    let Some(e) = &r.early_stopping else {
        return;
    };
    let per_epoch = |v: &[f64]| {
        let shown: Vec<String> = v.iter().map(|x| format!("{:.4}", x)).collect();
        if shown.len() > 12 {
            format!(
                "{} ... ({} more) ... {}",
                shown[..5].join(" "),
                shown.len() - 10,
                shown[shown.len() - 5..].join(" ")
            )
        } else {
            shown.join(" ")
        }
    };
    let rule = format!(
        "stop after {} in a row without beating the best by {}{}",
        count(e.n_iter_no_change, "epoch"),
        fmt_g(e.tol),
        if e.stopped { " (it did)" } else { "" }
    );
    match (e.validation_rows, e.validation_fraction) {
        (Some(rows), Some(f)) => {
            line(
                s,
                "held out",
                format!(
                    "{} ({}%, stratified by label, seed {}); accuracy per epoch: {}",
                    count(rows, "row"),
                    fmt_g(100.0 * f),
                    r.validation_seed.unwrap_or(0),
                    per_epoch(&e.validation_accuracy)
                ),
            );
            if let Some(best) = e.best_epoch {
                line(
                    s,
                    "kept",
                    format!(
                        "the weights after epoch {best}, the best held-out accuracy ({:.2}%); {rule}",
                        100.0 * e.validation_accuracy[best - 1]
                    ),
                );
            }
        }
        // With `--tol-on mean-loss` the epochs were judged on their mean
        // hinge loss, and only that was recorded.
        _ if !e.mean_loss.is_empty() => line(
            s,
            "early stop",
            format!(
                "on the mean hinge loss: {rule}; per epoch: {}",
                per_epoch(&e.mean_loss)
            ),
        ),
        _ => line(
            s,
            "early stop",
            format!(
                "on the mistakes per row: {rule}; per epoch: {}",
                per_epoch(&e.mistake_rate)
            ),
        ),
    }
}

/// The `weights` line, for a run with `--class-weight`.
fn weights_line(s: &mut String, r: &TrainReport) {
    let (Some(weights), Some(asked)) = (&r.class_weights, &r.class_weight) else {
        return;
    };
    let list: Vec<String> = weights
        .iter()
        .take(crate::data::labels::LISTED)
        .map(|w| format!("{} x {}", crate::text::Quoted(&w.label), fmt_g(w.weight)))
        .collect();
    let more = weights.len().saturating_sub(list.len());
    s.push_str(&format!(
        "{:<10}  updates add c_y·y·x~ with {}{} ({asked}){}\n",
        "weights",
        list.join(", "),
        if more > 0 {
            format!(", and {more} more")
        } else {
            String::new()
        },
        if matches!(r.labels, ReportLabels::OneVsRest { .. }) {
            "; each class's own rows, the rest with 1"
        } else {
            ""
        }
    ));
}

/// The binary run's summary.
fn render_binary(
    r: &TrainReport,
    p: Option<&OnProcesses>,
    positive_label: &str,
    negative_label: &str,
    positive_rows: usize,
    negative_rows: usize,
) -> String {
    let mut s = String::new();
    line(&mut s, "data", binary_data(r));
    indices_line(&mut s, r.index_base_why.as_deref());
    line(
        &mut s,
        "labels",
        format!(
            "+1 = {} ({}), -1 = {} ({})",
            Quoted(positive_label),
            count(positive_rows, "row"),
            Quoted(negative_label),
            count(negative_rows, "row")
        ),
    );
    scaling_line(&mut s, r.scaling);
    weights_line(&mut s, r);
    let order = r
        .seed
        .map(|s| format!(", shuffled with seed {s}"))
        .unwrap_or_default();
    line(
        &mut s,
        "backend",
        format!("{}{order}{}", engines(r), note(r)),
    );
    if let Some(p) = p {
        line(&mut s, "processes", p.processes.clone());
    }
    variant_line(&mut s, r);
    progress_lines(&mut s, r, "in total", "");
    line(
        &mut s,
        "radius",
        format!("D = max ||x~|| = {}", fmt_g(r.radius)),
    );
    theorem_lines(&mut s, r, p.and_then(|p| p.mixing_bound.as_ref()));
    line(&mut s, "model", r.model.clone());
    if !r.plots.is_empty() {
        line(&mut s, "pictures", r.plots.join(", "));
    }
    line(
        &mut s,
        "time",
        format!(
            "{:.3} s training ({:.3} ms per epoch){}",
            r.seconds,
            1e3 * r.seconds_per_epoch,
            whole_run(r)
        ),
    );
    line(
        &mut s,
        "memory",
        crate::memory::describe(r.peak_memory_bytes),
    );
    s
}

/// The binary run's `data` line: the file, its format and shape, the
/// precision and the bias.
fn binary_data(r: &TrainReport) -> String {
    format!(
        "{} ({}{}, {} x {}, {}, {}{})",
        r.data,
        r.format.name(),
        header_note(r.header_line) + &ignored_note(&r.ignored_columns),
        count(r.rows, "row"),
        count(r.features, "feature"),
        if r.sparse { "sparse" } else { "dense" },
        r.precision,
        if r.bias { ", with bias" } else { ", no bias" }
    )
}

/// The binary run's `variant` line: the averaged or pocket model, or a
/// classic one with a margin threshold (the plain classic run has none).
fn variant_line(s: &mut String, r: &TrainReport) {
    let rule = r
        .margin_threshold
        .as_ref()
        .map(|t| format!(", updating when y w~.x~ <= {t}"))
        .unwrap_or_default();
    match (r.variant, &r.pocket) {
        (Variant::Averaged, _) => line(
            s,
            "variant",
            format!("averaged: the model is the mean of the weights after every row visit{rule}"),
        ),
        (Variant::Pocket, Some(p)) => line(
            s,
            "variant",
            format!(
                "pocket: the model is the weights pocketed in epoch {} with {} ({:.2}% accuracy; {} evaluated){rule}",
                p.epoch + 1,
                count(p.mistakes, "training mistake"),
                100.0 * p.training_accuracy,
                count(p.evaluations, "candidate")
            ),
        ),
        _ if !rule.is_empty() => line(s, "variant", format!("classic{rule}")),
        _ => {}
    }
}

/// The `margin` and `bound` lines: what the convergence theorem says
/// about the run, which depends on how it started and how it was run
/// (`mixing`: with parameter mixing's bound).
fn theorem_lines(s: &mut String, r: &TrainReport, mixing: Option<&MixingBound>) {
    match (r.margin, r.mistake_bound, mixing) {
        (Some(g), _, _) if r.warm_start => {
            margin_line(s, g);
            line(
                s,
                "bound",
                "none: training started from --init, and the theorem counts mistakes from w = 0"
                    .into(),
            );
        }
        (Some(g), Some(b), Some(m)) => {
            margin_line(s, g);
            mixing_bound_line(s, m, b);
        }
        (Some(g), Some(b), None) => {
            margin_line(s, g);
            bound_line(s, r, b);
        }
        // A separating model without a bound: the command line's only
        // such run moves the bias by a decayed step.
        (Some(g), None, _) => {
            margin_line(s, g);
            line(
                s,
                "bound",
                "none: --intercept-decay D moves the bias by D·y, so the run is the textbook \
                 loop on rows [x, D], not on the x~ = [x, 1] whose radius and margin are shown"
                    .into(),
            );
        }
        _ => line(
            s,
            "margin",
            "none: the model does not separate the training data, so the theorem gives no bound"
                .into(),
        ),
    }
}

/// The `margin` line of a model that separates the training data.
fn margin_line(s: &mut String, g: f64) {
    line(
        s,
        "margin",
        format!("gamma = min y w~.x~ / ||w~|| = {}", fmt_g(g)),
    );
}

/// The `bound` line of a distributed run with parameter mixing: its
/// mistakes are weighted by the mixing, as that theorem counts them.
fn mixing_bound_line(s: &mut String, m: &MixingBound, b: f64) {
    let w = m.weighted_mistakes;
    let holds = if m.holds {
        "the bound of parameter mixing (McDonald, Hall & Mann 2010, Theorem 3) holds"
    } else {
        "EXCEEDED"
    };
    line(
        s,
        "bound",
        format!(
            "(D/gamma)^2 = {}, and the mixing-weighted mistakes sum_n sum_i mu_i k_i = {} <= {}: {holds}",
            fmt_g(b),
            fmt_g(w),
            fmt_g(b)
        ),
    );
}

/// The `bound` line of a run from w = 0 in one process: the theorem's
/// formula for its update rule and class weights, and whether M kept to it.
fn bound_line(s: &mut String, r: &TrainReport, b: f64) {
    let holds = if r.bound_holds == Some(true) {
        "the convergence theorem's bound holds"
    } else {
        "EXCEEDED (only possible through rounding)"
    };
    let formula = match (&r.margin_threshold, &r.class_weights) {
        (Some(t), Some(_)) => format!("(c_max*D^2 + 2*{t})/(c_min*gamma^2)"),
        (None, Some(_)) => "(c_max/c_min)*(D/gamma)^2".to_owned(),
        (Some(t), None) => format!("(D^2 + 2*{t})/gamma^2"),
        (None, None) => "(D/gamma)^2".to_owned(),
    };
    line(
        s,
        "bound",
        format!(
            "{formula} = {}, and M = {} <= {}: {holds}",
            fmt_g(b),
            r.total_mistakes,
            fmt_g(b)
        ),
    );
}

/// The one-vs-rest run's summary.
fn render_ovr(r: &TrainReport, p: Option<&OnProcesses>, classes: &[ClassReport]) -> String {
    let mut s = String::new();
    line(&mut s, "data", ovr_data(r));
    indices_line(&mut s, r.index_base_why.as_deref());
    line(
        &mut s,
        "classes",
        format!(
            "{} (one-vs-rest: one perceptron per class, trained together)",
            classes.len()
        ),
    );
    scaling_line(&mut s, r.scaling);
    weights_line(&mut s, r);
    line(&mut s, "backend", format!("{}{}", engines(r), note(r)));
    if let Some(p) = p {
        line(&mut s, "processes", p.processes.clone());
    }
    if r.variant == Variant::Averaged {
        line(
            &mut s,
            "variant",
            "averaged: each class's model is the mean of its weights after every row visit".into(),
        );
    }
    progress_lines(
        &mut s,
        r,
        "over all classes",
        ": highest score is the true class",
    );
    line(
        &mut s,
        "radius",
        format!("D = max ||x~|| = {}", fmt_g(r.radius)),
    );
    class_table(&mut s, classes);
    line(&mut s, "model", r.model.clone());
    line(
        &mut s,
        "time",
        format!("{:.3} s training{}", r.seconds, whole_run(r)),
    );
    line(
        &mut s,
        "memory",
        crate::memory::describe(r.peak_memory_bytes),
    );
    s
}

/// The one-vs-rest run's `data` line: as the binary one, but without the
/// format, and the header and ignored columns before the shape.
fn ovr_data(r: &TrainReport) -> String {
    format!(
        "{} ({}{}{} x {}, {}, {}{})",
        r.data,
        r.header_line
            .map(|n| format!("header on line {n}, "))
            .unwrap_or_default(),
        ignored_note(&r.ignored_columns)
            .strip_prefix(", ")
            .map(|n| format!("{n}, "))
            .unwrap_or_default(),
        count(r.rows, "row"),
        count(r.features, "feature"),
        if r.sparse { "sparse" } else { "dense" },
        r.precision,
        if r.bias { ", with bias" } else { ", no bias" }
    )
}

/// The table of the classes, one row each, set off by blank lines: each
/// class's perceptron has its own mistakes, convergence and margin.
fn class_table(s: &mut String, classes: &[ClassReport]) {
    s.push_str(&format!(
        "\n  {:<14} {:>8} {:>10} {:>10} {:>9} {:>12} {:>14}\n",
        "class", "rows", "mistakes", "converged", "accuracy", "gamma", "(D/gamma)^2"
    ));
    for c in classes {
        let label: String = if c.class.chars().count() > 14 {
            c.class
                .chars()
                .take(13)
                .chain(std::iter::once('~'))
                .collect()
        } else {
            c.class.clone()
        };
        s.push_str(&format!(
            "  {:<14} {:>8} {:>10} {:>10} {:>8.2}% {:>12} {:>14}\n",
            label,
            c.rows,
            c.training.total_mistakes,
            c.training
                .converged_epoch
                .map_or("no".to_owned(), |e| format!("epoch {e}")),
            100.0 * c.accuracy,
            c.training.margin.map_or("-".to_owned(), fmt_g),
            c.training.mistake_bound.map_or("-".to_owned(), fmt_g),
        ));
    }
    s.push('\n');
}

/// The epochs, the mistakes (`scope`: over what they are counted), early
/// stopping and the training accuracy (`why_correct`: what a right row
/// means, after its count).
fn progress_lines(s: &mut String, r: &TrainReport, scope: &str, why_correct: &str) {
    line(
        s,
        "epochs",
        format!("{} of at most {}: {}", r.epochs, r.max_epochs, r.verdict()),
    );
    line(
        s,
        "mistakes",
        format!(
            "M = {} {scope}; per epoch: {}",
            r.total_mistakes,
            abbreviate(&r.mistakes_per_epoch)
        ),
    );
    early_stopping_lines(s, r);
    let correct = (r.training_accuracy * r.rows as f64).round() as usize;
    line(
        s,
        "accuracy",
        format!(
            "{:.2}% on the training data ({correct} of {}{why_correct})",
            100.0 * r.training_accuracy,
            count(r.rows, "row")
        ),
    );
}
