//! `perceptron predict`: apply a saved model to a data file, one label per line.

use crate::text::printed_label;
use std::io::{self, Write};
use std::path::{Path, PathBuf};

use clap::Args;

use super::args::{BackendArgs, DataArgs};
use super::stdout::write_stdout;
use crate::data::{self, LoadOptions, RawData};
use crate::error::{Result, exit};
use crate::float::Real;
use crate::model::{self, AnyModel, Fitted, Model};

const EXAMPLES: &str = "\
Examples:
  perceptron predict model.json new.csv                one label per line on stdout
  perceptron predict model.json new.csv -o labels.txt  write them to a file instead
  perceptron predict model.json new.svm.gz --scores    label<TAB>score per line
  perceptron predict model.json test.csv --label-column class --header
  perceptron predict model.json rows.csv --unlabeled   rows of features only

By default the data is read in the layout the model was trained on: a label
column (CSV: the column the training data had it in, unless --label-column
says otherwise) or a label token (LIBSVM) on every row, although its values
are ignored and need not be labels the model knows. With --unlabeled the rows
have no label: every CSV column is a feature, and a LIBSVM line may start
with its first index:value (a first token without `:` is still taken for a
label and ignored).

CSV rows must have the model's columns. When the model was trained with a
header and the data has one, the names must be the model's: columns in
another order are matched by name (with a note), and a name that either
lacks is an error naming it. LIBSVM and .pbin rows may have fewer features
than the model (the missing ones count as zero). LIBSVM features beyond the
model's are left out with a note giving their count (training never saw
them: their weight is 0, and the scores are the same); .pbin and .npy data
with more columns than the model is an error.

Exit status: 0 success; 1 error; 2 bad command line; 130 interrupted
(Ctrl-C, SIGTERM or SIGHUP).";

/// Predict the class of every row of a data file with a saved model.
///
/// Prints one predicted label per line, in the data's row order, as the
/// original label text the model was trained with (for a one-vs-rest model,
/// the -1 class prints as `rest`). The score s = w·x + b is computed with the
/// same arithmetic as training, in the model's precision; s > 0 predicts the
/// +1 class, s <= 0 the -1 class.
#[derive(Args, Debug)]
#[command(after_help = EXAMPLES)]
pub struct PredictArgs {
    /// The model file written by `perceptron train`.
    #[arg(value_name = "MODEL")]
    pub model: PathBuf,

    /// Data file (CSV or LIBSVM, optionally .gz, or binary .pbin; `-` reads
    /// standard input), in the layout the model was trained on. Its labels are read but ignored; see --unlabeled for data without them.
    #[arg(value_name = "DATA")]
    pub data: PathBuf,

    /// The rows have no label: every CSV column is a feature (line 1 is a
    /// header when none of its fields is a number), and a LIBSVM line's first
    /// token is a feature when it holds `:`.
    #[arg(long, conflicts_with = "label_column")]
    pub unlabeled: bool,

    /// Write the predictions to this file instead of stdout. Written
    /// atomically: an existing file is only replaced by the complete output
    /// (a pipe, `/dev/stdout` or `-` is written directly).
    #[arg(short, long, value_name = "FILE")]
    pub output: Option<PathBuf>,

    /// Print `label<TAB>score` on each line, where score = w·x + b in the
    /// model's precision, written as the shortest decimal that reads back to
    /// the same bits; a one-vs-rest model prints one score per class. A
    /// first line names the columns: `predicted`, then the class each score
    /// is for (a binary model's score is its +1 class's). Scores are always
    /// computed on the host with the reference arithmetic, whatever
    /// --backend says.
    #[arg(long)]
    pub scores: bool,

    #[command(flatten)]
    pub data_args: DataArgs,

    #[command(flatten)]
    pub backend: BackendArgs,
}

pub fn run(args: &PredictArgs) -> Result<i32> {
    if let Some(out) = &args.output {
        crate::output::check_destination(out)?;
        crate::output::check_not_an_input(out, &[&args.model, &args.data])?;
    }
    let opts = LoadOptions {
        unlabeled: args.unlabeled,
        ..args.data_args.load_options(None)
    };
    match model::load(&args.model)? {
        AnyModel::F32(m) => run_in(args, &m, &opts),
        AnyModel::F64(m) => run_in(args, &m, &opts),
    }
}

/// Reads `path` for the model at `model_path` in the model's precision
/// ([`Model::read_data`]) and fits its columns to the model's features
/// ([`Model::fit_data`]), saying on stderr what was taken from the model
/// and how the columns were fitted.
pub(crate) fn load_for_model<F: Real>(
    model: &Model<F>,
    model_path: &Path,
    path: &Path,
    opts: &LoadOptions,
) -> Result<RawData<F>> {
    let read = model.read_data(model_path, path, opts)?;
    super::args::warn_csv_options(opts, read.raw.format, path);
    let shown = data::source::name(path);
    if let Some(label) = &read.label_from_model {
        let name = label
            .name
            .as_ref()
            .map(|n| format!(" ({})", crate::data::message::quote(n)))
            .unwrap_or_default();
        eprintln!(
            "perceptron: note: the label of {} is read from column {}{name}, as in the \
             training data of {}; pass --label-column to read another",
            shown.display(),
            label.column,
            model_path.display()
        );
    }
    let (raw, fitted) = model.fit_data(read.raw, model_path, path)?;
    note_fitted(model, model_path, shown, fitted);
    Ok(raw)
}

/// Says on stderr how data was fitted to the model's features, unless as
/// read.
fn note_fitted<F: Real>(model: &Model<F>, model_path: &Path, path: &Path, fitted: Fitted) {
    match fitted {
        Fitted::AsRead => {}
        Fitted::ReorderedByName => eprintln!(
            "perceptron: note: the columns of {} are the features of {} in another order; \
             they are matched by name",
            path.display(),
            model_path.display()
        ),
        Fitted::BeyondModel { features, values } => eprintln!(
            "perceptron: note: {} has {} beyond the {} of {}, holding {}: they are left \
             out (a feature training never saw has weight 0, so the scores are the same)",
            path.display(),
            crate::text::count(features, "feature"),
            crate::text::count(model.feature_count(), "feature"),
            model_path.display(),
            crate::text::count(values as usize, "non-zero value"),
        ),
    }
}

/// One line per row: the predicted class; with `--scores`, then every
/// head's score in the model's order (one for a binary model).
fn run_in<F: Real>(args: &PredictArgs, model: &Model<F>, opts: &LoadOptions) -> Result<i32> {
    let mut raw = load_for_model(model, &args.model, &args.data, opts)?;
    let names = model.class_names();
    // Without scores only the classes are needed, which any backend
    // certifies; scores need the reference arithmetic on every row.
    let classes = if args.scores {
        // The scores are the weights' dot with the rows they read: scaled
        // ones, for a model trained with --scale.
        let features = std::mem::replace(&mut raw.features, crate::data::Features::empty());
        raw.features = model.scored_features(features, &args.data)?;
        None
    } else {
        Some(certified_classes(
            model,
            &args.data,
            &mut raw.features,
            &args.backend,
        )?)
    };
    let write = |out: &mut dyn Write| -> io::Result<()> {
        let mut scores = Vec::with_capacity(model.heads());
        if classes.is_none() {
            writeln!(out, "{}", model.scores_header())?;
        }
        for i in 0..raw.features.rows() {
            if let Some(classes) = &classes {
                writeln!(out, "{}", printed_label(names[classes[i]]))?;
                continue;
            }
            model.scores(raw.features.row(i), &mut scores);
            write!(
                out,
                "{}",
                printed_label(names[model.class_of_scores(&scores)])
            )?;
            for s in &scores {
                write!(out, "\t{s}")?;
            }
            writeln!(out)?;
        }
        Ok(())
    };
    match &args.output {
        Some(path) => crate::output::write_atomic(path, write)?,
        None => write_stdout(write)?,
    }
    Ok(exit::SUCCESS)
}

/// Every row's class (an index into the model's class names), by the
/// backend `args` asks for: the classes the reference arithmetic gives,
/// whatever the backend (see [`Model::predict`]). A device failure is a
/// warning (the CPU decides the rest); a score that is not a finite number
/// is an error.
pub(crate) fn certified_classes<F: Real>(
    model: &Model<F>,
    data: &Path,
    features: &mut crate::data::Features<F>,
    args: &BackendArgs,
) -> Result<Vec<usize>> {
    let (backend, gpu) = args.resolve();
    let predictions = model.predict(features, backend, &gpu)?;
    if let Some(e) = &predictions.stats.engine_failure {
        eprintln!(
            "perceptron: warning: {e}; the remaining rows were decided on the CPU (the result is unchanged)"
        );
    }
    predictions.into_classes(model, data)
}
