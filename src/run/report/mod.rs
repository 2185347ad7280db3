//! A finished training run's summary (`perceptron train`'s): one record
//! for binary and one-vs-rest runs, made from the run's description, its
//! fit and the model; serialised as it is for JSON, and rendered as text by
//! [`render`]. The front ends decide where it goes.

mod text;

use text::stopped_early;
pub use text::{MixingBound, OnProcesses, render, render_on_processes};

use std::path::Path;

use serde::Serialize;

use crate::data::{CsvInfo, Dataset, IndexBase, LibsvmInfo, ScaleKind};
use crate::float::{Precision, Real};
use crate::model::{ClassTraining, LabelWeight, Model};
use crate::text::count;
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
    /// CSV: the columns left out (`--ignore-columns`), as named.
    pub ignored_columns: Vec<String>,
    /// LIBSVM: how feature indices were counted (`zero` or `one`).
    pub index_base: Option<IndexBase>,
    /// LIBSVM: why, in words (`zero-based: index 0 appears on line 3 of
    /// a.svm`).
    pub index_base_why: Option<String>,
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
    /// The training loop's seconds (the epochs; see `run_seconds`).
    pub seconds: f64,
    pub seconds_per_epoch: f64,
    /// Seconds the engine took to start (a device, its pipelines, the
    /// data's upload), apart from `seconds`.
    pub engine_start_seconds: f64,
    /// The whole command's seconds so far (reading, training, the
    /// theorem's figures, the model file), and the reading's part.
    pub run_seconds: f64,
    pub reading_seconds: f64,
    /// Wall time of each epoch of this run.
    pub epoch_seconds: Vec<f64>,
    /// How each epoch's rows were walked: rows and seconds per mode (the
    /// host's certified walk, the textbook loop, the engine).
    pub epoch_modes: Vec<crate::train::EpochModes>,
    /// Peak resident memory of the whole run, where the system reports it.
    pub peak_memory_bytes: Option<u64>,
    pub loop_stats: LoopStats,
    pub engine_stats: EngineStats,
    pub warnings: Vec<String>,
    /// Pictures written by --plot.
    pub plots: Vec<String>,
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
    /// The CPU engine's threads (for a GPU: those of the CPU engine beside
    /// it, which `auto` trains with; see [`crate::engine::pair`]).
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
    /// threads)`, `gpu: ADAPTER`, `gpu: ADAPTER + cpu (N threads)`: see the
    /// engines' `name`).
    pub fn of_name(name: &str) -> Self {
        let threads_of = |cpu: &str| {
            cpu.trim()
                .strip_prefix('(')
                .and_then(|r| r.split_whitespace().next())
                .and_then(|n| n.parse().ok())
        };
        let (kind, threads, adapter) = if let Some(a) = name.strip_prefix("gpu: ") {
            match a.rsplit_once(" + cpu") {
                Some((adapter, cpu)) => ("gpu", threads_of(cpu), Some(adapter.to_owned())),
                None => ("gpu", None, Some(a.to_owned())),
            }
        } else if let Some(rest) = name.strip_prefix("cpu") {
            ("cpu", threads_of(rest), None)
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
pub struct ReportInputs<'a, F> {
    pub run: &'a RunDescription,
    pub fit: &'a Fit<F>,
    pub model: &'a Model<F>,
    /// The training data, in training order.
    pub data: &'a Dataset<F>,
    pub csv: Option<&'a CsvInfo>,
    /// How LIBSVM data counted its indices, and why.
    pub libsvm: Option<&'a LibsvmInfo>,
    pub output: &'a Path,
    /// The backend asked for.
    pub requested: crate::engine::backend::Backend,
}

/// The labels of the report: a binary model's two classes with their
/// rows, or one-vs-rest's classes with each perceptron's figures.
fn report_labels<F: Real>(model: &Model<F>, data: &Dataset<F>, fit: &Fit<F>) -> ReportLabels {
    match model.labels() {
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
    }
}

/// The backend asked for, the engines that ran, and the choice's note.
fn backend_report<F: Real>(
    fit: &Fit<F>,
    requested: crate::engine::backend::Backend,
) -> BackendReport {
    BackendReport {
        requested: requested.name(),
        engines: fit
            .engines
            .iter()
            .map(|n| EngineReport::of_name(n))
            .collect(),
        note: fit.backend_note.clone(),
    }
}

impl TrainReport {
    pub fn new<F: Real>(s: ReportInputs<'_, F>, warnings: Vec<String>, plots: Vec<String>) -> Self {
        let ReportInputs {
            run,
            fit,
            model,
            data,
            csv,
            libsvm,
            output,
            requested,
        } = s;
        let labels = report_labels(model, data, fit);
        let info = &model.training;
        TrainReport {
            data: data.source.display().to_string(),
            format: data.format,
            header_line: csv.and_then(|c| c.header_line),
            ignored_columns: csv.map(CsvInfo::ignored_names).unwrap_or_default(),
            index_base: libsvm.map(|l| l.base),
            index_base_why: libsvm.map(LibsvmInfo::describe),
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
            backend: backend_report(fit, requested),
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
            engine_start_seconds: fit.engine_start_seconds,
            run_seconds: 0.0,
            reading_seconds: 0.0,
            seconds_per_epoch: fit.seconds / fit.epochs().max(1) as f64,
            epoch_seconds: fit.epoch_seconds.clone(),
            epoch_modes: fit.epoch_modes.clone(),
            peak_memory_bytes: crate::memory::peak_rss_bytes(),
            loop_stats: fit.loop_stats.clone(),
            engine_stats: fit.engine_stats.clone(),
            warnings,
            plots,
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
                "not converged: the data was not separated within {} (the last epoch made {last}); the last model was saved to {}. It may not be linearly separable: --average (the averaged perceptron) or --scale standard usually help; or try more --max-epochs, or check the labels.",
                count(self.epochs, "epoch"),
                self.model
            ),
            ReportLabels::OneVsRest { .. } => format!(
                "not converged: some class was not separated from the rest within {} (the last epoch made {last} in all); the last model was saved to {}. --average (the averaged perceptron) or --scale standard usually help.",
                count(self.epochs, "epoch"),
                self.model
            ),
        }
    }
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
        let pair = EngineReport::of_name("gpu: NVIDIA H200 (Vulkan) + cpu (16 threads)");
        assert_eq!(
            (pair.kind, pair.threads, pair.adapter.as_deref()),
            ("gpu", Some(16), Some("NVIDIA H200 (Vulkan)"))
        );
    }
}
