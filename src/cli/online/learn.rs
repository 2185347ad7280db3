//! The online run itself: predict, then learn, one example at a time,
//! with snapshots, Ctrl-C and the second pass for the bound.

use std::io::{self, Write};
use std::path::Path;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::Instant;

use super::{LabelRule, OnlineArgs, OnlineReport, stream_path};
use crate::data::LoadOptions;
use crate::data::stream::{RowStream, StreamSource};
use crate::error::{Error, Result};
use crate::float::Real;
use crate::model::{DataLayout, Model, TrainingInfo};
use crate::online::{Learner, MarginTally, OnlineInfo, OnlineState, StepError};
use crate::train::Variant;

/// What the second pass found.
pub(super) struct Bound {
    pub(super) tally: MarginTally,
    pub(super) margin: Option<f64>,
}

/// An online run in progress.
pub(super) struct Run<'a, F> {
    pub(super) args: &'a OnlineArgs,
    pub(super) source: StreamSource<'a>,
    /// How the stream is read (again by the second pass).
    pub(super) opts: LoadOptions,
    pub(super) stream: RowStream<'a, F>,
    pub(super) learner: Learner<F>,
    pub(super) rule: LabelRule,
    pub(super) init_features: usize,
    pub(super) stop: Arc<AtomicBool>,
    pub(super) started: Instant,
    pub(super) snapshots: u64,
    pub(super) bound: Option<Bound>,
}

impl<F: Real> Run<'_, F> {
    /// Reads the stream to its end (or a stop), predicting into `sink` then
    /// learning from each example. `sink_name` is for write errors.
    pub(super) fn learn(
        &mut self,
        mut sink: Option<&mut dyn Write>,
        flush_each: bool,
        sink_name: &Path,
    ) -> Result<OnlineState> {
        let path = self.stream.path();
        let labels = self.rule.map();
        let init = self.args.init.as_deref();
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
                return Err(self.rule.refuse(path, &row, init));
            };
            let at = |e: StepError| Error::Train(format!("{}:{}: {e}", path.display(), row.line));
            let p = self.learner.predict(row.row, row.features).map_err(at)?;
            let mut closed = false;
            if let Some(out) = sink.as_mut() {
                let written = writeln!(out, "{}", labels.text_of(p.label))
                    .and_then(|()| if flush_each { out.flush() } else { Ok(()) });
                match written {
                    Ok(()) => {}
                    Err(e) if e.kind() == io::ErrorKind::BrokenPipe => closed = true,
                    Err(e) => return Err(Error::io(sink_name, "cannot write predictions", e)),
                }
            }
            self.learner.learn(p, y, row.row).map_err(at)?;
            if closed {
                return Ok(OnlineState::Closed);
            }
            let n = self.learner.examples();
            let every = self.args.report_every.unwrap_or_else(|| {
                use std::io::IsTerminal;
                if std::io::stderr().is_terminal() {
                    10_000
                } else {
                    0
                }
            });
            if every > 0 && n.is_multiple_of(every) && !self.args.quiet {
                eprintln!("{}", self.progress_line());
            }
            if let Some(snap) = &self.args.snapshot
                && self.args.snapshot_every > 0
                && n.is_multiple_of(self.args.snapshot_every)
            {
                self.model(OnlineState::Running).save(snap)?;
                self.snapshots += 1;
            }
        }
    }

    /// Reads the file again and measures the final weights on every example.
    pub(super) fn second_pass(&mut self) -> Result<Option<Bound>> {
        let mut stream = RowStream::<F>::open(
            self.source,
            &self.opts,
            self.args.max_features,
            Some(self.stop.clone()),
        )?;
        let w = self.learner.augmented();
        let bias = self.learner.has_bias();
        let mut tally = MarginTally::default();
        let changed = |what: String| {
            Error::data(
                stream_path(self.source),
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
                return Err(self.rule.refuse(
                    stream_path(self.source),
                    &row,
                    self.args.init.as_deref(),
                ));
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

    /// The bound the theorem gives for this run, when it applies:
    /// (D^2 + 2τ)/gamma^2, which is (D/gamma)^2 for τ = 0.
    pub(super) fn mistake_bound(&self) -> Option<f64> {
        let gamma = self.bound.as_ref()?.margin?;
        if self.args.init.is_some() {
            return None;
        }
        let d = self.learner.radius();
        let tau = self.tau_f64();
        Some(((d * d + 2.0 * tau) / (gamma * gamma)).max(0.0))
    }

    pub(super) fn tau_f64(&self) -> f64 {
        self.args
            .margin
            .as_ref()
            .map_or(0.0, |m| m.value::<F>().to_f64())
    }

    pub(super) fn prequential_accuracy(&self) -> f64 {
        let n = self.learner.examples();
        if n == 0 {
            0.0
        } else {
            (n - self.learner.wrong_predictions()) as f64 / n as f64
        }
    }

    /// The model as it stands.
    pub(super) fn model(&self, state: OnlineState) -> Model<F> {
        let l = &self.learner;
        let done = state != OnlineState::Running;
        let mut weights = l.weights().to_vec();
        if l.has_bias() {
            weights.push(l.bias());
        }
        let training = TrainingInfo {
            epochs: 1,
            max_epochs: 1,
            mistakes_per_epoch: vec![l.mistakes()],
            total_mistakes: l.mistakes(),
            converged: state == OnlineState::Ended && l.mistakes() == 0,
            radius: l.radius(),
            margin: if done {
                self.bound.as_ref().and_then(|b| b.margin)
            } else {
                None
            },
            mistake_bound: if done { self.mistake_bound() } else { None },
            backend: "online".into(),
            seed: None,
            shuffle_every_epoch: None,
            nominal_epochs: None,
            data: stream_path(self.source).display().to_string(),
            rows: usize::try_from(l.examples()).unwrap_or(usize::MAX),
            training_accuracy: self.prequential_accuracy(),
            seconds: self.started.elapsed().as_secs_f64(),
            variant: Variant::Classic,
            margin_threshold: self.args.margin.clone(),
            init: self.args.init.as_ref().map(|p| p.display().to_string()),
            pocket_epoch: None,
            pocket_training_accuracy: None,
            online: Some(OnlineInfo {
                examples: l.examples(),
                wrong_predictions: l.wrong_predictions(),
                features_added: l.features().saturating_sub(self.init_features),
                state,
            }),
            data_layout: Some(DataLayout::of(
                self.stream.format(),
                self.stream.csv_info().as_ref(),
                self.stream.libsvm_info().as_ref(),
                self.args.data_args.csv.label_column.as_ref(),
            )),
            class_weights: None,
            early_stopping: None,
            distributed: None,
        };
        Model::binary(weights, l.has_bias(), self.rule.map(), training)
    }

    pub(super) fn progress_line(&self) -> String {
        let l = &self.learner;
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

    /// The report at the end.
    pub(super) fn report(&self, state: OnlineState) -> OnlineReport {
        let l = &self.learner;
        let a = self.args;
        let map = self.rule.map();
        let bound = self.bound.as_ref();
        let mistake_bound = self.mistake_bound();
        OnlineReport {
            data: stream_path(self.source).display().to_string(),
            format: self.stream.format(),
            precision: F::PRECISION,
            bias: l.has_bias(),
            positive_label: map.positive.clone(),
            negative_label: map.negative_text().to_owned(),
            label_rule: match self.rule {
                LabelRule::Model(_) => "model",
                LabelRule::Positive(_) => "positive",
                LabelRule::Numeric => "numeric",
            },
            init: a.init.as_ref().map(|p| p.display().to_string()),
            init_features: self.init_features,
            state,
            examples: l.examples(),
            features: l.features(),
            features_added: l.features().saturating_sub(self.init_features),
            margin_threshold: a.margin.as_ref().map(|m| m.text().to_owned()),
            total_mistakes: l.mistakes(),
            wrong_predictions: l.wrong_predictions(),
            prediction_accuracy: self.prequential_accuracy(),
            radius: l.radius(),
            report_bound: a.report_bound,
            second_pass_rows: bound.map(|b| b.tally.rows()),
            second_pass_correct: bound.map(|b| b.tally.correct()),
            margin: bound.and_then(|b| b.margin),
            mistake_bound,
            bound_holds: mistake_bound
                .map(|b| l.mistakes() as f64 <= b * (1.0 + crate::train::theory::BOUND_SLACK)),
            model: a.output.as_deref().map(crate::output::shown),
            snapshot: a.snapshot.as_deref().map(crate::output::shown),
            snapshots: self.snapshots,
            seconds: self.started.elapsed().as_secs_f64(),
            peak_memory_bytes: crate::memory::peak_rss_bytes(),
        }
    }
}
