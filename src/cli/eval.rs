//! `perceptron eval`: how well a saved model classifies a labelled data file.

use crate::text::Quoted;
use std::collections::BTreeMap;
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
/// averages. Beyond 20 classes the matrix would be too wide to read:
/// eval lists the most frequent confusions instead, and the figures of the
/// classes that occur in the data or the predictions.
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

/// Models with at most this many classes get the full confusion matrix;
/// beyond, a matrix of K x K cells (64 million at 8,000 classes) is neither
/// readable nor affordable, so eval keeps only the cells that are not zero
/// (at most one per row evaluated) and shows the largest.
pub const MATRIX_MAX_CLASSES: usize = 20;

/// How many confusions the text report lists when it shows no matrix.
pub const LISTED_CONFUSIONS: usize = 20;

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

/// One non-zero cell of a confusion matrix too large to show whole.
#[derive(Serialize, Debug, Clone, PartialEq)]
pub struct ConfusionCell {
    #[serde(rename = "true")]
    pub truth: String,
    pub predicted: String,
    pub rows: u64,
}

/// A one-vs-rest model's confusion counts: the whole matrix up to
/// [`MATRIX_MAX_CLASSES`] classes, its non-zero cells beyond.
#[derive(Serialize, Debug, Clone, PartialEq)]
#[serde(untagged)]
pub enum OvrConfusion {
    Matrix(Confusion),
    Cells {
        /// The model's number of classes (the matrix's side).
        classes: usize,
        /// Every cell that is not zero, by true then predicted class in the
        /// model's order.
        cells: Vec<ConfusionCell>,
    },
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
/// names, and the confusion counts they make.
struct Checked {
    format: crate::data::Format,
    rows: usize,
    features: usize,
    /// `cells[(t, p)]`: rows of true class t predicted p, for the cells that
    /// are not zero: at most one per row, whatever the number of classes.
    cells: BTreeMap<(usize, usize), u64>,
}

impl Checked {
    fn cell(&self, t: usize, p: usize) -> u64 {
        self.cells.get(&(t, p)).copied().unwrap_or(0)
    }
}

impl Checked {
    fn of<F: Real>(args: &EvalArgs, model: &Model<F>, opts: &LoadOptions) -> Result<Self> {
        let mut raw = load_for_model(model, &args.model, &args.data, opts)?;
        let shown = crate::data::source::name(&args.data);
        let truth = true_classes(model, &args.model, &raw, shown)?;
        let predicted =
            super::predict::certified_classes(model, &args.data, &mut raw.features, &args.backend)?;
        let mut cells = BTreeMap::new();
        for (i, &c) in raw.class_ids.iter().enumerate() {
            *cells.entry((truth[c as usize], predicted[i])).or_insert(0) += 1;
        }
        Ok(Checked {
            format: raw.format,
            rows: raw.class_ids.len(),
            features: raw.features.cols(),
            cells,
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
    // [true][predicted], index 0 = -1, 1 = +1.
    let m = [
        [checked.cell(0, 0), checked.cell(0, 1)],
        [checked.cell(1, 0), checked.cell(1, 1)],
    ];
    let Checked {
        format,
        rows,
        features,
        ..
    } = checked;
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
    pub confusion: OvrConfusion,
    /// Every class of the model up to [`MATRIX_MAX_CLASSES`]; beyond, the
    /// classes that occur in the data or the predictions (the others have
    /// no defined figure), in the model's order.
    pub classes: Vec<OvrClassScores>,
    /// Unweighted means over the classes where the score is defined.
    pub macro_precision: Option<f64>,
    pub macro_recall: Option<f64>,
    pub macro_f1: Option<f64>,
}

/// Rows truly of a class, rows predicted as it, and rows both.
#[derive(Default, Clone, Copy)]
struct Tally {
    support: u64,
    predicted: u64,
    correct: u64,
}

/// A one-vs-rest model's scores on the labelled file: the predicted class is
/// the highest-scoring one, as in `predict`.
fn evaluate_ovr<F: Real>(args: &EvalArgs, model: &Model<F>, checked: Checked) -> OvrEvalReport {
    let Checked {
        format,
        rows,
        features,
        cells,
    } = checked;
    let names = model.class_names();
    let k = names.len();
    let whole = k <= MATRIX_MAX_CLASSES;
    // Per class, from the non-zero cells alone: no K-long table beyond the
    // matrix's size.
    let mut tallies: BTreeMap<usize, Tally> = BTreeMap::new();
    if whole {
        tallies.extend((0..k).map(|c| (c, Tally::default())));
    }
    for (&(t, p), &n) in &cells {
        tallies.entry(t).or_default().support += n;
        tallies.entry(p).or_default().predicted += n;
        if t == p {
            tallies.entry(t).or_default().correct += n;
        }
    }
    let correct: u64 = tallies.values().map(|t| t.correct).sum();
    let classes: Vec<OvrClassScores> = tallies
        .iter()
        .map(|(&c, t)| OvrClassScores {
            label: names[c].to_owned(),
            support: t.support,
            precision: ratio(t.correct, t.predicted),
            recall: ratio(t.correct, t.support),
            f1: ratio(2 * t.correct, t.predicted + t.support),
        })
        .collect();
    let mean = |f: fn(&OvrClassScores) -> Option<f64>| {
        let v: Vec<f64> = classes.iter().filter_map(f).collect();
        (!v.is_empty()).then(|| v.iter().sum::<f64>() / v.len() as f64)
    };
    let confusion = if whole {
        let mut matrix = vec![vec![0u64; k]; k];
        for (&(t, p), &n) in &cells {
            matrix[t][p] = n;
        }
        OvrConfusion::Matrix(Confusion {
            labels: names.iter().map(|c| c.to_string()).collect(),
            matrix,
        })
    } else {
        OvrConfusion::Cells {
            classes: k,
            cells: cells
                .iter()
                .map(|(&(t, p), &n)| ConfusionCell {
                    truth: names[t].to_owned(),
                    predicted: names[p].to_owned(),
                    rows: n,
                })
                .collect(),
        }
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
        confusion,
        macro_precision: mean(|c| c.precision),
        macro_recall: mean(|c| c.recall),
        macro_f1: mean(|c| c.f1),
        classes,
    }
}

/// The human-readable one-vs-rest report.
pub fn render_ovr(r: &OvrEvalReport) -> String {
    let mut s = String::new();
    let k = match &r.confusion {
        OvrConfusion::Matrix(m) => m.labels.len(),
        OvrConfusion::Cells { classes, .. } => *classes,
    };
    ovr_summary(&mut s, r, k);
    let names = quoted(
        &r.classes
            .iter()
            .map(|c| c.label.clone())
            .collect::<Vec<_>>(),
    );
    let w0 = match &r.confusion {
        OvrConfusion::Matrix(m) => {
            s.push_str("\nconfusion matrix (rows: true class, columns: predicted class)\n");
            confusion_table(&mut s, &quoted(&m.labels), &m.matrix, "", 4, 5)
        }
        OvrConfusion::Cells { cells, .. } => {
            top_confusions(&mut s, cells, k);
            names
                .iter()
                .map(|n| n.chars().count())
                .chain([5])
                .max()
                .unwrap_or(5)
        }
    };
    s.push('\n');
    class_figures(&mut s, r, &names, w0);
    s
}

/// The `model`, `data` and `accuracy` lines of a one-vs-rest report (`k`:
/// the model's classes).
fn ovr_summary(s: &mut String, r: &OvrEvalReport, k: usize) {
    let line = |s: &mut String, k: &str, v: String| s.push_str(&format!("{k:<10}  {v}\n"));
    line(
        s,
        "model",
        format!(
            "{} ({}, one-vs-rest over {})",
            r.model,
            r.precision,
            count(k, "class")
        ),
    );
    line(
        s,
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
        s,
        "accuracy",
        format!(
            "{:.2}% ({} of {} correct)",
            100.0 * r.accuracy,
            r.correct,
            count(r.rows, "row")
        ),
    );
}

/// Appends the table of each class's support, precision, recall and F1,
/// and their macro averages (`names`: the classes quoted, `w0`: the class
/// column's width).
fn class_figures(s: &mut String, r: &OvrEvalReport, names: &[String], w0: usize) {
    if let OvrConfusion::Cells { .. } = r.confusion {
        s.push_str(&format!(
            "the {} that occur in the data or the predictions:\n",
            count(r.classes.len(), "class")
        ));
    }
    s.push_str(&format!(
        "  {:<w0$}  {:>9}  {:>9}  {:>9}  {:>9}\n",
        "class", "support", "precision", "recall", "F1"
    ));
    let f = |v: Option<f64>| v.map_or("-".to_owned(), |v| format!("{v:.4}"));
    for (c, n) in r.classes.iter().zip(names) {
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
}

/// Appends, in place of a matrix too large to read, the
/// [`LISTED_CONFUSIONS`] largest off-diagonal cells (ties in the model's
/// class order).
fn top_confusions(s: &mut String, cells: &[ConfusionCell], classes: usize) {
    let mut wrong: Vec<&ConfusionCell> = cells.iter().filter(|c| c.truth != c.predicted).collect();
    // Stable: equal counts keep the cells' order.
    wrong.sort_by_key(|c| std::cmp::Reverse(c.rows));
    let shown = &wrong[..wrong.len().min(LISTED_CONFUSIONS)];
    s.push_str(&format!(
        "\nno confusion matrix: {} are more than the {MATRIX_MAX_CLASSES} it is shown for \
         (--json lists its non-zero cells)\n",
        count(classes, "class")
    ));
    if shown.is_empty() {
        s.push_str("no confusion: every row was predicted as its true class\n");
        return;
    }
    s.push_str(&format!(
        "the {} most frequent confusions (of {}):\n",
        shown.len(),
        wrong.len()
    ));
    let t: Vec<String> = shown.iter().map(|c| Quoted(&c.truth).to_string()).collect();
    let p: Vec<String> = shown
        .iter()
        .map(|c| Quoted(&c.predicted).to_string())
        .collect();
    let width = |v: &[String], min: usize| v.iter().map(|x| x.chars().count()).chain([min]).max();
    let (wt, wp) = (width(&t, 4).unwrap_or(4), width(&p, 9).unwrap_or(9));
    s.push_str(&format!(
        "  {:<wt$}  {:<wp$}  {:>9}\n",
        "true", "predicted", "rows"
    ));
    for ((c, t), p) in shown.iter().zip(&t).zip(&p) {
        s.push_str(&format!("  {t:<wt$}  {p:<wp$}  {:>9}\n", c.rows));
    }
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
