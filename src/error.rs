//! Typed errors: each names the rule that was broken and the value that broke it.

use std::fmt;
use std::path::{Path, PathBuf};

/// Where in an input file something went wrong (1-based line and column).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Location {
    pub path: PathBuf,
    pub line: u64,
    /// 1-based character column of the offending token, when known.
    pub column: Option<u64>,
}

impl fmt::Display for Location {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}:{}", self.path.display(), self.line)?;
        if let Some(c) = self.column {
            write!(f, ":{c}")?;
        }
        Ok(())
    }
}

/// A reading option that would make a file readable, named by what it
/// sets so that each front end can say it in its own terms (a command-line
/// flag, a keyword argument): the library itself never names a flag.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Remedy {
    /// Read the file as CSV (a LIBSVM read found a CSV line).
    ReadAsCsv,
    /// Split fields at this byte (a detected delimiter looks wrong).
    Delimiter(u8),
    /// Take the first line as a header (it was read as data).
    Header,
    /// Take this column (its header name, else its 1-based number) as the
    /// label (a feature column holds text, as labels do).
    LabelColumn(String),
    /// Count LIBSVM feature indices from 0 (an index 0 was found where
    /// they count from 1).
    ZeroBased,
}

impl Remedy {
    /// The remedy in the library's own words, as `Display` gives it.
    pub fn neutral_words(self) -> String {
        match self {
            Remedy::ReadAsCsv => "read it as CSV".to_owned(),
            Remedy::Delimiter(d) => format!("set the delimiter to {}", delimiter_words(d)),
            Remedy::Header => "say that the file has a header".to_owned(),
            Remedy::LabelColumn(c) if c == "last" => "take the last column as the label".into(),
            Remedy::LabelColumn(c) if c.parse::<usize>().is_ok() => {
                format!("take column {c} as the label")
            }
            Remedy::LabelColumn(c) => format!("take the column named \"{c}\" as the label"),
            Remedy::ZeroBased => "read its indices as zero-based".to_owned(),
        }
    }
}

/// A delimiter as the front ends name it: `tab`, else the character in
/// single quotes.
pub fn delimiter_words(d: u8) -> String {
    if d == b'\t' {
        "tab".to_owned()
    } else {
        format!("'{}'", char::from(d))
    }
}

/// Why a line may have failed, and the option that would fix it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Hint {
    /// The explanation, written to be followed by the remedy (for example
    /// "if fields are separated by tab, ").
    pub why: String,
    pub remedy: Remedy,
}

/// ` (why remedy)` with the remedy worded by `words`, or nothing.
pub fn hint_text(hint: Option<&Hint>, words: impl Fn(Remedy) -> String) -> String {
    match hint {
        Some(h) => format!(" ({}{})", h.why, words(h.remedy.clone())),
        None => String::new(),
    }
}

/// Everything that can go wrong, grouped by what the user must fix.
#[derive(Debug, thiserror::Error)]
pub enum Error {
    /// A file could not be opened, read or written.
    #[error("{path}: {action}: {source}", path = .path.display())]
    Io {
        path: PathBuf,
        action: &'static str,
        #[source]
        source: std::io::Error,
    },

    /// A line of a data file breaks the format; `hint`, when there is one,
    /// says why and which reading option would fix it.
    #[error("{location}: {message}{}", hint_text(.hint.as_ref(), Remedy::neutral_words))]
    Parse {
        location: Location,
        message: String,
        hint: Option<Hint>,
    },

    /// The data as a whole cannot be used (empty, one class, ...).
    #[error("{path}: {message}", path = .path.display())]
    Data { path: PathBuf, message: String },

    /// A model file is unreadable, corrupt, or does not fit the data.
    #[error("{path}: {message}", path = .path.display())]
    Model { path: PathBuf, message: String },

    /// Training could not continue (for example, a weight overflowed).
    #[error("{0}")]
    Train(String),

    /// A GPU adapter is missing, lacks a feature, or failed.
    #[error("{0}\nhint: train on the CPU instead")]
    Gpu(String),

    /// Training parameters that break a rule (see [`ParamError`]).
    #[error("{0}")]
    Param(#[from] ParamError),

    /// A checkpoint that belongs to another run (see [`Difference`]).
    #[error(
        "{path} cannot be resumed by this run: {list}. Resume with the same data and options as the interrupted run.",
        path = .path.display(),
        list = .differences.iter().map(ToString::to_string).collect::<Vec<_>>().join("; ")
    )]
    Resume {
        path: PathBuf,
        differences: Vec<Difference>,
    },

    /// A model that cannot be the starting point of this run.
    #[error("{path} cannot start this run: {reason}", path = .path.display())]
    WarmStart {
        path: PathBuf,
        reason: WarmStartError,
    },

    /// Labels that cannot be mapped to two classes (see
    /// [`LabelRuleError`]).
    #[error("{path}: {rule}", path = .path.display())]
    Labels { path: PathBuf, rule: LabelRuleError },

    /// Data whose columns do not fit a model (see [`ColumnMismatch`]).
    #[error("{data} does not fit the model {model}: {mismatch}", data = .data.display(), model = .model.display())]
    Columns {
        model: PathBuf,
        data: PathBuf,
        mismatch: ColumnMismatch,
    },

    /// Options that contradict each other or a value out of range.
    #[error("{0}")]
    Usage(String),

    /// The system refused a resource the tool needs (worker threads).
    #[error("{0}")]
    System(String),
}

impl Error {
    pub fn io(path: &Path, action: &'static str, source: std::io::Error) -> Self {
        Error::Io {
            path: path.to_path_buf(),
            action,
            source,
        }
    }

    pub fn parse(path: &Path, line: u64, column: Option<u64>, message: impl Into<String>) -> Self {
        Error::Parse {
            location: Location {
                path: path.to_path_buf(),
                line,
                column,
            },
            message: message.into(),
            hint: None,
        }
    }

    /// This error with `hint` (a parse error's; any other is returned as
    /// it is).
    pub fn with_hint(self, hint: Option<Hint>) -> Self {
        match self {
            Error::Parse {
                location, message, ..
            } => Error::Parse {
                location,
                message,
                hint,
            },
            other => other,
        }
    }

    pub fn data(path: &Path, message: impl Into<String>) -> Self {
        Error::Data {
            path: path.to_path_buf(),
            message: message.into(),
        }
    }

    pub fn model(path: &Path, message: impl Into<String>) -> Self {
        Error::Model {
            path: path.to_path_buf(),
            message: message.into(),
        }
    }
}

/// A training parameter that breaks a rule: the variant names the rule, and
/// carries the value that broke it. Front ends say it in their own terms
/// (the CLI names its flags).
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum ParamError {
    /// At least one epoch must run.
    #[error("the epoch cap must be at least 1, not {0}")]
    MaxEpochs(usize),
    /// The margin threshold τ must be a finite number >= 0 in both
    /// precisions.
    #[error("the margin threshold must be a finite number >= 0, got \"{0}\"{reason}", reason = below_zero(.0))]
    Margin(String),
    /// A row's weight must be a finite number >= 0 (a negative one would
    /// turn its corrections around).
    #[error("sample_weight[{row}] is {value}: a row's weight must be a finite number >= 0")]
    SampleWeight { row: usize, value: String },
    /// One order: fixed once, or reshuffled every epoch.
    #[error("the rows are shuffled once or before every epoch, not both")]
    TwoShuffles,
    /// The pocket variant keeps one weight vector; one-vs-rest trains several.
    #[error("the pocket variant is not available with one-vs-rest training")]
    PocketWithMulticlass,
    /// Standard scaling subtracts each feature's mean, which would make
    /// sparse data dense; sparse data is scaled by its maximum absolute
    /// values, which keeps zeros.
    #[error(
        "standard scaling would make sparse data dense (it subtracts each feature's mean); scale sparse data by its maximum absolute values"
    )]
    SparseStandardScaling,
    /// Class weights are `balanced` or `LABEL=W,...` with finite positive
    /// weights, each label once.
    #[error("the class weights \"{text}\" are not valid: {why}")]
    ClassWeight { text: String, why: String },
    /// Early stopping's tolerance must be a finite number >= 0.
    #[error("the early-stopping tolerance must be a finite number >= 0, got {0}")]
    Tol(String),
    /// Early stopping needs at least one epoch without improvement.
    #[error("the epochs without improvement that stop a run must be at least 1, not {0}")]
    NIterNoChange(usize),
    /// The held-out fraction must be in (0, 1).
    #[error("the held-out fraction must be between 0 and 1, got {0}")]
    ValidationFraction(String),
    /// Held-out rows given by index must ascend, each once, and their
    /// weights be finite numbers >= 0 (`why` says which rule broke).
    #[error("the held-out rows are not valid: {0}")]
    HeldOut(String),
    /// An option that needs every row in one process, asked of a
    /// distributed run (`mode`: `exact` or `mix`).
    #[error(
        "{option} is not available with {mode} distributed training: {}; train in one process to use it",
        .option.why()
    )]
    OneProcessOnly {
        option: OneProcessOption,
        mode: &'static str,
    },
    /// The intercept's decay scales the bias's step: a finite number > 0.
    #[error("the intercept decay must be a finite number > 0, got {0}")]
    InterceptDecay(String),
    /// scikit-learn keeps its intercept in float64 beside float32 weights;
    /// this package's f32 weights hold the bias among them, so the decayed
    /// steps would round differently.
    #[error(
        "an intercept decay needs f64 precision: scikit-learn sums the decayed steps of the intercept in float64, which an f32 bias would round differently"
    )]
    InterceptDecayPrecision,
    /// An intercept decay scales the bias's updates, so it needs the bias.
    #[error("an intercept decay scales the bias's updates, but this run trains without a bias")]
    InterceptDecayWithoutBias,
    /// Distributed mix mode trains the classic rule only; `variant` is
    /// `averaged` or `pocket`.
    #[error(
        "distributed mix mode trains the classic perceptron (with a margin, one-vs-rest and a warm start); the {variant} variant needs exact mode"
    )]
    MixVariant { variant: &'static str },
}

/// The options only one process can train with: they need statistics,
/// scores or held-out rows of the whole dataset.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum OneProcessOption {
    /// Feature scaling, by the scaling's name.
    #[error("feature scaling ({0})")]
    Scale(&'static str),
    /// Class weights, as given.
    #[error("class weights ({0})")]
    ClassWeight(String),
    /// Early stopping on a held-out fraction of the rows (as written).
    #[error("early stopping on a held-out fraction ({0})")]
    ValidationFraction(String),
    /// An intercept decay (as written).
    #[error("an intercept decay ({0})")]
    InterceptDecay(String),
    /// Early stopping on the training score (the tolerance as written).
    #[error("early stopping (tolerance {tol}, {n_iter_no_change} epochs without improvement)")]
    EarlyStopping {
        tol: String,
        n_iter_no_change: usize,
    },
}

impl OneProcessOption {
    /// Why a distributed run cannot train with it.
    pub fn why(&self) -> &'static str {
        match self {
            OneProcessOption::Scale(_) => {
                "its statistics are those of every row, taken before the first update"
            }
            OneProcessOption::ClassWeight(_) => {
                "distributed training applies unweighted updates only"
            }
            OneProcessOption::InterceptDecay(_) => {
                "distributed training applies the textbook update only"
            }
            OneProcessOption::ValidationFraction(_) | OneProcessOption::EarlyStopping { .. } => {
                "its scores and held-out rows are those of the whole dataset in one process"
            }
        }
    }
}

/// Why a model cannot be the starting point of a run.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum WarmStartError {
    /// A binary model for a one-vs-rest run, or the other way round.
    #[error("it has {model_heads} heads but this run trains {run_heads}")]
    Heads {
        model_heads: usize,
        run_heads: usize,
    },
    /// An f64 model cannot start an f32 run exactly.
    #[error("it is an f64 model and this run trains in f32")]
    Precision { one_vs_rest: bool },
    #[error("it has {model} features but the data has {data}")]
    Features { model: usize, data: usize },
    /// `model`: whether the model has a bias.
    #[error("it was trained {} the bias, this run {}", if *.model { "with" } else { "without" }, if *.model { "without" } else { "with" })]
    Bias { model: bool },
    /// Its labels or classes differ from the data's, or are in another order.
    #[error("it maps the labels differently from this data")]
    Labels,
    /// Its weights read features scaled otherwise than this run asks: the
    /// scalings' names (`None`: unscaled).
    #[error("its feature scaling is {}, this run's {}", .model.unwrap_or("none"), .run.unwrap_or("none"))]
    Scaling {
        model: Option<&'static str>,
        run: Option<&'static str>,
    },
}

/// Why data cannot be read with a model: its feature columns are not the
/// model's features.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum ColumnMismatch {
    /// CSV data with another number of feature columns than the model has
    /// features (`columns`: the file's columns, the label's included when
    /// `labelled`).
    #[error(
        "the model has {model} features but the data has {data} feature columns; CSV data must have the model's columns"
    )]
    Count {
        model: usize,
        data: usize,
        columns: usize,
        labelled: bool,
    },
    /// Sparse or binary data with more features than the model (fewer
    /// count as zeros).
    #[error(
        "the model has {model} features but the data has {data}; rows may have fewer features than the model (the missing ones count as zeros), never more"
    )]
    TooMany { model: usize, data: usize },
    /// A feature the model was trained on that the data's header lacks.
    #[error("the model's feature \"{name}\" is not a column of the data's header")]
    Missing { name: String },
    /// A header column the model was not trained on.
    #[error("the data's column \"{name}\" is not one of the model's features")]
    Unknown { name: String },
    /// The header's names are the model's in another order, but some name
    /// repeats, so the columns cannot be matched by name.
    #[error(
        "feature {position} is \"{model}\" in the model but \"{data}\" in the data, and names repeat, so the columns cannot be matched by name"
    )]
    Ambiguous {
        position: usize,
        model: String,
        data: String,
    },
}

/// One way in which a checkpoint's run differs from the run resuming it
/// (the checkpoint's value first, then this run's).
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum Difference {
    /// Other rows, features or content (fingerprints).
    #[error(
        "the data differ: the checkpoint was made on {was_rows} rows x {was_features} features with fingerprint {was_fingerprint}, this data has {rows} rows x {features} features with fingerprint {fingerprint}"
    )]
    Data {
        was_rows: usize,
        was_features: usize,
        was_fingerprint: String,
        rows: usize,
        features: usize,
        fingerprint: String,
    },
    #[error("the precision was {was}, now {now}")]
    Precision { was: String, now: String },
    #[error("the bias was {}, now {}", on(*.was), on(*.now))]
    Bias { was: bool, now: bool },
    #[error("the epoch cap was {was}, now {now}")]
    MaxEpochs { was: usize, now: usize },
    /// The shuffle seed (None: file order).
    #[error("the row order was {}, now {}", order(*.was), order(*.now))]
    Order { was: Option<u64>, now: Option<u64> },
    /// scikit-learn's reshuffle before every epoch, as JSON (None: off).
    #[error("the reshuffle before every epoch was {}, now {}", .was.as_deref().unwrap_or("off"), .now.as_deref().unwrap_or("off"))]
    Reshuffle {
        was: Option<String>,
        now: Option<String>,
    },
    #[error("the variant was {was}, now {now}")]
    Variant { was: String, now: String },
    /// The margin threshold as written (None: the classic rule).
    #[error("the margin threshold was {}, now {}", .was.as_deref().unwrap_or("none"), .now.as_deref().unwrap_or("none"))]
    Margin {
        was: Option<String>,
        now: Option<String>,
    },
    #[error("one-vs-rest training was {}, now {}", on(*.was), on(*.now))]
    Multiclass { was: bool, now: bool },
    /// The intercept decay as written (None: the textbook update).
    #[error("the intercept decay was {}, now {}", .was.as_deref().unwrap_or("none"), .now.as_deref().unwrap_or("none"))]
    InterceptDecay {
        was: Option<String>,
        now: Option<String>,
    },
    /// The early-stopping rule (None: off), described.
    #[error("early stopping was {}, now {}", .was.as_deref().unwrap_or("off"), .now.as_deref().unwrap_or("off"))]
    EarlyStop {
        was: Option<String>,
        now: Option<String>,
    },
    /// The class weights as given (None: unweighted).
    #[error("the class weights were {}, now {}", .was.as_deref().unwrap_or("none"), .now.as_deref().unwrap_or("none"))]
    ClassWeight {
        was: Option<String>,
        now: Option<String>,
    },
    /// The feature scaling (None: unscaled).
    #[error("the feature scaling was {}, now {}", .was.as_deref().unwrap_or("none"), .now.as_deref().unwrap_or("none"))]
    Scale {
        was: Option<String>,
        now: Option<String>,
    },
    /// The initial weights: `was`/`now` say whether there were any; both
    /// true means they differ.
    #[error("{}", init(*.was, *.now))]
    Init { was: bool, now: bool },
    /// The +1 label.
    #[error("the labels map differently: +1 was \"{was}\", now \"{now}\"")]
    Labels { was: String, now: String },
    /// How the processes trained together (mix mode: the ranks and the
    /// mixing; every other run: one process or exact mode, which are alike).
    #[error("the training was {was}, now {now}")]
    Distributed { was: String, now: String },
}

/// Why a margin threshold below 0 is refused, after one that reads as such
/// (see [`crate::train::Margin::parse`]).
pub fn below_zero(text: &str) -> &'static str {
    match text.trim().parse::<f64>() {
        Ok(v) if v < 0.0 => {
            ": below 0, the zero weights would pass every row and the run would learn nothing"
        }
        _ => "",
    }
}

fn on(b: bool) -> &'static str {
    if b { "on" } else { "off" }
}

fn order(seed: Option<u64>) -> String {
    seed.map_or("file order".to_owned(), |s| {
        format!("shuffled with seed {s}")
    })
}

fn init(was: bool, now: bool) -> &'static str {
    match (was, now) {
        (true, false) => "the run started from initial weights, now from zero",
        (false, true) => "the run started from zero, now from initial weights",
        _ => "the initial weights differ",
    }
}

pub type Result<T, E = Error> = std::result::Result<T, E>;

/// Process exit codes, documented in docs/exit-codes.md and in `--help`.
pub mod exit {
    /// Success: the command did what was asked (training converged).
    pub const SUCCESS: i32 = 0;
    /// An error: bad input, unreadable file, device failure, ...
    pub const ERROR: i32 = 1;
    /// Bad command-line usage (reported by the argument parser).
    pub const USAGE: i32 = 2;
    /// Training ran to `--max-epochs` without an epoch free of mistakes.
    /// The last model was still saved.
    pub const NOT_CONVERGED: i32 = 3;
    /// Interrupted by Ctrl-C (SIGINT), SIGTERM or SIGHUP.
    pub const INTERRUPTED: i32 = 130;
}

/// Why the labels of a file cannot be mapped to two classes. Front ends
/// say how to choose (the CLI names its flags); `found` lists the labels
/// ([`LabelTable::describe`](crate::data::labels::LabelTable::describe)).
#[derive(Clone, Debug, PartialEq, thiserror::Error)]
pub enum LabelRuleError {
    #[error("no data rows: the file is empty or holds only comments")]
    NoRows,
    #[error("only one label value ({0}); a perceptron needs two classes")]
    SingleClass(String),
    /// More than two values and no +1 class chosen: choose one (that class
    /// against the rest), or train one-vs-rest. `header_line`: the first
    /// row's label is text seen once among numbers, so that line may be a
    /// header read as data (see [`LabelTable::suspect_header`](crate::data::labels::LabelTable::suspect_header)).
    #[error(
        "more than two label values ({found}); {}choose the +1 class (that class against the rest), or train one perceptron per class (one-vs-rest)",
        .header_line.map(|n| format!("line {n} may be a header read as data; otherwise ")).unwrap_or_default()
    )]
    TooManyClasses {
        found: String,
        header_line: Option<u64>,
    },
    /// The chosen +1 class is not a label of the file.
    #[error(
        "the +1 label {} is not a label in this file; labels found: {found}",
        crate::text::Quoted(.wanted)
    )]
    UnknownPositive { wanted: String, found: String },
}
