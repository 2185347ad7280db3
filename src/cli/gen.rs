//! `perceptron gen`: synthetic separable data for benchmarks and tests.

use std::path::PathBuf;

use clap::Args;

use super::args::PrecisionArg;
use crate::error::{Error, Result, exit};
use crate::float::Precision;
use crate::r#gen::GenParams;

const EXAMPLES: &str = "\
Examples:
  perceptron gen -o small.csv                       1000 rows x 10 features
  perceptron gen --rows 1000000 --features 256 -o dense.pbin
  perceptron gen --rows 1000000 --features 1000000 --density sparse --nnz 64 -o sparse.pbin
  perceptron gen --rows 5000 --planted-margin 0.01 --seed 7 -o hard.svm
  perceptron gen --rows 5000 --noise 0.05 -o noisy.csv    not separable
  perceptron train dense.pbin                        converges: (R/gamma)^2 bounds the mistakes

The same options and --seed always give byte-identical files, on every
platform and in every version. The algorithm is documented in the source
(src/gen/mod.rs).

Exit status: 0 success; 1 error; 2 bad command line; 130 interrupted
(Ctrl-C, SIGTERM or SIGHUP: the partial output is removed).";

/// Generate linearly separable data with a planted margin.
///
/// Draws a unit vector u (in the augmented space x~ = [x, 1], unless
/// --no-bias) and rows whose label y satisfies y u·x~ >= gamma (--planted-margin)
/// with ||x~|| <= R (--radius): by the perceptron convergence theorem,
/// training with the same bias setting makes at most (R/gamma)^2 mistakes.
/// Points too close to the hyperplane are pushed onto the margin. Rows are
/// streamed to OUT (atomically), so any number fits in little memory.
/// Ctrl-C or SIGTERM stops at once: the partial output is removed, an
/// existing OUT is left as it was, and the exit status is 130.
#[derive(Args, Debug)]
#[command(after_help = EXAMPLES)]
pub struct GenArgs {
    /// Where to write; the extension picks the format: .pbin (binary), .csv,
    /// or .svm/.libsvm (LIBSVM). Text values round-trip exactly. `-` writes
    /// to standard output, CSV for dense data and LIBSVM for sparse (the
    /// summary then goes to stderr).
    #[arg(short, long, value_name = "OUT")]
    pub output: PathBuf,

    /// Number of rows.
    #[arg(long, default_value_t = 1000, value_name = "N")]
    pub rows: u64,

    /// Number of features D (the bias excluded).
    #[arg(long, default_value_t = 10, value_name = "D")]
    pub features: u64,

    /// `dense` stores every feature; `sparse` stores --nnz per row.
    #[arg(long, value_enum, default_value = "dense")]
    pub density: DensityArg,

    /// Sparse: non-zeros per row, at distinct random features
    /// (default: 10, or D if smaller).
    #[arg(long, value_name = "K")]
    pub nnz: Option<u64>,

    /// The planted margin gamma. Default: r sqrt(K/(D+1)) / 10, a tenth of
    /// what a typical row can reach (0.1 for dense data with the default
    /// radius), where r = sqrt(R^2 - 1) is the features' radius (r = R with
    /// --no-bias) and K the values per row. (`train --margin` is another
    /// thing: the update threshold tau.)
    #[arg(long, value_name = "GAMMA")]
    pub planted_margin: Option<f64>,

    /// The former name of --planted-margin, refused with a message that
    /// says so (for `train`, --margin is the update threshold tau).
    #[arg(
        long = "margin",
        hide = true,
        value_name = "GAMMA",
        allow_negative_numbers = true
    )]
    pub renamed_margin: Option<String>,

    /// The bound R on ||x~||. Default: sqrt(2) with the bias (the features
    /// lie in the unit ball), 1 with --no-bias. With the bias it must
    /// exceed 1, since x~ = [x, 1].
    #[arg(long, value_name = "R")]
    pub radius: Option<f64>,

    /// Flip each label with probability P after planting. With P > 0 the data
    /// is (almost surely) NOT linearly separable, and training will not
    /// converge.
    #[arg(long, default_value_t = 0.0, value_name = "P")]
    pub noise: f64,

    /// Seed of the generator.
    #[arg(long, default_value_t = 0, value_name = "S")]
    pub seed: u64,

    /// Plant a hyperplane through the origin (x~ = x, no bias coordinate).
    #[arg(long)]
    pub no_bias: bool,

    /// Precision of the stored values. Text output writes each in the
    /// shortest form that parses back to the same value in this precision;
    /// train on it in the same precision (a .pbin file also widens exactly).
    #[arg(long, value_enum, default_value = "f32")]
    pub precision: PrecisionArg,

    /// Print the summary as one JSON object on stdout.
    #[arg(long)]
    pub json: bool,
}

#[derive(clap::ValueEnum, Clone, Copy, Debug, PartialEq, Eq)]
pub enum DensityArg {
    Dense,
    Sparse,
}

impl GenArgs {
    /// The library's parameters for these arguments.
    pub fn params(&self) -> Result<GenParams> {
        if let Some(v) = &self.renamed_margin {
            return Err(Error::Usage(format!(
                "gen's planted margin is --planted-margin {v} (--margin is train's update \
                 threshold tau)"
            )));
        }
        Ok(GenParams {
            output: self.output.clone(),
            rows: self.rows,
            features: self.features,
            sparse: self.density == DensityArg::Sparse,
            nnz: self.nnz,
            planted_margin: self.planted_margin,
            radius: self.radius,
            noise: self.noise,
            seed: self.seed,
            bias: !self.no_bias,
            precision: Precision::from(self.precision),
        })
    }
}

pub fn run(args: &GenArgs) -> Result<i32> {
    let run = args.params()?.check()?;
    let report = run.run()?;
    let text = super::stdout::summary(args.json, &report, || report.render())?;
    super::stdout::print_summary(&text, run.writes_stdout())?;
    Ok(exit::SUCCESS)
}
