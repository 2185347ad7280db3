//! `perceptron eval`: how well a saved model classifies a labelled data file.

use std::path::PathBuf;

use clap::Args;

use super::args::{BackendArgs, DataArgs};
use super::predict::load_for_model;
use super::stdout::write_stdout;
use crate::data::LoadOptions;
use crate::error::{Result, exit};
use crate::float::Real;
use crate::model::evaluation::{Counts, Evaluated, Evaluation, true_classes};
use crate::model::{self, AnyModel, Model};

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

pub fn run(args: &EvalArgs) -> Result<i32> {
    let opts = args.data_args.load_options(None);
    let evaluation = match model::load(&args.model)? {
        AnyModel::F32(m) => evaluate(args, &m, &opts)?,
        AnyModel::F64(m) => evaluate(args, &m, &opts)?,
    };
    let text = super::stdout::summary(args.json, &evaluation, || evaluation.render())?;
    write_stdout(|out| out.write_all(text.as_bytes()))?;
    Ok(exit::SUCCESS)
}

/// The report for `model`: reads the data for it and counts every row's
/// true class against the class the model predicts for it.
fn evaluate<F: Real>(args: &EvalArgs, model: &Model<F>, opts: &LoadOptions) -> Result<Evaluation> {
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
    let counts = Counts::of(&truth, &raw.class_ids, &predicted);
    Ok(Evaluation::of(what, model, &counts))
}
