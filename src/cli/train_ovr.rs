//! `perceptron train --multiclass ovr`: the one-vs-rest model and its report.

use std::path::Path;

use serde::Serialize;

use super::train::{TrainArgs, abbreviate, class_texts, fmt_g};
use crate::data::{CsvInfo, Dataset};
use crate::error::{Error, Result, exit};
use crate::float::{Precision, Real};
use crate::model::{DataLayout, TrainingInfo};
use crate::ovr::{ClassTraining, OvrModel};
use crate::text::count;
use crate::train::{Fit, Stop, Variant};

/// One class's line of the report.
#[derive(Serialize, Debug)]
pub struct ClassReport {
    pub class: String,
    pub rows: u64,
    #[serde(flatten)]
    pub training: ClassTraining,
    /// This class's binary accuracy (its perceptron against the rest).
    pub accuracy: f64,
}

/// The one-vs-rest run summary, printed as text or JSON.
#[derive(Serialize, Debug)]
pub struct OvrReport {
    pub data: String,
    /// The line of the CSV header that was skipped, if any.
    pub header_line: Option<u64>,
    pub rows: usize,
    pub features: usize,
    pub sparse: bool,
    pub precision: Precision,
    pub bias: bool,
    pub classes: Vec<ClassReport>,
    pub backend: Vec<String>,
    pub backend_note: Option<String>,
    pub variant: Variant,
    pub epochs: usize,
    pub max_epochs: usize,
    pub converged: bool,
    pub mistakes_per_epoch: Vec<u64>,
    pub total_mistakes: u64,
    /// Rows whose highest-scoring class is their own.
    pub training_accuracy: f64,
    pub radius: f64,
    pub model: String,
    pub seconds: f64,
    /// Peak resident memory of the whole run, where the system reports it.
    pub peak_memory_bytes: Option<u64>,
    pub warnings: Vec<String>,
}

/// A finished one-vs-rest run, ready to be saved and reported.
pub struct Run<'a, F: Real> {
    pub args: &'a TrainArgs,
    pub data: &'a Dataset<F>,
    pub fit: &'a Fit<F>,
    pub output: &'a Path,
    pub seed: Option<u64>,
    pub backend_note: Option<String>,
    /// The layout of CSV training data.
    pub csv: Option<&'a CsvInfo>,
}

impl<F: Real> Run<'_, F> {
    /// Saves the model, prints the report and returns the exit code.
    pub fn finish(self, warnings: Vec<String>) -> Result<i32> {
        let (data, fit) = (self.data, self.fit);
        let bias = !self.args.no_bias;
        let heads = data.classes.len();
        let dim = data.cols() + bias as usize;
        let per_class: Vec<ClassTraining> = (0..heads)
            .map(|h| {
                let mistakes: Vec<u64> = fit
                    .state
                    .head_mistakes_per_epoch
                    .iter()
                    .map(|e| e[h])
                    .collect();
                let theory = &fit.head_theory[h];
                ClassTraining {
                    total_mistakes: mistakes.iter().sum::<u64>()
                        + fit
                            .state
                            .head_mistakes_in_epoch
                            .get(h)
                            .copied()
                            .unwrap_or(0),
                    converged_epoch: mistakes.iter().position(|&m| m == 0).map(|e| e + 1),
                    mistakes_per_epoch: mistakes,
                    margin: theory.margin,
                    mistake_bound: theory.mistake_bound,
                }
            })
            .collect();
        let model = OvrModel {
            classes: class_texts(data),
            weights: (0..heads)
                .map(|h| fit.weights[h * dim..h * dim + data.cols()].to_vec())
                .collect(),
            biases: (0..heads)
                .map(|h| {
                    if bias {
                        fit.weights[h * dim + dim - 1]
                    } else {
                        F::ZERO
                    }
                })
                .collect(),
            has_bias: bias,
            training: TrainingInfo {
                epochs: fit.epochs(),
                max_epochs: self.args.max_epochs,
                mistakes_per_epoch: fit.mistakes_per_epoch.clone(),
                total_mistakes: fit.total_mistakes(),
                converged: fit.converged(),
                radius: fit.theory.radius,
                margin: None,
                mistake_bound: None,
                backend: fit.engines.join(", then "),
                seed: self.seed,
                data: data.source.display().to_string(),
                rows: data.rows(),
                training_accuracy: fit.theory.accuracy(),
                seconds: fit.seconds,
                variant: fit.variant,
                margin_threshold: self.args.margin.clone(),
                init: self.args.init.as_ref().map(|p| p.display().to_string()),
                pocket_epoch: None,
                pocket_training_accuracy: None,
                online: None,
                data_layout: Some(DataLayout::of(
                    data.format,
                    self.csv,
                    self.args.data_args.label_column.as_ref(),
                )),
            },
            per_class: per_class.clone(),
        };
        model.save(self.output)?;
        let report = OvrReport {
            data: data.source.display().to_string(),
            header_line: self.csv.and_then(|c| c.header_line),
            rows: data.rows(),
            features: data.cols(),
            sparse: data.features.is_sparse(),
            precision: F::PRECISION,
            bias,
            classes: data
                .classes
                .iter()
                .zip(per_class)
                .zip(&fit.head_theory)
                .map(|((c, training), theory)| ClassReport {
                    class: c.text.clone(),
                    rows: c.count,
                    training,
                    accuracy: theory.accuracy(),
                })
                .collect(),
            backend: fit.engines.clone(),
            backend_note: self.backend_note,
            variant: fit.variant,
            epochs: fit.epochs(),
            max_epochs: self.args.max_epochs,
            converged: fit.converged(),
            mistakes_per_epoch: fit.mistakes_per_epoch.clone(),
            total_mistakes: fit.total_mistakes(),
            training_accuracy: fit.theory.accuracy(),
            radius: fit.theory.radius,
            model: self.output.display().to_string(),
            seconds: fit.seconds,
            peak_memory_bytes: crate::memory::peak_rss_bytes(),
            warnings,
        };
        if self.args.json {
            let text = serde_json::to_string(&report).map_err(|e| Error::Train(e.to_string()))?;
            super::stdout::print_line(&text)?;
        } else {
            super::stdout::print(&render(&report))?;
        }
        // With --json too, as for binary models.
        if !report.converged {
            eprintln!(
                "perceptron: not converged: some class was not separated from the rest within {} (the last epoch made {} in all); the last model was saved to {}",
                count(report.epochs, "epoch"),
                count(
                    report.mistakes_per_epoch.last().copied().unwrap_or(0),
                    "mistake"
                ),
                report.model
            );
        }
        Ok(if fit.stop == Stop::Converged {
            exit::SUCCESS
        } else {
            exit::NOT_CONVERGED
        })
    }
}

/// The human-readable summary.
pub fn render(r: &OvrReport) -> String {
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
            r.classes.len()
        ),
    );
    let note = r
        .backend_note
        .as_ref()
        .map(|n| format!(" ({n})"))
        .unwrap_or_default();
    line(
        &mut s,
        "backend",
        format!("{}{note}", r.backend.join(", then ")),
    );
    if r.variant == Variant::Averaged {
        line(
            &mut s,
            "variant",
            "averaged: each class's model is the mean of its weights after every row visit".into(),
        );
    }
    let verdict = if r.converged {
        "converged (every class separated from the rest)".to_owned()
    } else {
        "NOT converged (some class not separated)".to_owned()
    };
    line(
        &mut s,
        "epochs",
        format!("{} of at most {}: {verdict}", r.epochs, r.max_epochs),
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
    for c in &r.classes {
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
