//! The command-line interface: argument parsing and dispatch to the library.

pub mod args;
pub mod bench;
pub mod convert;
pub mod cv;
pub mod devices;
pub mod errors;
pub mod eval;
// `gen` is a reserved word in edition 2024, hence the raw identifier.
pub mod r#gen;
pub mod info;
pub mod interrupt;
pub mod online;
#[cfg(feature = "plot")]
pub mod plot;
pub mod predict;
pub mod progress;
pub mod shell;
pub mod split;
pub mod stdout;
pub mod train;
pub mod training_args;

use clap::{CommandFactory, FromArgMatches, Parser, Subcommand};

const ABOUT: &str = "Train Rosenblatt's classic perceptron exactly, on the CPU or the GPU.";

const LONG_ABOUT: &str = "\
Train Rosenblatt's classic perceptron exactly, on the CPU or the GPU.

Every backend returns the bit-identical model of the textbook sequential
algorithm (w = 0; rows in order; w <- w + y x whenever y w.x <= 0; stop after
an epoch without mistakes). Reads CSV and LIBSVM/svmlight files, gzipped or
not, and its own binary format (.pbin), and reports what the perceptron
convergence theorem says about the run.";

const EXAMPLES: &str = "\
Examples:
  perceptron train                      train on the bundled digits data
  perceptron train data.csv -o m.json   train on your data, save the model
  perceptron predict m.json new.csv     one predicted label per line
  perceptron eval m.json test.csv       accuracy, confusion matrix, F1
  perceptron cv data.csv --folds 5      stratified cross-validation, folds in parallel
  producer | perceptron online --predictions   predict, then learn, per example
  perceptron info data.csv              shape, labels and radius of a file
  perceptron convert big.svm big.pbin   binary copy that loads without parsing
  perceptron gen --rows 100000 -o x.pbin   synthetic separable data
  perceptron plot curve m.json -o c.svg pictures: curve, margins, boundary, bias, trace
  perceptron completions bash           shell completion script (bash, zsh, fish, ...)
  perceptron man | man -l -             the manual page

Exit status: 0 success (also a run stopped at --max-epochs, with a note);
1 error; 2 bad command line; 3 with train --require-convergence, training
with the classic rule did not converge within --max-epochs, nor stop early
(the model is still saved); 130 interrupted by Ctrl-C, SIGTERM or SIGHUP
(train saves its state for --resume, online its model).";

#[derive(Parser, Debug)]
#[command(name = "perceptron", version, about = ABOUT, long_about = LONG_ABOUT, after_help = EXAMPLES)]
pub struct Cli {
    #[command(subcommand)]
    pub command: Command,
}

#[derive(Subcommand, Debug)]
pub enum Command {
    Train(train::TrainArgs),
    Predict(predict::PredictArgs),
    Eval(eval::EvalArgs),
    Online(online::OnlineArgs),
    Info(info::InfoArgs),
    Devices(devices::DevicesArgs),
    Bench(bench::BenchArgs),
    Split(split::SplitArgs),
    Cv(cv::CvArgs),
    Convert(convert::ConvertArgs),
    Gen(r#gen::GenArgs),
    #[cfg(feature = "plot")]
    Plot(plot::PlotArgs),
    Completions(shell::CompletionsArgs),
    Man(shell::ManArgs),
}

/// Runs the CLI and returns the process exit code.
pub fn main() -> i32 {
    one_malloc_arena_under_an_address_limit();
    quiet_vulkan_layers();
    if let Some(code) = check_backend_variable() {
        return code;
    }
    // Parsed in two steps so that `train --resume` can tell the options
    // given from the defaults.
    let matches = Cli::command().get_matches();
    let cli =
        Cli::from_arg_matches(&matches).unwrap_or_else(|e| e.format(&mut Cli::command()).exit());
    let given = match matches.subcommand() {
        Some((_, sub)) => train::resume::ExplicitOptions::from_matches(sub),
        None => train::resume::ExplicitOptions::default(),
    };
    interrupt::install();
    // A mistyped limit must not be silently ignored.
    let result = crate::memory::limit()
        .and_then(|_| crate::output::disk_limit())
        .and_then(|_| start_threads())
        .and_then(|_| match &cli.command {
            Command::Train(a) => train::run(a, &given),
            Command::Predict(a) => predict::run(a),
            Command::Eval(a) => eval::run(a),
            Command::Online(a) => online::run(a),
            Command::Info(a) => info::run(a),
            Command::Devices(a) => devices::run(a),
            Command::Bench(a) => bench::run(a),
            Command::Split(a) => split::run(a),
            Command::Cv(a) => cv::run(a),
            Command::Convert(a) => convert::run(a),
            Command::Gen(a) => r#gen::run(a),
            #[cfg(feature = "plot")]
            Command::Plot(a) => plot::run(a),
            Command::Completions(a) => shell::completions(a),
            Command::Man(a) => shell::man(a),
        });
    match result {
        Ok(code) => code,
        Err(e) => {
            eprintln!(
                "perceptron: {} {}",
                errors::error_tag(),
                errors::message(&e)
            );
            errors::status(&e)
        }
    }
}

/// PERCEPTRON_BACKEND, if set, must name a backend (in any case): clap would
/// blame a bad value on `--backend`, which the user did not type. Returns
/// the exit status of a refusal.
fn check_backend_variable() -> Option<i32> {
    use clap::ValueEnum;
    let value = std::env::var_os("PERCEPTRON_BACKEND")?;
    let text = value.to_string_lossy();
    if args::BackendArg::from_str(&text, true).is_ok() {
        return None;
    }
    eprintln!(
        "perceptron: error: the environment variable PERCEPTRON_BACKEND is {}, which is not \
         a backend: use reference, cpu, gpu or auto (or unset it)",
        crate::data::message::quote(&text)
    );
    Some(crate::error::exit::USAGE)
}

/// glibc gives each thread that allocates a malloc arena of its own, and
/// reserves 64 MiB of address space for each. Under an address-space
/// limit (`ulimit -v`) those reservations crowd out the worker threads'
/// stacks, which then fail to start at random (a worker's arena racing the
/// next worker's stack). So when such a limit is set, every thread shares
/// the main arena; without one nothing changes. Called first thing, before
/// any other thread exists.
fn one_malloc_arena_under_an_address_limit() {
    #[cfg(all(target_os = "linux", target_env = "gnu"))]
    {
        let mut limit = libc::rlimit {
            rlim_cur: 0,
            rlim_max: 0,
        };
        // SAFETY: getrlimit writes the struct passed; mallopt sets a malloc
        // parameter, here while the process has one thread.
        unsafe {
            if libc::getrlimit(libc::RLIMIT_AS, &mut limit) == 0
                && limit.rlim_cur != libc::RLIM_INFINITY
            {
                libc::mallopt(libc::M_ARENA_MAX, 1);
            }
        }
    }
}

/// Starts the worker threads that every parallel loop shares, now, while
/// the process holds no data: a pool that cannot start (a thread or
/// address-space limit) is then this clear error instead of a panic at the
/// first parallel loop, wherever that is.
fn start_threads() -> crate::Result<()> {
    rayon::ThreadPoolBuilder::new().build_global().map_err(|e| {
        crate::Error::System(format!(
            "cannot start the worker threads ({e}); raise the limit on threads or on address \
                 space (`ulimit -u`, `ulimit -v`), or set RAYON_NUM_THREADS=1"
        ))
    })
}

/// Mesa's device-select Vulkan layer picks a GPU for a display, which this
/// tool has none of: without a display server it prints errors, and it slows
/// every submission. Off unless the user set the variable themselves.
fn quiet_vulkan_layers() {
    if std::env::var_os("NODEVICE_SELECT").is_none() {
        // SAFETY: called first thing in `main`, before any other thread exists.
        unsafe { std::env::set_var("NODEVICE_SELECT", "1") };
    }
}
