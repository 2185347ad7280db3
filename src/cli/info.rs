//! `perceptron info`: what a data file holds, before training on it.

use std::path::PathBuf;

use clap::Args;

use super::args::{DataArgs, PrecisionArg};
use super::stdout::write_stdout;
use crate::data::describe::{self, Description};
use crate::error::{Result, exit};
use crate::float::{Precision, Real};

const EXAMPLES: &str = "\
Examples:
  perceptron info                               describe the bundled digits (3 vs 5) data
  perceptron info data/heart_scale.svm          format, shape, labels, radius
  perceptron info letters.csv --positive A      how `train --positive A` would label it
  perceptron info big.svm.gz --precision f64 --json

Exit status: 0 success; 1 error (the file cannot be read); 2 bad command line;
130 interrupted (Ctrl-C, SIGTERM or SIGHUP).";

/// Describe a data file: format, shape, sparsity, labels and radius.
///
/// Reads the file exactly as `perceptron train` would (same parser, same
/// options) and reports: the format, rows and feature columns, the non-zeros
/// and density, the storage (dense or sparse) and its size in memory, every
/// distinct label value with its row count, how `train` would map the labels
/// to -1/+1 (or why it could not), the radius D = max ||x~|| that the
/// convergence theorem uses, with and without the bias feature 1, and the
/// smallest and largest feature values. Any number of label values is fine
/// here; only `train` needs exactly two classes (or --positive).
#[derive(Args, Debug)]
#[command(after_help = EXAMPLES)]
pub struct InfoArgs {
    /// Data file (CSV or LIBSVM, optionally .gz, or binary .pbin; `-` reads
    /// standard input). Omit it to describe the bundled UCI digits 3-vs-5
    /// dataset.
    #[arg(value_name = "DATA")]
    pub data: Option<PathBuf>,

    /// Print the description as one JSON object on stdout.
    #[arg(long)]
    pub json: bool,

    /// Show the labels as `train --positive LABEL` would map them: LABEL is
    /// +1 and every other value -1. An error if LABEL is not in the file.
    #[arg(long, value_name = "LABEL", allow_hyphen_values = true)]
    pub positive: Option<String>,

    /// The precision to read the values in (as `train --precision`); it
    /// decides the bytes in memory and which values are out of range.
    #[arg(long, value_enum, default_value = "f32")]
    pub precision: PrecisionArg,

    #[command(flatten)]
    pub data_args: DataArgs,
}

pub fn run(args: &InfoArgs) -> Result<i32> {
    let description = match Precision::from(args.precision) {
        Precision::F32 => describe_in::<f32>(args)?,
        Precision::F64 => describe_in::<f64>(args)?,
    };
    let text = super::stdout::summary(args.json, &description, || description.render())?;
    write_stdout(|out| out.write_all(text.as_bytes()))?;
    Ok(exit::SUCCESS)
}

/// Reads the file in precision `F`, warns of options its format ignores,
/// and describes it, a refusal of the labels said in the command line's
/// words (its flags).
fn describe_in<F: Real>(args: &InfoArgs) -> Result<Description> {
    let opts = args.data_args.load_options(None);
    let (raw, path) = describe::read::<F>(args.data.as_deref(), &opts)?;
    super::args::warn_csv_options(&opts, raw.format, &path);
    let mut description = describe::describe(&raw, &path, args.positive.as_deref())?;
    description.mapping_error = description
        .mapping
        .as_ref()
        .err()
        .map(super::errors::label_rule);
    Ok(description)
}
