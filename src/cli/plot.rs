//! `perceptron plot`: pictures of a model, of its training and of its data.

use std::path::{Path, PathBuf};

use clap::{Args, Subcommand};

use super::args::DataArgs;
use super::predict::load_for_model;
use super::training_args::{BothWays, TrainingFlags};
use crate::data::{self, Dataset};
use crate::error::{Error, Result, exit};
use crate::float::{Precision, Real};
use crate::model::{self, AnyModel, Model};
use crate::plot::on_data::{self, binary_only};
use crate::plot::trace::Trace;
use crate::plot::{self, ImageFormat};

const EXAMPLES: &str = "\
Examples:
  perceptron train data/digits_3v5.csv -o m.json
  perceptron plot curve m.json -o curve.svg                 mistakes per epoch, M, the bound
  perceptron plot margins m.json data/digits_3v5.csv -o margins.png
  perceptron plot boundary m.json data/digits_3v5.csv -o boundary.svg   (64-D: projected)
  perceptron plot bias data/iris_petals.csv -o bias.png     without and with the bias
  perceptron plot trace data/iris_petals.csv -o trace.png   the updates, small multiples
  perceptron plot trace data/iris_petals.csv -o trace.gif   the same, animated
  perceptron train data.csv --plot pictures/                curve.svg and margins.svg

The format comes from the extension of -o: .svg, .png, or .gif (trace only).
Files are written atomically: a failed run leaves no partial picture.

Exit status: 0 success; 1 error; 2 bad command line; 130 interrupted
(Ctrl-C, SIGTERM or SIGHUP).";

/// Draw a picture of a model, its training or its data (SVG, PNG or GIF).
///
/// Pictures have titled axes, a legend and colour-blind-safe colours (the
/// Okabe-Ito palette; the two classes also differ in shape). Text uses the
/// DejaVu Sans font compiled into the tool, so no system fonts are needed.
#[derive(Args, Debug)]
#[command(after_help = EXAMPLES)]
pub struct PlotArgs {
    #[command(subcommand)]
    pub kind: PlotKind,
}

#[derive(Subcommand, Debug)]
pub enum PlotKind {
    Curve(CurveArgs),
    Margins(MarginsArgs),
    Boundary(BoundaryArgs),
    Bias(BiasArgs),
    Trace(TraceArgs),
}

/// Where the picture goes and how big it is.
#[derive(Args, Clone, Debug)]
pub struct OutputArgs {
    /// The picture to write: FILE.svg or FILE.png (FILE.gif: an animation,
    /// `trace` only); `-` writes SVG to standard output. Written atomically:
    /// an existing file is only replaced by a complete picture.
    #[arg(short, long, value_name = "FILE")]
    pub output: PathBuf,

    /// Width and height in pixels, for example 1200x800 (default: a size
    /// that suits the kind of picture).
    #[arg(long, value_name = "WxH", value_parser = plot::parse_size)]
    pub size: Option<(u32, u32)>,
}

impl OutputArgs {
    /// Checks the destination and the format before any work: it must not
    /// be one of the command's `inputs` (a link to one included), which
    /// writing the picture would destroy.
    fn check(&self, gif_allowed: bool, inputs: &[&Path]) -> Result<ImageFormat> {
        let format = ImageFormat::from_path(&self.output)?;
        if format == ImageFormat::Gif && !gif_allowed {
            return Err(Error::Usage(format!(
                "{}: only `plot trace` makes animated GIFs; use .svg or .png",
                self.output.display()
            )));
        }
        if let Some(size) = self.size {
            plot::check_size(size)?;
        }
        crate::output::check_destination(&self.output)?;
        crate::output::check_not_an_input(&self.output, inputs)?;
        Ok(format)
    }
}

const CURVE_EXAMPLES: &str = "\
Examples:
  perceptron plot curve model.json -o curve.svg
  perceptron plot curve model.json -o curve.png --size 1000x600

Exit status: 0 success; 1 error; 2 bad command line; 130 interrupted
(Ctrl-C, SIGTERM or SIGHUP).";

/// Mistakes per epoch of the run that trained MODEL, on a log scale.
///
/// Also draws the running total of mistakes, which ends at M, and, when the
/// run converged (with the classic rule, not --margin), the convergence
/// theorem's bound (D/gamma)^2 as a dashed line: the running total can
/// never cross it. Epochs without a mistake
/// (the last one of a converged run) are marked on the bottom edge.
#[derive(Args, Debug)]
#[command(after_help = CURVE_EXAMPLES)]
pub struct CurveArgs {
    /// The model file written by `perceptron train`.
    #[arg(value_name = "MODEL")]
    pub model: PathBuf,

    #[command(flatten)]
    pub out: OutputArgs,
}

const MARGINS_EXAMPLES: &str = "\
Examples:
  perceptron plot margins model.json data/digits_3v5.csv -o margins.svg
  perceptron plot margins model.json test.csv -o test-margins.png

Exit status: 0 success; 1 error; 2 bad command line; 130 interrupted
(Ctrl-C, SIGTERM or SIGHUP).";

/// A histogram of the normalised margins y (w·x + b) / ||(w, b)|| of MODEL
/// on DATA.
///
/// Marks gamma, the smallest margin (on the training data, the gamma of the
/// training report), and the decision boundary at 0. Misclassified rows have
/// margins <= 0 and are drawn in their own colour on the negative side.
#[derive(Args, Debug)]
#[command(after_help = MARGINS_EXAMPLES)]
pub struct MarginsArgs {
    /// The model file written by `perceptron train`.
    #[arg(value_name = "MODEL")]
    pub model: PathBuf,

    /// Labelled data (CSV or LIBSVM, optionally .gz; `-` reads standard
    /// input) in the model's layout.
    #[arg(value_name = "DATA")]
    pub data: PathBuf,

    #[command(flatten)]
    pub out: OutputArgs,

    #[command(flatten)]
    pub data_args: DataArgs,
}

const BOUNDARY_EXAMPLES: &str = "\
Examples:
  perceptron plot boundary model.json data/iris_petals.csv -o boundary.svg
  perceptron plot boundary model.json data/digits_3v5.csv -o digits.png

See also `perceptron plot bias DATA`: the same picture for DATA trained
without and with the bias, side by side.

Exit status: 0 success; 1 error; 2 bad command line; 130 interrupted
(Ctrl-C, SIGTERM or SIGHUP).";

/// The rows of DATA coloured by label, with MODEL's boundary w·x + b = 0,
/// its normal vector w and the margin band.
///
/// 2-D data is drawn as it is, one unit the same length on both axes. Data
/// with more features is projected onto w (horizontal axis; the boundary
/// becomes a vertical line) and onto the data's first principal direction
/// orthogonal to w (vertical axis), and the title says so. 1-D data is drawn
/// against the row number. The band is where |w·x + b| is smaller than the
/// smallest y (w·x + b): no row lies inside it. Misclassified rows are
/// ringed.
#[derive(Args, Debug)]
#[command(after_help = BOUNDARY_EXAMPLES)]
pub struct BoundaryArgs {
    /// The model file written by `perceptron train`.
    #[arg(value_name = "MODEL")]
    pub model: PathBuf,

    /// Labelled data (CSV or LIBSVM, optionally .gz; `-` reads standard
    /// input) in the model's layout.
    #[arg(value_name = "DATA")]
    pub data: PathBuf,

    #[command(flatten)]
    pub out: OutputArgs,

    #[command(flatten)]
    pub data_args: DataArgs,
}

const BIAS_EXAMPLES: &str = "\
Examples:
  perceptron plot bias data/iris_petals.csv -o bias.svg
  perceptron plot bias points.csv -o bias.png --max-epochs 200

Exit status: 0 success; 1 error; 2 bad command line; 130 interrupted
(Ctrl-C, SIGTERM or SIGHUP).";

/// The boundary picture of DATA trained without the bias and with it, side
/// by side: why the perceptron needs a bias.
///
/// Trains both variants with the textbook loop (rows in file order). Without
/// the bias every boundary passes through the origin; on data that needs the
/// bias the left panel says that no line through the origin separates the
/// classes (checked exactly for 1-D and 2-D data) and rings the rows the
/// last model misclassifies.
#[derive(Args, Debug)]
#[command(after_help = BIAS_EXAMPLES)]
pub struct BiasArgs {
    /// Labelled data file (CSV or LIBSVM, optionally .gz; `-` reads standard
    /// input).
    #[arg(value_name = "DATA")]
    pub data: PathBuf,

    /// The flags of both runs (no --no-bias: one run is without the bias,
    /// the other with it).
    #[command(flatten)]
    pub training: TrainingFlags<BothWays>,

    #[command(flatten)]
    pub out: OutputArgs,

    #[command(flatten)]
    pub data_args: DataArgs,
}

const TRACE_EXAMPLES: &str = "\
Examples:
  perceptron plot trace data/iris_petals.csv -o trace.svg
  perceptron plot trace data/iris_petals.csv -o trace.gif --max-frames 30
  perceptron plot trace points.csv -o trace.png --precision f64 --no-bias

Exit status: 0 success; 1 error; 2 bad command line; 130 interrupted
(Ctrl-C, SIGTERM or SIGHUP).";

/// The updates of a real training run on 2-D data: small multiples, or an
/// animated GIF with -o FILE.gif.
///
/// Replays the classic perceptron with the tool's own reference arithmetic,
/// so every frame is an update that `perceptron train` makes with the same
/// precision, order and bias setting (and neither --margin nor --init).
/// Each frame shows the boundary before the update (dashed), the
/// misclassified row that caused it (ringed), and the boundary after, with
/// its normal w. When there are more updates than --max-frames, the first
/// ones and the last are shown and the title says so.
#[derive(Args, Debug)]
#[command(after_help = TRACE_EXAMPLES)]
pub struct TraceArgs {
    /// Labelled data file with two features (CSV or LIBSVM, optionally .gz;
    /// `-` reads standard input).
    #[arg(value_name = "DATA")]
    pub data: PathBuf,

    /// At most this many frames (updates) are drawn.
    #[arg(long, default_value_t = 12, value_name = "N")]
    pub max_frames: usize,

    /// The flags of the replayed run.
    #[command(flatten)]
    pub training: TrainingFlags,

    /// Visit rows in the fixed pseudo-random order of `train --shuffle`
    /// (needs --seed).
    #[arg(long, requires = "seed")]
    pub shuffle: bool,

    /// Seed of the --shuffle order.
    #[arg(long, value_name = "S", requires = "shuffle")]
    pub seed: Option<u64>,

    /// GIF only: how long each frame is shown, in milliseconds.
    #[arg(long, default_value_t = 1500, value_name = "MS")]
    pub delay: u32,

    #[command(flatten)]
    pub out: OutputArgs,

    #[command(flatten)]
    pub data_args: DataArgs,
}

pub fn run(args: &PlotArgs) -> Result<i32> {
    match &args.kind {
        PlotKind::Curve(a) => curve(a)?,
        PlotKind::Margins(a) => {
            a.out.check(false, &[&a.model, &a.data])?;
            match binary_only(&a.model, model::load(&a.model)?, "margins")? {
                AnyModel::F32(m) => margins(a, &m)?,
                AnyModel::F64(m) => margins(a, &m)?,
            }
        }
        PlotKind::Boundary(a) => {
            a.out.check(false, &[&a.model, &a.data])?;
            match binary_only(&a.model, model::load(&a.model)?, "boundary")? {
                AnyModel::F32(m) => boundary(a, &m)?,
                AnyModel::F64(m) => boundary(a, &m)?,
            }
        }
        PlotKind::Bias(a) => match Precision::from(a.training.precision) {
            Precision::F32 => bias::<f32>(a)?,
            Precision::F64 => bias::<f64>(a)?,
        },
        PlotKind::Trace(a) => match Precision::from(a.training.precision) {
            Precision::F32 => trace::<f32>(a)?,
            Precision::F64 => trace::<f64>(a)?,
        },
    }
    Ok(exit::SUCCESS)
}

fn curve(a: &CurveArgs) -> Result<()> {
    a.out.check(false, &[&a.model])?;
    let model = model::load(&a.model)?;
    plot::save(
        &plot::curve::Curve::from_training(model.training()),
        &a.out.output,
        a.out.size,
    )
}

fn margins<F: Real>(a: &MarginsArgs, model: &Model<F>) -> Result<()> {
    let raw = load_for_model(model, &a.model, &a.data, &a.data_args.load_options(None))?;
    let figure = on_data::margins(model, &a.model, raw, &a.data)?;
    plot::save(&figure, &a.out.output, a.out.size)
}

fn boundary<F: Real>(a: &BoundaryArgs, model: &Model<F>) -> Result<()> {
    let raw = load_for_model(model, &a.model, &a.data, &a.data_args.load_options(None))?;
    let figure = on_data::boundary(model, &a.model, raw, &a.data)?;
    plot::save(&figure, &a.out.output, a.out.size)
}

fn check_epochs(max_epochs: usize) -> Result<()> {
    if max_epochs == 0 {
        return Err(Error::Usage("--max-epochs must be at least 1".into()));
    }
    Ok(())
}

fn bias<F: Real>(a: &BiasArgs) -> Result<()> {
    check_epochs(a.training.max_epochs)?;
    a.out.check(false, &[&a.data])?;
    let opts = a.data_args.load_options(a.training.positive.clone());
    let data: Dataset<F> = data::load(&a.data, &opts)?;
    super::args::warn_csv_options(&opts, data.format, &a.data);
    let figure = plot::boundary::Boundary::compare_bias(&data, a.training.max_epochs)?;
    plot::save(&figure, &a.out.output, a.out.size)
}

fn trace<F: Real>(a: &TraceArgs) -> Result<()> {
    check_epochs(a.training.max_epochs)?;
    if a.max_frames == 0 {
        return Err(Error::Usage("--max-frames must be at least 1".into()));
    }
    let format = a.out.check(true, &[&a.data])?;
    let opts = a.data_args.load_options(a.training.positive.clone());
    let data: Dataset<F> = data::load(&a.data, &opts)?;
    super::args::warn_csv_options(&opts, data.format, &a.data);
    let seed = if a.shuffle { a.seed } else { None };
    let t = &a.training;
    let figure = Trace::of_run(data, !t.bias.no_bias, t.max_epochs, seed, a.max_frames)?;
    match format {
        ImageFormat::Gif => plot::save_gif(&figure, &a.out.output, a.out.size, a.delay),
        _ => plot::save(&figure, &a.out.output, a.out.size),
    }
}
