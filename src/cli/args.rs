//! Command-line options shared by several commands.

use std::path::{Path, PathBuf};

use clap::Args;

use crate::data::{Format, HeaderMode, IndexBase, LabelColumn, LoadOptions};
use crate::engine::backend::Backend;
use crate::engine::gpu::{AdapterRequest, GpuOptions};
use crate::float::Precision;
use crate::train::Margin;

/// A command-line choice standing for (some of) a library enum's variants
/// (the library's enums derive no clap traits; the CLI owns its words).
macro_rules! choice {
    ($(#[$m:meta])* $arg:ident => $lib:path { $($(#[$vm:meta])* $v:ident),+ $(,)? }) => {
        $(#[$m])*
        #[derive(clap::ValueEnum, Clone, Copy, Debug, PartialEq, Eq)]
        pub enum $arg {
            $($(#[$vm])* $v),+
        }

        impl From<$arg> for $lib {
            fn from(a: $arg) -> $lib {
                use $lib as Lib;
                match a {
                    $($arg::$v => Lib::$v),+
                }
            }
        }
    };
}
pub(crate) use choice;

choice! {
    /// Which engine computes margins. Every choice gives the same model.
    #[derive(Default)]
    BackendArg => crate::engine::backend::Backend {
        /// The textbook sequential loop: every margin by the reference dot.
        Reference,
        /// Certified margins on all CPU cores.
        Cpu,
        /// Certified margins on a GPU (a software adapter such as lavapipe is
        /// accepted when no hardware GPU exists).
        Gpu,
        /// A hardware GPU for dense rows when one is found, otherwise the CPU
        /// engine.
        #[default]
        Auto,
    }
}

choice! {
    /// The formats the tool reads.
    FormatArg => crate::data::Format {
        /// Delimited text, one row per line, the label in one column.
        Csv,
        /// LIBSVM/svmlight: `label index:value ...`, increasing indices from 1
        /// (or from 0: --zero-based).
        Libsvm,
        /// The tool's binary format (`.pbin`), written by `perceptron convert`.
        Binary,
        /// NumPy's `.npy`: a 2-D f4/f8 array, labels in --labels FILE or a column.
        Npy,
    }
}

choice! {
    /// How the feature values are stored.
    LayoutArg => crate::data::binary::Layout {
        /// Row-major, every value stored.
        Dense,
        /// Compressed sparse rows: only stored entries, with their indices.
        Csr,
    }
}

choice! {
    /// How the loop uses a certifying engine.
    PassesArg => crate::train::PassPolicy {
        /// Measure every way of walking and use whichever costs least per
        /// row, measured afresh as training goes: the engine (its walk, or
        /// passes over windows), the host's own fast certified margins
        /// (better when mistakes are only a few rows apart), the textbook
        /// loop (better where a certificate costs more than the dot it
        /// saves, as on short sparse rows), or on sparse rows the host with
        /// the other cores summing ahead (better when mistakes are far
        /// apart).
        Adaptive,
        /// Always use the engine: its walk where it has one (the GPU's, or the
        /// CPU engine's parallel one), else passes over windows of rows (for
        /// testing and measuring an engine).
        Always,
        /// Always use engine passes over windows of rows, never the engine's
        /// walk (to measure one against the other).
        Windows,
        /// Always walk on the host with its own fast certified margins (to
        /// measure that mode alone).
        Host,
        /// Always walk on the host with the reference dot for every row: the
        /// textbook loop, inside the engine's run (to measure that mode
        /// alone).
        Reference,
        /// Always walk on the host with the other cores summing sparse rows
        /// ahead of it (to measure that mode alone; on dense rows or one
        /// core, the host's certified walk).
        Ahead,
    }
}

/// `--margin TAU`: a finite number >= 0 in both precisions.
pub fn parse_margin(text: &str) -> Result<Margin, String> {
    Margin::parse(text).map_err(|_| crate::cli::errors::margin(text))
}

choice! {
    /// The text formats, which can be read one example at a time.
    TextFormatArg => crate::data::Format {
        /// Delimited text, one row per line, the label in one column.
        Csv,
        /// LIBSVM/svmlight: `label index:value ...`, increasing indices from 1
        /// (or from 0: --zero-based).
        Libsvm,
    }
}

/// How to read a data file.
#[derive(Args, Clone, Debug, Default)]
pub struct DataArgs {
    /// File format; inferred from the extension (.csv .tsv .svm .libsvm
    /// .svmlight, with or without .gz; .pbin; .npy) or else from the content.
    #[arg(long, value_enum, value_name = "FORMAT")]
    pub format: Option<FormatArg>,

    /// .npy data: the labels, one per row, in this second .npy file (shape
    /// (rows,) or (rows, 1); bool, integers or floats). Without it a column
    /// of the array must be named as the label (--label-column N), or the
    /// array read --unlabeled: it is never guessed.
    #[arg(long, value_name = "FILE")]
    pub labels: Option<PathBuf>,

    #[command(flatten)]
    pub csv: CsvArgs,

    #[command(flatten)]
    pub libsvm: LibsvmArgs,
}

/// How to read a text stream (`online`): CSV or LIBSVM, never binary.
#[derive(Args, Clone, Debug, Default)]
pub struct TextDataArgs {
    /// Text format; inferred from the extension (.csv .tsv .svm .libsvm
    /// .svmlight, with or without .gz) or else from the first data line.
    #[arg(long, value_enum, value_name = "FORMAT")]
    pub format: Option<TextFormatArg>,

    #[command(flatten)]
    pub csv: CsvArgs,

    #[command(flatten)]
    pub libsvm: LibsvmArgs,
}

/// How LIBSVM text counts its feature indices.
#[derive(Args, Clone, Debug, Default)]
pub struct LibsvmArgs {
    /// LIBSVM: feature indices count from 0, as scikit-learn's
    /// dump_svmlight_file writes by default. Default: detected, a file (or
    /// set of shards) with an index 0 is zero-based, else one-based;
    /// predict and eval read as the model's training data did.
    #[arg(long, conflicts_with = "one_based")]
    pub zero_based: bool,

    /// LIBSVM: feature indices count from 1 (the LIBSVM standard); an index
    /// 0 is then an error naming its line.
    #[arg(long)]
    pub one_based: bool,
}

impl LibsvmArgs {
    /// The base asked for; `None` detects it.
    pub fn index_base(&self) -> Option<IndexBase> {
        if self.zero_based {
            Some(IndexBase::Zero)
        } else if self.one_based {
            Some(IndexBase::One)
        } else {
            None
        }
    }
}

/// How to read CSV text.
#[derive(Args, Clone, Debug, Default)]
pub struct CsvArgs {
    /// CSV: the label column, as a 1-based number, a position from the end
    /// (`last` or -1, -2, ...), or a header name (.npy: the column of the
    /// array that holds the labels, when there is no --labels file).
    #[arg(long, value_name = "N|-N|last|NAME", allow_negative_numbers = true)]
    pub label_column: Option<LabelColumn>,

    /// CSV: columns that are not features, such as ids or timestamps (and a
    /// pandas index: --ignore-columns 1), by header name or as
    /// --label-column numbers them (N, -N, last); e.g. --ignore-columns
    /// id,date. The model records them: predict and eval leave them out too.
    #[arg(
        long,
        value_name = "NAME|N,...",
        value_delimiter = ',',
        allow_negative_numbers = true
    )]
    pub ignore_columns: Vec<LabelColumn>,

    /// CSV: the first line is a header (default: detected).
    #[arg(long, conflicts_with = "no_header")]
    pub header: bool,

    /// CSV: the first line is data, not a header.
    #[arg(long)]
    pub no_header: bool,

    /// CSV: field delimiter, `,` `;` or `tab` (default: detected), or
    /// `whitespace`: one or more spaces or tabs separate fields and
    /// whitespace at either end of a line is ignored (numpy.savetxt's
    /// default output).
    #[arg(long, value_name = "CHAR", value_parser = parse_delimiter)]
    pub delimiter: Option<u8>,
}

fn parse_delimiter(s: &str) -> Result<u8, String> {
    match s {
        "," | "comma" => Ok(b','),
        ";" | "semicolon" => Ok(b';'),
        "\t" | "tab" | "\\t" => Ok(b'\t'),
        " " | "space" | "whitespace" => Ok(crate::data::csv::WHITESPACE),
        other => Err(format!(
            "unsupported delimiter `{other}` (use `,`, `;`, `tab` or `whitespace`)"
        )),
    }
}

impl DataArgs {
    pub fn load_options(&self, positive: Option<String>) -> LoadOptions {
        LoadOptions {
            labels: self.labels.clone(),
            index_base: self.libsvm.index_base(),
            ..self
                .csv
                .load_options(self.format.map(Format::from), positive)
        }
    }
}

impl TextDataArgs {
    pub fn load_options(&self, positive: Option<String>) -> LoadOptions {
        LoadOptions {
            index_base: self.libsvm.index_base(),
            ..self
                .csv
                .load_options(self.format.map(Format::from), positive)
        }
    }
}

impl CsvArgs {
    fn load_options(&self, format: Option<Format>, positive: Option<String>) -> LoadOptions {
        LoadOptions {
            format,
            label_column: self.label_column.clone(),
            header: if self.header {
                HeaderMode::Present
            } else if self.no_header {
                HeaderMode::Absent
            } else {
                HeaderMode::Auto
            },
            delimiter: self.delimiter,
            positive,
            unlabeled: false,
            label_column_from: None,
            labels: None,
            index_base: None,
            index_base_from: None,
            ignore_columns: self.ignore_columns.clone(),
            ignore_columns_from: None,
        }
    }
}

/// Warns when CSV options (or LIBSVM's) were given (by the user, not taken
/// from a model) for data read in another format, where they do nothing.
pub fn warn_csv_options(opts: &LoadOptions, format: Format, data: &Path) {
    if format != Format::Libsvm
        && opts.index_base_from.is_none()
        && let Some(base) = opts.index_base
    {
        eprintln!(
            "perceptron: warning: --{} is ignored: {} is {} data, and it applies only to LIBSVM",
            base.words(),
            crate::data::source::name(data).display(),
            format.name(),
        );
    }
    if format == Format::Csv {
        return;
    }
    let given: Vec<&str> = [
        (
            opts.label_column.is_some()
                && opts.label_column_from.is_none()
                && format != Format::Npy,
            "--label-column",
        ),
        (opts.delimiter.is_some(), "--delimiter"),
        (
            !opts.ignore_columns.is_empty() && opts.ignore_columns_from.is_none(),
            "--ignore-columns",
        ),
        (opts.header == HeaderMode::Present, "--header"),
        (opts.header == HeaderMode::Absent, "--no-header"),
    ]
    .into_iter()
    .filter_map(|(given, flag)| given.then_some(flag))
    .collect();
    if given.is_empty() {
        return;
    }
    eprintln!(
        "perceptron: warning: {} {} ignored: {} is {} data, and {} only to CSV",
        given.join(" and "),
        if given.len() == 1 { "is" } else { "are" },
        crate::data::source::name(data).display(),
        format.name(),
        if given.len() == 1 {
            "it applies"
        } else {
            "they apply"
        }
    );
}

/// Where margins are computed (all choices give the identical model).
#[derive(Args, Clone, Debug, Default)]
pub struct BackendArgs {
    /// How margins are computed: `auto` uses a hardware GPU for dense rows
    /// when there is one, with the CPU engine beside it (each stretch of
    /// rows walked by whichever is measured faster; the cores alone while
    /// the GPU starts), and the CPU otherwise, also under
    /// --shuffle-every-epoch and for runs too short for a GPU to start
    /// (under 2^26 stored values in all their epochs; a machine without a
    /// GPU device is told apart without starting a GPU driver); `gpu` uses
    /// the GPU alone, a software adapter (lavapipe)
    /// included; `cpu` uses all cores; `reference` is the textbook loop.
    /// The environment variable PERCEPTRON_BACKEND sets the default.
    #[arg(
        long,
        value_enum,
        default_value = "auto",
        env = "PERCEPTRON_BACKEND",
        ignore_case = true
    )]
    pub backend: BackendArg,

    #[command(flatten)]
    pub gpu: GpuArgs,
}

/// Which GPU adapter, and how much of its memory.
#[derive(Args, Clone, Debug, Default)]
pub struct GpuArgs {
    /// Use the GPU adapter whose name contains NAME (see `perceptron
    /// devices`), software adapters included: with `auto`, in place of the
    /// hardware GPU it would look for (so also beside the CPU engine on
    /// dense rows); with `cpu` or `reference`, implies `gpu`.
    #[arg(long, value_name = "NAME")]
    pub adapter: Option<String>,

    /// GPU memory to keep data resident in, in MiB; the rest is streamed
    /// from host memory every pass (default: as much as the device accepts).
    #[arg(long, value_name = "MIB")]
    pub gpu_memory: Option<u64>,
}

impl BackendArgs {
    /// The backend and GPU options these arguments ask for.
    pub fn resolve(&self) -> (Backend, GpuOptions) {
        let backend = match (Backend::from(self.backend), &self.gpu.adapter) {
            (Backend::Cpu | Backend::Reference, Some(_)) => Backend::Gpu,
            (b, _) => b,
        };
        (backend, self.gpu.options(backend == Backend::Gpu))
    }
}

impl GpuArgs {
    /// The GPU options these arguments ask for; a software adapter is
    /// accepted when `allow_software`.
    pub fn options(&self, allow_software: bool) -> GpuOptions {
        GpuOptions {
            adapter: AdapterRequest {
                name: self.adapter.clone(),
                allow_software,
            },
            memory_budget: self.gpu_memory.map(|m| m << 20),
            ..Default::default()
        }
        .with_env()
    }
}

#[derive(clap::ValueEnum, Clone, Copy, Debug, PartialEq, Eq)]
pub enum PrecisionArg {
    F32,
    F64,
}

impl From<PrecisionArg> for Precision {
    fn from(p: PrecisionArg) -> Self {
        match p {
            PrecisionArg::F32 => Precision::F32,
            PrecisionArg::F64 => Precision::F64,
        }
    }
}

/// Shows a path the way the user typed it.
pub fn shown(path: &Path) -> String {
    path.display().to_string()
}

/// The default model path.
pub fn default_model_path() -> PathBuf {
    PathBuf::from("model.json")
}
