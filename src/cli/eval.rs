//! `perceptron eval`: how well a saved model classifies a labelled data file.

use std::path::PathBuf;

use clap::Args;

use super::args::{BackendArgs, DataArgs};
use super::predict::load_for_model;
use super::stdout::write_stdout;
use crate::data::LoadOptions;
use crate::error::{Error, Result, exit};
use crate::float::Real;
use crate::model::evaluation::{
    ConfusionCell, Counts, EvalReport, Evaluated, MATRIX_MAX_CLASSES, OvrConfusion, OvrEvalReport,
    true_classes,
};
use crate::model::{self, AnyModel, Model};
use crate::text::{Quoted, count};

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

/// How many confusions the text report lists when it shows no matrix.
pub const LISTED_CONFUSIONS: usize = 20;

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
    let (what, counts) = count_rows(args, model, opts)?;
    Ok(if model.heads() == 1 {
        let r = EvalReport::of(what, model, &counts);
        (serde_json::to_string(&r), render(&r))
    } else {
        let r = OvrEvalReport::of(what, model, &counts);
        (serde_json::to_string(&r), render_ovr(&r))
    })
}

/// Reads the data for `model` and counts every row's true class against
/// the class the model predicts for it.
fn count_rows<F: Real>(
    args: &EvalArgs,
    model: &Model<F>,
    opts: &LoadOptions,
) -> Result<(Evaluated, Counts)> {
    let mut raw = load_for_model(model, &args.model, &args.data, opts)?;
    let shown = crate::data::source::name(&args.data);
    let truth = true_classes(model, &args.model, &raw, shown)?;
    let predicted =
        super::predict::certified_classes(model, &args.data, &mut raw.features, &args.backend)?;
    let what = Evaluated {
        model: args.model.display().to_string(),
        data: shown.display().to_string(),
        format: raw.format,
        features: raw.features.cols(),
    };
    Ok((what, Counts::of(&truth, &raw.class_ids, &predicted)))
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
