//! One online run, defined once: a stream in, predict-then-learn per
//! example with the label rule, snapshots and a stop request, then (when
//! asked) the second pass that measures the final weights' margin; the
//! model and the [`OnlineSummary`](super::OnlineSummary) out. The CLI
//! supplies an [`OnlineObserver`] for the places outputs go.

use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::Instant;

use super::labels::LabelRule;
use super::start::{OnlineParams, OnlineStart};
use crate::data::stream::{RowStream, StreamSource};
use crate::data::{Format, LoadOptions};
use crate::error::{Error, Result};
use crate::float::Real;
use crate::model::Model;
use crate::online::{Learner, MarginTally, OnlineState, StepError};

/// What a run tells its front end as it goes, and where its outputs go.
pub trait OnlineObserver<F> {
    /// The prediction for the example about to be learned from, as the
    /// run's label text. `Ok(false)` says its reader went away: the run
    /// learns from this example, then ends ([`OnlineState::Closed`]).
    fn on_prediction(&mut self, _label: &str) -> Result<bool> {
        Ok(true)
    }
    /// After each example the learner learned from (progress).
    fn on_example(&mut self, _learner: &Learner<F>) {}
    /// A snapshot is due (every `snapshot_every` examples, and at the end):
    /// save `model`. An error ends the run.
    fn on_snapshot(&mut self, _model: &Model<F>) -> Result<()> {
        Ok(())
    }
}

/// What the second pass found.
pub(super) struct Bound {
    pub(super) tally: MarginTally,
    pub(super) margin: Option<f64>,
}

/// An online run in progress.
pub struct OnlineRun<'a, F> {
    pub(super) params: OnlineParams,
    pub(super) source: StreamSource<'a>,
    /// How the stream is read (again by the second pass).
    pub(super) opts: LoadOptions,
    pub(super) stream: RowStream<'a, F>,
    pub(super) learner: Learner<F>,
    pub(super) rule: LabelRule,
    /// The `--init` model's file.
    pub(super) init: Option<PathBuf>,
    pub(super) init_features: usize,
    pub(super) stop: Arc<AtomicBool>,
    pub(super) started: Instant,
    pub(super) snapshots: u64,
    pub(super) bound: Option<Bound>,
}

impl<'a, F: Real> OnlineRun<'a, F> {
    /// Settles the starting point and opens the stream, read with `opts`
    /// (the `--init` model's LIBSVM index base when `opts` has none).
    /// `stop` gives the flag that, once set, asks the run to stop after the
    /// current example and ends a wait for input; it is called once the
    /// starting point is settled, right before the stream opens (a front
    /// end may let a signal end the process at once until then). `None`:
    /// stopped before the first example.
    pub fn open(
        params: OnlineParams,
        start: OnlineStart,
        source: StreamSource<'a>,
        opts: LoadOptions,
        stop: impl FnOnce() -> Arc<AtomicBool>,
    ) -> Result<Option<Self>> {
        let opts = start.stream_options(opts);
        let (learner, rule) = start.learner::<F>(&params)?;
        let init_features = learner.features();
        // Cannot truncate: max_features <= MAX_FEATURE_INDEX < 2^31.
        let max_features = usize::try_from(params.max_features).unwrap_or(usize::MAX);
        let learner = learner.with_max_features(max_features);
        let stop = stop();
        let stream =
            match RowStream::<F>::open(source, &opts, params.max_features, Some(stop.clone())) {
                Ok(s) => s,
                Err(_) if stop.load(Ordering::Relaxed) => return Ok(None),
                Err(e) => return Err(e),
            };
        Ok(Some(OnlineRun {
            params,
            source,
            opts,
            stream,
            learner,
            rule,
            init: start.init.map(|(path, _)| path),
            init_features,
            stop,
            started: Instant::now(),
            snapshots: 0,
            bound: None,
        }))
    }

    /// The stream's format.
    pub fn format(&self) -> Format {
        self.stream.format()
    }

    /// How the stream is read.
    pub fn load_options(&self) -> &LoadOptions {
        &self.opts
    }

    /// The weights and counts so far.
    pub fn learner(&self) -> &Learner<F> {
        &self.learner
    }

    /// Reads the stream to its end (or a stop, or a reader gone away),
    /// predicting then learning from each example.
    pub fn learn(&mut self, observer: &mut dyn OnlineObserver<F>) -> Result<OnlineState> {
        let path = self.stream.path();
        let labels = self.rule.map();
        loop {
            if self.stop.load(Ordering::Relaxed) {
                return Ok(OnlineState::Interrupted);
            }
            let row = match self.stream.next_row() {
                Ok(Some(r)) => r,
                Ok(None) => return Ok(OnlineState::Ended),
                Err(_) if self.stop.load(Ordering::Relaxed) => {
                    return Ok(OnlineState::Interrupted);
                }
                Err(e) => return Err(e),
            };
            let Some(y) = self.rule.sign(row.label) else {
                return Err(self.rule.refuse(path, &row, self.init.as_deref()));
            };
            let at = |e: StepError| Error::Train(format!("{}:{}: {e}", path.display(), row.line));
            let p = self.learner.predict(row.row, row.features).map_err(at)?;
            let open = observer.on_prediction(labels.text_of(p.label))?;
            self.learner.learn(p, y, row.row).map_err(at)?;
            if !open {
                return Ok(OnlineState::Closed);
            }
            observer.on_example(&self.learner);
            if let Some(every) = self.params.snapshot_every
                && every > 0
                && self.learner.examples().is_multiple_of(every)
            {
                observer.on_snapshot(&self.model(OnlineState::Running))?;
                self.snapshots += 1;
            }
        }
    }

    /// What follows the pass that [`OnlineRun::learn`] ended in `state`:
    /// an input without examples is an error; after the input ended, the
    /// second pass (`report_bound`); a stop request makes the state
    /// [`OnlineState::Interrupted`]. Returns the run's final state.
    pub fn end(&mut self, state: OnlineState) -> Result<OnlineState> {
        if state == OnlineState::Ended && self.learner.examples() == 0 {
            return Err(Error::data(
                self.stream.path(),
                "no data rows: the input ended before the first example",
            ));
        }
        if self.params.report_bound && state == OnlineState::Ended {
            self.bound = self.second_pass()?;
        }
        Ok(if self.stop.load(Ordering::Relaxed) {
            OnlineState::Interrupted
        } else {
            state
        })
    }

    /// The final model of a run that ended in `state`, after its last
    /// snapshot (when snapshots were asked for).
    pub fn finish(
        &mut self,
        state: OnlineState,
        observer: &mut dyn OnlineObserver<F>,
    ) -> Result<Model<F>> {
        let model = self.model(state);
        if self.params.snapshot_every.is_some() {
            observer.on_snapshot(&model)?;
            self.snapshots += 1;
        }
        Ok(model)
    }

    /// Reads the file again and measures the final weights on every
    /// example; `None` when stopped.
    fn second_pass(&mut self) -> Result<Option<Bound>> {
        let name = self.source.name();
        let mut stream = RowStream::<F>::open(
            self.source,
            &self.opts,
            self.params.max_features,
            Some(self.stop.clone()),
        )?;
        let w = self.learner.augmented();
        let bias = self.learner.has_bias();
        let mut tally = MarginTally::default();
        let changed = |what: String| {
            Error::data(
                name,
                format!("changed during the run: {what}; --report-bound needs the same data twice"),
            )
        };
        loop {
            if self.stop.load(Ordering::Relaxed) {
                return Ok(None);
            }
            let row = match stream.next_row() {
                Ok(Some(r)) => r,
                Ok(None) => break,
                Err(_) if self.stop.load(Ordering::Relaxed) => return Ok(None),
                Err(e) => return Err(e),
            };
            let Some(y) = self.rule.sign(row.label) else {
                return Err(self.rule.refuse(name, &row, self.init.as_deref()));
            };
            if row.features > self.learner.features() {
                return Err(changed(format!(
                    "line {} needs {} features, the first pass saw {}",
                    row.line,
                    row.features,
                    self.learner.features()
                )));
            }
            tally.observe(&w, row.row, y, bias);
        }
        if tally.rows() != self.learner.examples() {
            return Err(changed(format!(
                "it now holds {} examples, not {}",
                tally.rows(),
                self.learner.examples()
            )));
        }
        let margin = tally.margin(&w);
        Ok(Some(Bound { tally, margin }))
    }

    /// The name of the stream in reports and model files.
    pub(super) fn data_name(&self) -> &'a Path {
        self.source.name()
    }
}
