//! Where an online run's outputs go as it runs: each prediction to its
//! sink, progress lines to stderr, snapshots to `--snapshot`.

use std::io::{self, Write};
use std::path::Path;

use super::OnlineArgs;
use crate::error::{Error, Result};
use crate::float::Real;
use crate::model::Model;
use crate::online::Learner;
use crate::run::online::OnlineObserver;

/// Where the predictions are written.
pub(super) struct Sink<'w> {
    pub(super) out: &'w mut dyn Write,
    /// Flush after each line (the sink feeds a pipeline).
    pub(super) flush_each: bool,
    /// The sink's name in write errors.
    pub(super) name: &'w Path,
}

/// The CLI's observer of an online run.
pub(super) struct OnlineOutputs<'a, 'w> {
    args: &'a OnlineArgs,
    sink: Option<Sink<'w>>,
    /// Examples between progress lines (0: none).
    report_every: u64,
}

impl<'a, 'w> OnlineOutputs<'a, 'w> {
    pub(super) fn new(args: &'a OnlineArgs, sink: Option<Sink<'w>>) -> Self {
        let report_every = args.report_every.unwrap_or_else(|| {
            use std::io::IsTerminal;
            if io::stderr().is_terminal() {
                10_000
            } else {
                0
            }
        });
        OnlineOutputs {
            args,
            sink,
            report_every,
        }
    }
}

impl<F: Real> OnlineObserver<F> for OnlineOutputs<'_, '_> {
    fn on_prediction(&mut self, label: &str) -> Result<bool> {
        let Some(sink) = self.sink.as_mut() else {
            return Ok(true);
        };
        let written = writeln!(sink.out, "{label}").and_then(|()| {
            if sink.flush_each {
                sink.out.flush()
            } else {
                Ok(())
            }
        });
        match written {
            Ok(()) => Ok(true),
            Err(e) if e.kind() == io::ErrorKind::BrokenPipe => Ok(false),
            Err(e) => Err(Error::io(sink.name, "cannot write predictions", e)),
        }
    }

    fn on_example(&mut self, learner: &Learner<F>) {
        let every = self.report_every;
        if every > 0 && learner.examples().is_multiple_of(every) && !self.args.quiet {
            eprintln!("{}", progress_line(learner));
        }
    }

    fn on_snapshot(&mut self, model: &Model<F>) -> Result<()> {
        match &self.args.snapshot {
            Some(path) => model.save(path),
            None => Ok(()),
        }
    }
}

/// The progress line of a run so far.
fn progress_line<F: Real>(l: &Learner<F>) -> String {
    let n = l.examples().max(1) as f64;
    format!(
        "online: {}, {} ({:.2}%), {} ({:.2}%), D = {}",
        crate::text::count(l.examples(), "example"),
        crate::text::count(l.mistakes(), "mistake"),
        100.0 * l.mistakes() as f64 / n,
        crate::text::count(l.wrong_predictions(), "wrong prediction"),
        100.0 * l.wrong_predictions() as f64 / n,
        crate::text::fmt_g(l.radius())
    )
}
