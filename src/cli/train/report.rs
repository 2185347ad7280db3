//! `perceptron train`'s summary: one report for binary and one-vs-rest
//! runs, made from the run's description, its fit and the model, printed as
//! text or JSON.

use std::path::Path;

use serde::Serialize;

use crate::data::{CsvInfo, Dataset, ScaleKind};
use crate::float::{Precision, Real};
use crate::model::{ClassTraining, LabelWeight, Model};
use crate::text::{abbreviate, count, fmt_g};
use crate::train::{
    EarlyStopReport, EngineStats, Fit, LoopStats, PocketReport, RunDescription, Stop, Variant,
};

/// The run summary, printed as text or JSON. A binary run's JSON has the
/// labels' fields where a one-vs-rest run's has `classes`.
#[derive(Serialize, Debug)]
pub struct TrainReport {
    pub data: String,
    pub format: crate::data::Format,
    /// The line of the CSV header that was skipped, if any.
    pub header_line: Option<u64>,
    pub rows: usize,
    pub features: usize,
    pub sparse: bool,
    pub precision: Precision,
    pub bias: bool,
    /// The feature scaling the loop trained under (`--scale`), if any.
    pub scaling: Option<ScaleKind>,
    /// The class weights of the updates (`--class-weight`), if any.
    pub class_weights: Option<Vec<LabelWeight>>,
    /// How they were asked for (`balanced`, or the pairs given).
    pub class_weight: Option<String>,
    /// What early stopping did (`--tol`, `--n-iter-no-change`,
    /// `--validation-fraction`), when it was on.
    pub early_stopping: Option<EarlyStopReport>,
    /// The seed that chose the held-out rows (`--validation-fraction`).
    pub validation_seed: Option<u64>,
    #[serde(flatten)]
    pub labels: ReportLabels,
    pub backend: BackendReport,
    pub variant: Variant,
    pub margin_threshold: Option<String>,
    /// Started from `--init` (the theorem's bound then does not apply).
    pub warm_start: bool,
    pub pocket: Option<PocketReport>,
    pub seed: Option<u64>,
    pub epochs: usize,
    pub max_epochs: usize,
    pub converged: bool,
    pub stop: Stop,
    pub mistakes_per_epoch: Vec<u64>,
    pub total_mistakes: u64,
    /// Binary: rows predicted right; one-vs-rest: rows whose highest-scoring
    /// class is their own.
    pub training_accuracy: f64,
    pub radius: f64,
    pub margin: Option<f64>,
    pub mistake_bound: Option<f64>,
    pub bound_holds: Option<bool>,
    pub model: String,
    pub seconds: f64,
    pub seconds_per_epoch: f64,
    /// Wall time of each epoch of this run.
    pub epoch_seconds: Vec<f64>,
    /// Peak resident memory of the whole run, where the system reports it.
    pub peak_memory_bytes: Option<u64>,
    pub loop_stats: LoopStats,
    pub engine_stats: EngineStats,
    pub warnings: Vec<String>,
    /// Pictures written by --plot.
    pub plots: Vec<String>,
    /// A run on several processes (`--distributed`); absent otherwise.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub distributed: Option<DistributedReport>,
}

/// How a distributed run went.
#[derive(Serialize, Debug)]
pub struct DistributedReport {
    /// `exact` or `mix`.
    pub mode: String,
    pub ranks: usize,
    /// Mix mode: `uniform` or `errors`.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub mixing: Option<String>,
    /// Mix mode: each rank's mistakes in each epoch.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub rank_mistakes: Option<Vec<Vec<u64>>>,
    /// Mix mode: the mixing-weighted mistakes Σ_n Σ_i μ_i,n·k_i,n, which the
    /// paper bounds by (D/gamma)^2 for separable data.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub weighted_mistakes: Option<f64>,
    /// Mix mode: whether that bound held (when the model separates the data
    /// and training started from zero).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub mix_bound_holds: Option<bool>,
    /// Exact mode: the steps the run took.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub steps: Option<crate::distributed::exact::Steps>,
    /// Operations and payload bytes rank 0 took part in, per epoch.
    pub traffic: Vec<crate::distributed::Traffic>,
}

/// Which backend was asked for and which engines computed the margins.
#[derive(Serialize, Debug)]
pub struct BackendReport {
    /// `reference`, `cpu`, `gpu` or `auto`.
    pub requested: &'static str,
    /// The engines that computed margins, in order (more than one after a
    /// device failure handed the run to the CPU).
    pub engines: Vec<EngineReport>,
    /// How `auto` chose, or why a GPU was not used, when it matters.
    pub note: Option<String>,
}

/// One engine of a run.
#[derive(Serialize, Debug, PartialEq)]
pub struct EngineReport {
    /// `reference`, `cpu` or `gpu`.
    pub kind: &'static str,
    /// The CPU engine's threads.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub threads: Option<usize>,
    /// The GPU adapter, as `name (API)`.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub adapter: Option<String>,
    /// The engine as the text summary names it.
    pub name: String,
}

impl EngineReport {
    /// The engine an engine's name stands for (`reference`, `cpu (N
    /// threads)`, `gpu: ADAPTER`: see the engines' `name`).
    pub fn of_name(name: &str) -> Self {
        let (kind, threads, adapter) = if let Some(a) = name.strip_prefix("gpu: ") {
            ("gpu", None, Some(a.to_owned()))
        } else if let Some(rest) = name.strip_prefix("cpu") {
            let threads = rest
                .trim()
                .strip_prefix('(')
                .and_then(|r| r.split_whitespace().next())
                .and_then(|n| n.parse().ok());
            ("cpu", threads, None)
        } else {
            ("reference", None, None)
        };
        EngineReport {
            kind,
            threads,
            adapter,
            name: name.to_owned(),
        }
    }
}

/// What the model's classes are, and how many rows each has.
#[derive(Serialize, Debug)]
#[serde(untagged)]
pub enum ReportLabels {
    Binary {
        positive_label: String,
        negative_label: String,
        positive_rows: usize,
        negative_rows: usize,
    },
    OneVsRest {
        classes: Vec<ClassReport>,
    },
}

/// One class's line of a one-vs-rest report.
#[derive(Serialize, Debug)]
pub struct ClassReport {
    pub class: String,
    pub rows: u64,
    #[serde(flatten)]
    pub training: ClassTraining,
    /// This class's binary accuracy (its perceptron against the rest).
    pub accuracy: f64,
}

/// Where the report's figures come from.
pub struct Sources<'a, F> {
    pub run: &'a RunDescription,
    pub fit: &'a Fit<F>,
    pub model: &'a Model<F>,
    /// The training data, in training order.
    pub data: &'a Dataset<F>,
    pub csv: Option<&'a CsvInfo>,
    pub output: &'a Path,
    /// The backend asked for.
    pub requested: crate::backend::Backend,
}

impl TrainReport {
    pub fn new<F: Real>(s: Sources<'_, F>, warnings: Vec<String>, plots: Vec<String>) -> Self {
        let Sources {
            run,
            fit,
            model,
            data,
            csv,
            output,
            requested,
        } = s;
        let labels = match model.labels() {
            Some(map) => {
                let positive_rows = data.labels.iter().filter(|&&y| y > 0).count();
                ReportLabels::Binary {
                    positive_label: map.positive.clone(),
                    negative_label: map.negative_text().to_owned(),
                    positive_rows,
                    negative_rows: data.rows() - positive_rows,
                }
            }
            None => ReportLabels::OneVsRest {
                classes: data
                    .classes
                    .iter()
                    .zip(&model.per_class)
                    .zip(&fit.head_theory)
                    .map(|((c, training), theory)| ClassReport {
                        class: c.text.clone(),
                        rows: c.count,
                        training: training.clone(),
                        accuracy: theory.accuracy(),
                    })
                    .collect(),
            },
        };
        let info = &model.training;
        TrainReport {
            data: data.source.display().to_string(),
            format: data.format,
            header_line: csv.and_then(|c| c.header_line),
            rows: data.rows(),
            features: data.cols(),
            sparse: data.features.is_sparse(),
            precision: F::PRECISION,
            bias: run.bias,
            scaling: model.scaling().map(|s| s.kind),
            class_weights: info.class_weights.clone(),
            class_weight: run.class_weight.as_ref().map(|w| w.text()),
            early_stopping: fit.early_stopping.clone(),
            validation_seed: run
                .early_stop
                .as_ref()
                .and_then(|e| e.validation.map(|v| v.seed)),
            labels,
            backend: BackendReport {
                requested: match requested {
                    crate::backend::Backend::Reference => "reference",
                    crate::backend::Backend::Cpu => "cpu",
                    crate::backend::Backend::Gpu => "gpu",
                    crate::backend::Backend::Auto => "auto",
                },
                engines: fit
                    .engines
                    .iter()
                    .map(|n| EngineReport::of_name(n))
                    .collect(),
                note: fit.backend_note.clone(),
            },
            variant: fit.variant,
            margin_threshold: run.margin.as_ref().map(|m| m.text().to_owned()),
            warm_start: run.init.is_some(),
            pocket: fit.pocket.clone(),
            seed: run.seed,
            epochs: fit.epochs(),
            max_epochs: run.max_epochs,
            converged: fit.converged(),
            stop: fit.stop,
            mistakes_per_epoch: fit.mistakes_per_epoch.clone(),
            total_mistakes: fit.total_mistakes(),
            training_accuracy: fit.theory.accuracy(),
            radius: fit.theory.radius,
            margin: info.margin,
            mistake_bound: info.mistake_bound,
            bound_holds: info
                .mistake_bound
                .and_then(|_| fit.theory.bound_holds(fit.total_mistakes())),
            model: crate::output::shown(output),
            seconds: fit.seconds,
            seconds_per_epoch: fit.seconds / fit.epochs().max(1) as f64,
            epoch_seconds: fit.epoch_seconds.clone(),
            peak_memory_bytes: crate::memory::peak_rss_bytes(),
            loop_stats: fit.loop_stats.clone(),
            engine_stats: fit.engine_stats.clone(),
            warnings,
            plots,
            distributed: None,
        }
    }

    /// Whether running to the epoch cap is the variant's normal ending
    /// (averaged and pocket), not a failure to converge.
    pub fn runs_every_epoch(&self) -> bool {
        matches!(self.variant, Variant::Averaged | Variant::Pocket)
    }

    /// The verdict of the `epochs` line after the last epoch.
    fn verdict(&self) -> String {
        let last = count(
            self.mistakes_per_epoch.last().copied().unwrap_or(0),
            "mistake",
        );
        let one_vs_rest = matches!(self.labels, ReportLabels::OneVsRest { .. });
        if self.converged {
            if one_vs_rest {
                "converged (every class separated from the rest)".to_owned()
            } else {
                "converged (the last epoch made no mistake)".to_owned()
            }
        } else if self.stop == Stop::Interrupted {
            "interrupted".to_owned()
        } else if let (Stop::EarlyStopped, Some(e)) = (self.stop, &self.early_stopping) {
            stopped_early(e)
        } else if self.runs_every_epoch() {
            format!(
                "ran every epoch, as the {} variant does; the last epoch was not clean ({last}{})",
                self.variant.name(),
                if one_vs_rest { " in all" } else { "" }
            )
        } else if one_vs_rest {
            "NOT converged (some class not separated)".to_owned()
        } else {
            format!(
                "NOT converged: the data was not separated within {} (the last epoch made {last})",
                count(self.epochs, "epoch"),
            )
        }
    }

    /// The message for a run that stopped at the epoch cap, on stderr.
    pub fn not_converged(&self) -> String {
        let last = count(
            self.mistakes_per_epoch.last().copied().unwrap_or(0),
            "mistake",
        );
        match &self.labels {
            ReportLabels::Binary { .. } => format!(
                "not converged: the data was not separated within {} (the last epoch made {last}); the last model was saved to {}. It may not be linearly separable; try more --max-epochs, or check the labels.",
                count(self.epochs, "epoch"),
                self.model
            ),
            ReportLabels::OneVsRest { .. } => format!(
                "not converged: some class was not separated from the rest within {} (the last epoch made {last} in all); the last model was saved to {}",
                count(self.epochs, "epoch"),
                self.model
            ),
        }
    }
}

/// The human-readable summary.
pub fn render(r: &TrainReport) -> String {
    match &r.labels {
        ReportLabels::Binary {
            positive_label,
            negative_label,
            positive_rows,
            negative_rows,
        } => render_binary(
            r,
            positive_label,
            negative_label,
            *positive_rows,
            *negative_rows,
        ),
        ReportLabels::OneVsRest { classes } => render_ovr(r, classes),
    }
}

/// ", header on line N" when a header line was skipped.
pub(crate) fn header_note(line: Option<u64>) -> String {
    line.map(|n| format!(", header on line {n}"))
        .unwrap_or_default()
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
        s.push_str(&format!(
            "{:<10}  {}: {}, statistics of the training rows; the loop trained on the scaled \
             rows (D and gamma below are theirs), and predict and eval apply the same scaling\n",
            "scaling",
            k.name(),
            k.formula()
        ));
    }
}

/// The `epochs` line's verdict for a run the early-stopping rule ended.
fn stopped_early(e: &EarlyStopReport) -> String {
    format!(
        "stopped early: {} in a row did not beat the best {} by {} or more",
        count(e.n_iter_no_change, "epoch"),
        if e.validation_rows.is_some() {
            "held-out accuracy"
        } else {
            "mistakes per row"
        },
        fmt_g(e.tol)
    )
}

/// The `held-out` line (with --validation-fraction) or the `early stop`
/// line (on the training mistakes), for a run with early stopping.
fn early_stopping_lines(s: &mut String, r: &TrainReport) {
    let Some(e) = &r.early_stopping else {
        return;
    };
    let line = |s: &mut String, k: &str, v: String| s.push_str(&format!("{k:<10}  {v}\n"));
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
        .map(|w| format!("\"{}\" x {}", w.label, fmt_g(w.weight)))
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
    positive_label: &str,
    negative_label: &str,
    positive_rows: usize,
    negative_rows: usize,
) -> String {
    let mut s = String::new();
    let line = |s: &mut String, k: &str, v: String| s.push_str(&format!("{k:<10}  {v}\n"));
    line(
        &mut s,
        "data",
        format!(
            "{} ({}{}, {} x {}, {}, {}{})",
            r.data,
            r.format.name(),
            header_note(r.header_line),
            count(r.rows, "row"),
            count(r.features, "feature"),
            if r.sparse { "sparse" } else { "dense" },
            r.precision,
            if r.bias { ", with bias" } else { ", no bias" }
        ),
    );
    line(
        &mut s,
        "labels",
        format!(
            "+1 = \"{}\" ({}), -1 = \"{}\" ({})",
            positive_label,
            count(positive_rows, "row"),
            negative_label,
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
    if let Some(d) = &r.distributed {
        line(&mut s, "processes", processes(d));
    }
    let rule = r
        .margin_threshold
        .as_ref()
        .map(|t| format!(", updating when y w~.x~ <= {t}"))
        .unwrap_or_default();
    match (r.variant, &r.pocket) {
        (Variant::Averaged, _) => line(
            &mut s,
            "variant",
            format!("averaged: the model is the mean of the weights after every row visit{rule}"),
        ),
        (Variant::Pocket, Some(p)) => line(
            &mut s,
            "variant",
            format!(
                "pocket: the model is the weights pocketed in epoch {} with {} ({:.2}% accuracy; {} evaluated){rule}",
                p.epoch + 1,
                count(p.mistakes, "training mistake"),
                100.0 * p.training_accuracy,
                count(p.evaluations, "candidate")
            ),
        ),
        _ if !rule.is_empty() => line(&mut s, "variant", format!("classic{rule}")),
        _ => {}
    }
    line(
        &mut s,
        "epochs",
        format!("{} of at most {}: {}", r.epochs, r.max_epochs, r.verdict()),
    );
    line(
        &mut s,
        "mistakes",
        format!(
            "M = {} in total; per epoch: {}",
            r.total_mistakes,
            abbreviate(&r.mistakes_per_epoch)
        ),
    );
    early_stopping_lines(&mut s, r);
    let correct = (r.training_accuracy * r.rows as f64).round() as usize;
    line(
        &mut s,
        "accuracy",
        format!(
            "{:.2}% on the training data ({correct} of {})",
            100.0 * r.training_accuracy,
            count(r.rows, "row")
        ),
    );
    line(
        &mut s,
        "radius",
        format!("D = max ||x~|| = {}", fmt_g(r.radius)),
    );
    match (r.margin, r.mistake_bound) {
        (Some(g), _) if r.warm_start => {
            line(
                &mut s,
                "margin",
                format!("gamma = min y w~.x~ / ||w~|| = {}", fmt_g(g)),
            );
            line(
                &mut s,
                "bound",
                "none: training started from --init, and the theorem counts mistakes from w = 0"
                    .into(),
            );
        }
        (Some(g), Some(b))
            if r.distributed
                .as_ref()
                .is_some_and(|d| d.weighted_mistakes.is_some()) =>
        {
            line(
                &mut s,
                "margin",
                format!("gamma = min y w~.x~ / ||w~|| = {}", fmt_g(g)),
            );
            let d = r.distributed.as_ref();
            let w = d.and_then(|d| d.weighted_mistakes).unwrap_or(0.0);
            let holds = if d.and_then(|d| d.mix_bound_holds) == Some(true) {
                "the bound of parameter mixing (McDonald, Hall & Mann 2010, Theorem 3) holds"
            } else {
                "EXCEEDED"
            };
            line(
                &mut s,
                "bound",
                format!(
                    "(D/gamma)^2 = {}, and the mixing-weighted mistakes sum_n sum_i mu_i k_i = {} <= {}: {holds}",
                    fmt_g(b),
                    fmt_g(w),
                    fmt_g(b)
                ),
            );
        }
        (Some(g), Some(b)) => {
            line(
                &mut s,
                "margin",
                format!("gamma = min y w~.x~ / ||w~|| = {}", fmt_g(g)),
            );
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
                &mut s,
                "bound",
                format!(
                    "{formula} = {}, and M = {} <= {}: {holds}",
                    fmt_g(b),
                    r.total_mistakes,
                    fmt_g(b)
                ),
            );
        }
        _ => line(
            &mut s,
            "margin",
            "none: the model does not separate the training data, so the theorem gives no bound"
                .into(),
        ),
    }
    line(&mut s, "model", r.model.clone());
    if !r.plots.is_empty() {
        line(&mut s, "pictures", r.plots.join(", "));
    }
    line(
        &mut s,
        "time",
        format!(
            "{:.3} s ({:.3} ms per epoch)",
            r.seconds,
            1e3 * r.seconds_per_epoch
        ),
    );
    line(
        &mut s,
        "memory",
        crate::memory::describe(r.peak_memory_bytes),
    );
    s
}

/// The `processes` line of a distributed run: the mode, and the traffic
/// of a typical epoch (the last) on rank 0.
fn processes(d: &DistributedReport) -> String {
    let what = match d.mixing.as_deref() {
        Some(m) => format!(
            "{} (mix, {m} mixing: iterative parameter mixing, not the single-process algorithm)",
            d.ranks
        ),
        None => format!("{} (exact: the single-process model, bit for bit)", d.ranks),
    };
    match d.traffic.last() {
        Some(t) => format!(
            "{what}; the last epoch: {} and {} on rank 0",
            count(t.operations(), "operation"),
            crate::memory::human(t.bytes())
        ),
        None => what,
    }
}

/// The one-vs-rest run's summary.
fn render_ovr(r: &TrainReport, classes: &[ClassReport]) -> String {
    let mut s = String::new();
    let line = |s: &mut String, k: &str, v: String| s.push_str(&format!("{k:<10}  {v}\n"));
    line(
        &mut s,
        "data",
        format!(
            "{} ({}{} x {}, {}, {}{})",
            r.data,
            r.header_line
                .map(|n| format!("header on line {n}, "))
                .unwrap_or_default(),
            count(r.rows, "row"),
            count(r.features, "feature"),
            if r.sparse { "sparse" } else { "dense" },
            r.precision,
            if r.bias { ", with bias" } else { ", no bias" }
        ),
    );
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
    if let Some(d) = &r.distributed {
        line(&mut s, "processes", processes(d));
    }
    if r.variant == Variant::Averaged {
        line(
            &mut s,
            "variant",
            "averaged: each class's model is the mean of its weights after every row visit".into(),
        );
    }
    line(
        &mut s,
        "epochs",
        format!("{} of at most {}: {}", r.epochs, r.max_epochs, r.verdict()),
    );
    line(
        &mut s,
        "mistakes",
        format!(
            "M = {} over all classes; per epoch: {}",
            r.total_mistakes,
            abbreviate(&r.mistakes_per_epoch)
        ),
    );
    early_stopping_lines(&mut s, r);
    let correct = (r.training_accuracy * r.rows as f64).round() as usize;
    line(
        &mut s,
        "accuracy",
        format!(
            "{:.2}% on the training data ({correct} of {}: highest score is the true class)",
            100.0 * r.training_accuracy,
            count(r.rows, "row")
        ),
    );
    line(
        &mut s,
        "radius",
        format!("D = max ||x~|| = {}", fmt_g(r.radius)),
    );
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
    line(&mut s, "model", r.model.clone());
    line(&mut s, "time", format!("{:.3} s", r.seconds));
    line(
        &mut s,
        "memory",
        crate::memory::describe(r.peak_memory_bytes),
    );
    s
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn engine_names_become_structured_data() {
        let cpu = EngineReport::of_name("cpu (12 threads)");
        assert_eq!(
            (cpu.kind, cpu.threads, cpu.adapter),
            ("cpu", Some(12), None)
        );
        let gpu = EngineReport::of_name("gpu: NVIDIA H100 (Vulkan)");
        assert_eq!(
            (gpu.kind, gpu.threads, gpu.adapter.as_deref()),
            ("gpu", None, Some("NVIDIA H100 (Vulkan)"))
        );
        assert_eq!(EngineReport::of_name("reference").kind, "reference");
    }
}
