//! The end of `train --distributed`: rank 0 writes the model and makes the
//! report, with a stop request honoured at every safe point between the
//! loop's end and the model's replacement, as in one process
//! (`super::super::write`). The ranks agree at each safe point, so a
//! request to any rank stops all: rank 0 then saves the trained state as a
//! checkpoint, nothing is replaced, and every rank exits with status 130.

use std::path::{Path, PathBuf};

use super::super::args::TrainArgs;
use super::super::test_hooks;
use crate::data::{CsvInfo, LibsvmInfo};
use crate::distributed::Transport;
use crate::distributed::agree::{Agreed, DescribeFailure, agree};
use crate::distributed::block::RankBlock;
use crate::distributed::report::{DistributedReport, DistributedTrainReport};
use crate::error::{Result, exit};
use crate::float::Real;
use crate::model::DataLayout;
use crate::run::Run;
use crate::run::report::{ReportInputs, TrainReport};
use crate::train::checkpoint::{self, MixRecord};
use crate::train::{Fit, Stop, Variant};

/// What writing ended with, on every rank alike.
pub(super) enum Written {
    /// The model is in place; rank 0 has the report.
    Saved(Option<Box<DistributedTrainReport>>),
    /// A stop request came first: the exit status, after the checkpoint.
    Stopped(i32),
}

/// The outputs of one rank's finished run and where a stop request sends
/// it.
pub(super) struct Writing<'a, F: Real> {
    pub t: &'a dyn Transport,
    pub args: &'a TrainArgs,
    pub run: &'a mut Run<F>,
    pub block: &'a RankBlock<'a>,
    pub fit: &'a Fit<F>,
    /// A mix run's record, which its checkpoint carries.
    pub record: Option<MixRecord>,
    pub output: &'a Path,
    pub checkpoint: PathBuf,
    /// Whether this rank was asked to stop.
    pub stop: &'a dyn Fn() -> bool,
    pub describe: DescribeFailure<'a>,
}

impl<F: Real> Writing<'_, F> {
    /// Rank 0 writes the model, staged until every rank has passed the
    /// last safe point, then it replaces the old one.
    pub fn write(
        &mut self,
        csv: Option<&CsvInfo>,
        libsvm: Option<&LibsvmInfo>,
        extra: DistributedReport,
        warnings: Vec<String>,
    ) -> Agreed<Written> {
        if self.fit.stop == Stop::Interrupted {
            return self.stopped(false);
        }
        if self.asked_to_stop() {
            return self.stopped(true);
        }
        let rank0 = self.t.rank() == 0;
        let batch = rank0.then(crate::output::Batch::begin);
        let written = match rank0 {
            true => self.model_and_report(csv, libsvm, extra, warnings),
            false => Ok(None),
        };
        let report = agree(self.t, written, self.describe)?;
        // On standard output the model is out once saved: the run goes on
        // to its end from there.
        if !crate::output::is_stdout(self.output) && self.asked_to_stop() {
            drop(batch);
            return self.stopped(true);
        }
        let committed = batch.map_or(Ok(()), crate::output::Batch::commit);
        agree(self.t, committed, self.describe)?;
        Ok(Written::Saved(report))
    }

    /// A safe point: whether any rank was asked to stop (every rank asks
    /// at the same point).
    fn asked_to_stop(&self) -> bool {
        test_hooks::pause_before_writing();
        crate::distributed::transport::any(self.t, (self.stop)())
    }

    /// Rank 0 saves the trained state as the loop's checkpoint would be
    /// and says so; nothing is replaced.
    fn stopped(&mut self, while_writing: bool) -> Agreed<Written> {
        let t = self.t;
        self.run.take_block_fingerprint(self.block);
        let saved = match t.rank() == 0 {
            true => checkpoint::save_mix(
                &self.checkpoint,
                &self.run.description,
                &self.fit.state,
                self.record.as_ref(),
            ),
            false => Ok(()),
        };
        agree(t, saved, self.describe)?;
        if t.rank() == 0 {
            let (fit, checkpoint, args) = (self.fit, &self.checkpoint, self.args);
            super::super::write::say_interrupted(fit, checkpoint, args, while_writing, self.output);
        }
        Ok(Written::Stopped(exit::INTERRUPTED))
    }

    /// Rank 0: the model (saved, or staged in the open batch) and the
    /// report.
    fn model_and_report(
        &self,
        csv: Option<&CsvInfo>,
        libsvm: Option<&LibsvmInfo>,
        extra: DistributedReport,
        warnings: Vec<String>,
    ) -> Result<Option<Box<DistributedTrainReport>>> {
        let (args, run, fit, output) = (self.args, &*self.run, self.fit, self.output);
        let whole = self.block.whole;
        let data = &run.data;
        let layout = DataLayout::of(
            data.format,
            csv,
            libsvm,
            args.data_args.csv.label_column.as_ref(),
        );
        let mut model = run.model(fit, Some(layout))?;
        extra.stamp(&mut model, whole);
        model.save(output)?;
        let sources = ReportInputs {
            run: &run.description,
            fit,
            model: &model,
            data,
            csv,
            libsvm,
            output,
            requested: args.backend.resolve().0,
        };
        let report = TrainReport::new(sources, warnings, Vec::new());
        // The classes' counts are the whole dataset's.
        let report = DistributedTrainReport::new(report, whole, &data.classes, extra);
        Ok(Some(Box::new(report)))
    }
}

/// Prints rank 0's `report` (text or `--json`) and gives the exit status.
pub(super) fn print_report<F: Real>(
    args: &TrainArgs,
    report: Option<&DistributedTrainReport>,
    fit: &Fit<F>,
    output: &Path,
) -> i32 {
    // Running every epoch is how the averaged and pocket variants end;
    // only the classic rule promises an epoch without mistakes.
    let success = fit.converged() || matches!(fit.variant, Variant::Averaged | Variant::Pocket);
    if let Some(report) = report {
        let printed =
            crate::cli::stdout::summary(args.json, report, || report.render()).and_then(|text| {
                crate::cli::stdout::print_summary(&text, crate::output::is_stdout(output))
            });
        if let Err(e) = printed {
            eprintln!(
                "perceptron: {} {}",
                crate::cli::errors::error_tag(),
                crate::cli::errors::message(&e)
            );
        }
        if !success {
            eprintln!("perceptron: {}", report.report.not_converged());
        }
    }
    if success || !args.require_convergence {
        exit::SUCCESS
    } else {
        exit::NOT_CONVERGED
    }
}
