//! `perceptron eval`: how well a saved model classifies a labelled data file.

use crate::text::Quoted;
use std::path::{Path, PathBuf};

use clap::Args;
use serde::Serialize;

use super::args::{BackendArgs, DataArgs};
use super::predict::load_for_model;
use super::stdout::write_stdout;
use crate::data::labels::LISTED;
use crate::data::{LoadOptions, RawData};
use crate::error::{Error, Result, exit};
use crate::float::{Precision, Real};
use crate::model::{self, AnyModel, Model};
use crate::text::count;

const EXAMPLES: &str = "\
Examples:
  perceptron eval model.json test.csv          accuracy, confusion matrix, F1
  perceptron eval model.json test.svm.gz --json
  perceptron eval model.json test.csv --label-column class --header

Every true label in the data must be one the model was trained on (for a
one-vs-rest model, every value other than its +1 label counts as -1).
Without --label-column, a CSV file's label is read from the column the
model's training data had it in (a note on stderr says which, when it is not
the first).

Exit status: 0 success; 1 error; 2 bad command line; 130 interrupted
(Ctrl-C, SIGTERM or SIGHUP).";

/// Evaluate a saved model on a labelled data file.
///
/// Predicts every row exactly as `perceptron predict` does (s = w·x + b in the
/// model's precision; a binary model predicts its +1 class iff s > 0, a
/// one-vs-rest model the class whose perceptron scores highest) and
/// compares with the file's labels: accuracy and the confusion matrix (rows
/// = true label, columns = predicted label, in the original label texts);
/// for a binary model the precision, recall and F1 score of the +1 class,
/// for one-vs-rest those of every class with its support, and their macro
/// averages.
#[derive(Args, Debug)]
#[command(after_help = EXAMPLES)]
pub struct EvalArgs {
    /// The model file written by `perceptron train`.
    #[arg(value_name = "MODEL")]
    pub model: PathBuf,

    /// Labelled data file (CSV or LIBSVM, optionally .gz, or binary .pbin; `-`
    /// reads standard input), in the layout the model was trained on.
    #[arg(value_name = "DATA")]
    pub data: PathBuf,

    /// Print the results as one JSON object on stdout.
    #[arg(long)]
    pub json: bool,

    #[command(flatten)]
    pub data_args: DataArgs,

    /// Where the classes are computed (binary models; one-vs-rest models
    /// compare every class's score, always on the host). Every backend gives
    /// the classes of the reference arithmetic.
    #[command(flatten)]
    pub backend: BackendArgs,
}

/// The confusion matrix, binary and one-vs-rest alike.
#[derive(Serialize, Debug, Clone, PartialEq)]
pub struct Confusion {
    /// The class texts in matrix order: a binary model's -1 class then its
    /// +1 class; a one-vs-rest model's classes in its order.
    pub labels: Vec<String>,
    /// `matrix[t][p]`: rows whose true class is `labels[t]` and predicted
    /// class is `labels[p]`.
    pub matrix: Vec<Vec<u64>>,
}

/// Precision, recall and F1 of the +1 class; `None` where undefined (0/0).
#[derive(Serialize, Debug, Clone, PartialEq)]
pub struct ClassScores {
    pub label: String,
    pub precision: Option<f64>,
    pub recall: Option<f64>,
    pub f1: Option<f64>,
}

/// Everything `eval` reports.
#[derive(Serialize, Debug, Clone, PartialEq)]
pub struct EvalReport {
    pub model: String,
    pub data: String,
    pub format: crate::data::Format,
    /// The arithmetic precision of the model (and of the scores).
    pub precision: Precision,
    pub rows: usize,
    pub features: usize,
    pub positive_label: String,
    pub negative_label: String,
    pub correct: u64,
    pub accuracy: f64,
    pub confusion: Confusion,
    pub true_positives: u64,
    pub false_positives: u64,
    pub false_negatives: u64,
    pub true_negatives: u64,
    pub positive_class: ClassScores,
}

pub fn run(args: &EvalArgs) -> Result<i32> {
    let opts = args.data_args.load_options(None);
    let (json, text) = match model::load(&args.model)? {
        AnyModel::F32(m) => report(args, &m, &opts)?,
        AnyModel::F64(m) => report(args, &m, &opts)?,
    };
    let text = if args.json {
        let mut t = json.map_err(|e| Error::Train(e.to_string()))?;
        t.push('\n');
        t
    } else {
        text
    };
    write_stdout(|out| out.write_all(text.as_bytes()))?;
    Ok(exit::SUCCESS)
}

/// The report for `model`, as JSON and as text: a binary model's, with the
/// +1 class's scores, or a one-vs-rest model's, with every class's.
fn report<F: Real>(
    args: &EvalArgs,
    model: &Model<F>,
    opts: &LoadOptions,
) -> Result<(serde_json::Result<String>, String)> {
    let checked = Checked::of(args, model, opts)?;
    Ok(if model.heads() == 1 {
        let r = evaluate(args, model, checked);
        (serde_json::to_string(&r), render(&r))
    } else {
        let r = evaluate_ovr(args, model, checked);
        (serde_json::to_string(&r), render_ovr(&r))
    })
}

/// Every row's true and predicted class, as indices into the model's class
/// names, and the confusion matrix they make.
struct Checked {
    format: crate::data::Format,
    rows: usize,
    features: usize,
    /// `confusion[t][p]`: rows of true class t predicted p.
    confusion: Vec<Vec<u64>>,
}

impl Checked {
    fn of<F: Real>(args: &EvalArgs, model: &Model<F>, opts: &LoadOptions) -> Result<Self> {
        let mut raw = load_for_model(model, &args.model, &args.data, opts)?;
        let shown = crate::data::source::name(&args.data);
        let truth = true_classes(model, &args.model, &raw, shown)?;
        let predicted =
            super::predict::certified_classes(model, &args.data, &mut raw.features, &args.backend)?;
        let k = model.class_names().len();
        let mut confusion = vec![vec![0u64; k]; k];
        for (i, &c) in raw.class_ids.iter().enumerate() {
            confusion[truth[c as usize]][predicted[i]] += 1;
        }
        Ok(Checked {
            format: raw.format,
            rows: raw.class_ids.len(),
            features: raw.features.cols(),
            confusion,
        })
    }
}

/// The model's class (an index into its class names) of every class id of
/// `raw`, or an error naming the first label value the model does not know.
pub(crate) fn true_classes<F: Real>(
    model: &Model<F>,
    model_path: &Path,
    raw: &RawData<F>,
    path: &Path,
) -> Result<Vec<usize>> {
    let classes = raw.table.classes();
    let mut map = Vec::with_capacity(classes.len());
    let mut unknown = Vec::new();
    for (c, class) in classes.iter().enumerate() {
        match model.class_of_label(&class.text) {
            Some(k) => map.push(k),
            None => {
                map.push(0);
                unknown.push(c);
            }
        }
    }
    let Some(&first) = unknown.first() else {
        return Ok(map);
    };
    let class = &classes[first];
    let (known, others) = match model.labels() {
        Some(labels) => {
            let known = format!(
                "{} (+1) and {} (-1)",
                Quoted(&labels.positive),
                Quoted(labels.negative_text())
            );
            // A wrong label column can give thousands: list a few.
            let others = if unknown.len() > 1 {
                let rest: Vec<String> = unknown[1..]
                    .iter()
                    .take(LISTED)
                    .map(|&c| Quoted(&classes[c].text).to_string())
                    .collect();
                let more = unknown.len() - 1 - rest.len();
                format!(
                    "; other unknown labels: {}{}",
                    rest.join(", "),
                    if more > 0 {
                        format!(", and {more} more")
                    } else {
                        String::new()
                    }
                )
            } else {
                String::new()
            };
            (known, others)
        }
        None => (
            model
                .class_names()
                .iter()
                .map(|c| Quoted(c).to_string())
                .collect::<Vec<_>>()
                .join(", "),
            String::new(),
        ),
    };
    let message = format!(
        "label {} ({}) is not a class of the model {}, which knows {known}{others}",
        Quoted(&class.text),
        count(class.count, "row"),
        model_path.display()
    );
    Err(if class.first_line > 0 {
        Error::parse(path, class.first_line, None, message)
    } else {
        Error::data(path, message)
    })
}

fn ratio(num: u64, den: u64) -> Option<f64> {
    (den > 0).then(|| num as f64 / den as f64)
}

/// A binary model's scores on the labelled file.
fn evaluate<F: Real>(args: &EvalArgs, model: &Model<F>, checked: Checked) -> EvalReport {
    let Checked {
        format,
        rows,
        features,
        confusion,
    } = checked;
    // [true][predicted], index 0 = -1, 1 = +1.
    let m = [
        [confusion[0][0], confusion[0][1]],
        [confusion[1][0], confusion[1][1]],
    ];
    let (tn, fp, fn_, tp) = (m[0][0], m[0][1], m[1][0], m[1][1]);
    let precision = ratio(tp, tp + fp);
    let recall = ratio(tp, tp + fn_);
    let f1 = ratio(2 * tp, 2 * tp + fp + fn_);
    let names = model.class_names();
    let (negative, positive) = (names[0].to_owned(), names[1].to_owned());
    EvalReport {
        model: args.model.display().to_string(),
        data: crate::data::source::name(&args.data).display().to_string(),
        format,
        precision: F::PRECISION,
        rows,
        features,
        positive_label: positive.clone(),
        negative_label: negative.clone(),
        correct: tp + tn,
        accuracy: (tp + tn) as f64 / rows as f64,
        confusion: Confusion {
            labels: vec![negative, positive.clone()],
            matrix: m.iter().map(|r| r.to_vec()).collect(),
        },
        true_positives: tp,
        false_positives: fp,
        false_negatives: fn_,
        true_negatives: tn,
        positive_class: ClassScores {
            label: positive,
            precision,
            recall,
            f1,
        },
    }
}

fn metric(v: Option<f64>, why: &str) -> String {
    match v {
        Some(v) => format!("{v:.4}"),
        None => format!("undefined ({why})"),
    }
}

/// The human-readable report.
pub fn render(r: &EvalReport) -> String {
    let mut s = String::new();
    let line = |s: &mut String, k: &str, v: String| s.push_str(&format!("{k:<10}  {v}\n"));
    line(
        &mut s,
        "model",
        format!(
            "{} ({}, +1 = {}, -1 = {})",
            r.model,
            r.precision,
            Quoted(&r.positive_label),
            Quoted(&r.negative_label)
        ),
    );
    line(
        &mut s,
        "data",
        format!(
            "{} ({}, {} x {})",
            r.data,
            r.format.name(),
            count(r.rows, "row"),
            count(r.features, "feature")
        ),
    );
    line(
        &mut s,
        "accuracy",
        format!(
            "{:.2}% ({} of {} correct)",
            100.0 * r.accuracy,
            r.correct,
            count(r.rows, "row")
        ),
    );
    s.push_str("\nconfusion matrix (rows: true label, columns: predicted label)\n");
    let head = quoted(&r.confusion.labels);
    confusion_table(
        &mut s,
        &head,
        &r.confusion.matrix,
        "true \\ predicted",
        0,
        6,
    );
    let p = &r.positive_class;
    s.push_str(&format!("\nclass {} (+1):\n", Quoted(&p.label)));
    line(
        &mut s,
        "precision",
        metric(p.precision, "no row was predicted +1"),
    );
    line(&mut s, "recall", metric(p.recall, "no row is truly +1"));
    line(
        &mut s,
        "F1",
        metric(p.f1, "no row is +1, truly or predicted"),
    );
    s
}

/// One class's scores in a one-vs-rest evaluation.
#[derive(Serialize, Debug, Clone, PartialEq)]
pub struct OvrClassScores {
    pub label: String,
    /// Rows truly of this class.
    pub support: u64,
    pub precision: Option<f64>,
    pub recall: Option<f64>,
    pub f1: Option<f64>,
}

/// Everything `eval` reports for a one-vs-rest model.
#[derive(Serialize, Debug, Clone, PartialEq)]
pub struct OvrEvalReport {
    pub model: String,
    pub data: String,
    pub format: crate::data::Format,
    pub precision: Precision,
    pub rows: usize,
    pub features: usize,
    pub correct: u64,
    pub accuracy: f64,
    pub confusion: Confusion,
    pub classes: Vec<OvrClassScores>,
    /// Unweighted means over the classes where the score is defined.
    pub macro_precision: Option<f64>,
    pub macro_recall: Option<f64>,
    pub macro_f1: Option<f64>,
}

/// A one-vs-rest model's scores on the labelled file: the predicted class is
/// the highest-scoring one, as in `predict`.
fn evaluate_ovr<F: Real>(args: &EvalArgs, model: &Model<F>, checked: Checked) -> OvrEvalReport {
    let Checked {
        format,
        rows,
        features,
        confusion,
    } = checked;
    let labels: Vec<String> = model.class_names().iter().map(|c| c.to_string()).collect();
    let k = labels.len();
    let correct: u64 = (0..k).map(|c| confusion[c][c]).sum();
    let classes: Vec<OvrClassScores> = (0..k)
        .map(|c| {
            let tp = confusion[c][c];
            let support: u64 = confusion[c].iter().sum();
            let predicted: u64 = (0..k).map(|t| confusion[t][c]).sum();
            OvrClassScores {
                label: labels[c].clone(),
                support,
                precision: ratio(tp, predicted),
                recall: ratio(tp, support),
                f1: ratio(2 * tp, predicted + support),
            }
        })
        .collect();
    let mean = |f: fn(&OvrClassScores) -> Option<f64>| {
        let v: Vec<f64> = classes.iter().filter_map(f).collect();
        (!v.is_empty()).then(|| v.iter().sum::<f64>() / v.len() as f64)
    };
    OvrEvalReport {
        model: args.model.display().to_string(),
        data: crate::data::source::name(&args.data).display().to_string(),
        format,
        precision: F::PRECISION,
        rows,
        features,
        correct,
        accuracy: if rows == 0 {
            0.0
        } else {
            correct as f64 / rows as f64
        },
        confusion: Confusion {
            labels,
            matrix: confusion,
        },
        macro_precision: mean(|c| c.precision),
        macro_recall: mean(|c| c.recall),
        macro_f1: mean(|c| c.f1),
        classes,
    }
}

/// The human-readable one-vs-rest report.
pub fn render_ovr(r: &OvrEvalReport) -> String {
    let mut s = String::new();
    let line = |s: &mut String, k: &str, v: String| s.push_str(&format!("{k:<10}  {v}\n"));
    line(
        &mut s,
        "model",
        format!(
            "{} ({}, one-vs-rest over {})",
            r.model,
            r.precision,
            count(r.confusion.labels.len(), "class")
        ),
    );
    line(
        &mut s,
        "data",
        format!(
            "{} ({}, {} x {})",
            r.data,
            r.format.name(),
            count(r.rows, "row"),
            count(r.features, "feature")
        ),
    );
    line(
        &mut s,
        "accuracy",
        format!(
            "{:.2}% ({} of {} correct)",
            100.0 * r.accuracy,
            r.correct,
            count(r.rows, "row")
        ),
    );
    s.push_str("\nconfusion matrix (rows: true class, columns: predicted class)\n");
    let names = quoted(&r.confusion.labels);
    let w0 = confusion_table(&mut s, &names, &r.confusion.matrix, "", 4, 5);
    s.push_str(&format!(
        "\n  {:<w0$}  {:>9}  {:>9}  {:>9}  {:>9}\n",
        "class", "support", "precision", "recall", "F1"
    ));
    let f = |v: Option<f64>| v.map_or("-".to_owned(), |v| format!("{v:.4}"));
    for (c, n) in r.classes.iter().zip(&names) {
        s.push_str(&format!(
            "  {n:<w0$}  {:>9}  {:>9}  {:>9}  {:>9}\n",
            c.support,
            f(c.precision),
            f(c.recall),
            f(c.f1)
        ));
    }
    s.push_str(&format!(
        "  {:<w0$}  {:>9}  {:>9}  {:>9}  {:>9}\n",
        "macro",
        "",
        f(r.macro_precision),
        f(r.macro_recall),
        f(r.macro_f1)
    ));
    s
}

/// Class texts in quotes, as the tables show them.
fn quoted(labels: &[String]) -> Vec<String> {
    labels.iter().map(|l| Quoted(l).to_string()).collect()
}

/// Appends the confusion matrix as a table: `corner` above the class
/// column, every column at least `min_name` / `min_cell` wide. Returns the
/// class column's width, for tables that follow it.
fn confusion_table(
    s: &mut String,
    names: &[String],
    matrix: &[Vec<u64>],
    corner: &str,
    min_name: usize,
    min_cell: usize,
) -> usize {
    let width = |t: &String| t.chars().count();
    let w0 = names
        .iter()
        .map(width)
        .chain([corner.chars().count(), min_name])
        .max()
        .unwrap_or(0);
    let w = matrix
        .iter()
        .flatten()
        .map(|v| v.to_string().len())
        .chain(names.iter().map(width))
        .chain([min_cell])
        .max()
        .unwrap_or(0);
    s.push_str(&format!("  {corner:<w0$}"));
    for n in names {
        s.push_str(&format!("  {n:>w$}"));
    }
    s.push('\n');
    for (t, n) in names.iter().enumerate() {
        s.push_str(&format!("  {n:<w0$}"));
        for v in &matrix[t] {
            s.push_str(&format!("  {v:>w$}"));
        }
        s.push('\n');
    }
    w0
}
