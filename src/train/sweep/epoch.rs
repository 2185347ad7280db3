//! The one training loop, generic over how margins are obtained: epochs
//! until convergence, the epoch cap or a stop request, with the engine
//! replaced by the fallback after a device failure.
//!
//! The host owns the weights and walks the rows in order, committing one
//! decision at a time with the reference semantics. An engine supplies, for
//! a window of rows, each row's normalised slack under the weights of the
//! moment the pass was submitted. While walking, the loop tracks how far the
//! weights have drifted since (δ = ||w - w_pass||, updated on every
//! update) and settles a row without a dot product whenever its slack
//! exceeds the drift threshold ([`crate::engine::certify::settle`]): a certain
//! correct row is skipped, a certain mistake is updated directly. Every
//! other row gets the reference dot. So the result is the textbook
//! algorithm's, bit for bit, whatever the engine computed.
//!
//! The next window's pass is submitted halfway through the current one,
//! with the weights of that moment, so a device computes while the host
//! walks. When drift makes too many rows uncertain, the loop drops the rest
//! of the window and asks for a fresh pass from where it is.
//!
//! [`drive`] is the one epoch loop: the early-stopping rule, the epoch cap,
//! a stop request and convergence, tested in that order around each
//! epoch's sweep, for every caller ([`Epoch`]: [`run`] over the whole data
//! in one process, and each distributed mode on a rank's share). Each
//! drives a [`Stepper`], which walks any stretch of rows.

use std::time::Instant;

use crate::data::Dataset;
use crate::engine::MarginEngine;
use crate::error::{Error, Result};
use crate::float::Real;
use crate::train::early_stop::{self, EarlyState, EarlyStop, Judge, Keep};
use crate::train::params::CheckedParams;
use crate::train::placement::{AllRowsHere, Placement};
use crate::train::state::{Fallback, Observer, Outcome, State, Stop};
use crate::train::sweep::Loop;
use crate::train::sweep::chooser::ChooserMemory;
use crate::train::sweep::stepper::{Advanced, Stepper};
use crate::train::variant as variants;

/// How an epoch's sweep ended.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Swept {
    /// Every row of the epoch was walked.
    End,
    /// A stop request came within the epoch, at a row boundary.
    Interrupted,
}

/// What one caller of [`drive`] does in each epoch: walk its rows, and
/// what follows the epoch's end.
pub trait Epoch<F: Real> {
    type Error;

    /// Walks the epoch's rows (all of them, or this process's share, with
    /// whatever the other processes need along the way).
    fn sweep(&mut self, st: &mut Stepper<'_, '_, '_, F>)
    -> std::result::Result<Swept, Self::Error>;

    /// After the epoch was finished with `mistakes`: scores, reports and
    /// saves it; whether a stop request came (it wins over convergence).
    fn ended(
        &mut self,
        st: &mut Stepper<'_, '_, '_, F>,
        mistakes: u64,
    ) -> std::result::Result<bool, Self::Error>;
}

/// The one epoch loop: epochs of `epoch` on `st` until the early-stopping
/// rule (`early`), `max_epochs`, a stop request or an epoch without a
/// mistake; why it stopped, and each epoch's seconds. The rule reads the
/// scores of the epochs done, so a run resumed after the epoch that
/// stopped it stops again at once; so does one resumed after its epoch
/// without a mistake (a checkpoint is saved at every epoch's end, that
/// one's too).
pub fn drive<F: Real, E>(
    st: &mut Stepper<'_, '_, '_, F>,
    max_epochs: usize,
    early: Option<&EarlyStop>,
    epoch: &mut dyn Epoch<F, Error = E>,
) -> std::result::Result<(Stop, Vec<f64>), E> {
    let mut epoch_seconds = Vec::new();
    let stop = loop {
        let done = &st.state().mistakes_per_epoch;
        if st.state().position == 0 && done.last() == Some(&0) {
            break Stop::Converged;
        }
        if let (Some(rule), Some(state)) = (early, &st.state().early)
            && rule.stops(&state.scores)
        {
            break Stop::EarlyStopped;
        }
        if st.state().mistakes_per_epoch.len() >= max_epochs {
            break Stop::MaxEpochs;
        }
        let epoch_start = Instant::now();
        if epoch.sweep(st)? == Swept::Interrupted {
            break Stop::Interrupted;
        }
        let m = st.finish_epoch();
        epoch_seconds.push(epoch_start.elapsed().as_secs_f64());
        if epoch.ended(st, m)? {
            break Stop::Interrupted;
        }
        if m == 0 {
            break Stop::Converged;
        }
    };
    Ok((stop, epoch_seconds))
}

/// Runs epochs from `state` until convergence, `max_epochs`, the
/// early-stopping rule (judged on `validation` when it has a validation
/// part), or a stop request; each epoch visits the rows in `order` when
/// given (see [`Stepper::visit_in`]), else in `data`'s order. The chooser
/// starts from `memory`, what an earlier run over the same rows measured
/// (see [`Stepper::recall`]), when given.
#[allow(clippy::too_many_arguments)]
pub fn run<'d, 'a, F: Real>(
    data: &'d Dataset<F>,
    order: Option<&'d [usize]>,
    validation: Option<&Dataset<F>>,
    params: &CheckedParams,
    state: State<F>,
    memory: Option<ChooserMemory>,
    engine: Box<dyn MarginEngine<F> + 'a>,
    fallback: Fallback<'_, 'a, F>,
    observer: &mut dyn Observer<F>,
) -> Result<Outcome<F>> {
    let rows = data.rows();
    if params.held_out.is_some() {
        // The schedule splits them off and runs this loop on the rest.
        return Err(Error::Usage(
            "held-out rows (TrainParams::held_out) are run by the scikit-learn schedule: \
             train with Trainer::fit"
                .into(),
        ));
    }
    let early = params.early_stop.as_ref();
    if let Some(rule) = early
        && rule.validation.is_some()
        && validation.is_none_or(|v| v.rows() == 0)
    {
        return Err(Error::Usage(
            "early stopping on held-out rows needs them: pass the validation part \
             (train::folds::holdout) to Trainer::fit_validated"
                .into(),
        ));
    }
    if let (Some(w), Some(v)) = (&params.validation_weight, validation)
        && w.len() != v.rows()
    {
        return Err(Error::Usage(format!(
            "validation_weight has {} values for the {} rows of the validation part",
            w.len(),
            v.rows()
        )));
    }
    let mut stepper = Stepper::new(
        data,
        params,
        state,
        Placement::whole(rows),
        engine,
        fallback,
    )?;
    if let Some(order) = order {
        stepper.visit_in(order)?;
    }
    if let Some(memory) = memory {
        stepper.recall(memory);
    }
    stepper.start(&mut AllRowsHere, observer)?;
    if early.is_some() {
        stepper.adopt_bookkeeping(|s| {
            s.early.get_or_insert_with(EarlyState::default);
        });
    }
    let mut whole = Whole {
        rows,
        validation,
        params,
        observer,
    };
    let (stop, epoch_seconds) = drive(&mut stepper, params.max_epochs, early, &mut whole)?;
    Ok(stepper.finish(stop, epoch_seconds))
}

/// Epochs over the whole data in one process: a stop request is the
/// observer's, within the epoch; early stopping scores each epoch.
struct Whole<'a, 'o, F> {
    rows: usize,
    validation: Option<&'a Dataset<F>>,
    params: &'a CheckedParams,
    observer: &'o mut dyn Observer<F>,
}

impl<F: Real> Epoch<F> for Whole<'_, '_, F> {
    type Error = Error;

    fn sweep(&mut self, st: &mut Stepper<'_, '_, '_, F>) -> Result<Swept> {
        Ok(
            match st.advance(self.rows, &mut AllRowsHere, self.observer)? {
                Advanced::End => Swept::End,
                Advanced::Interrupted => Swept::Interrupted,
            },
        )
    }

    fn ended(&mut self, st: &mut Stepper<'_, '_, '_, F>, mistakes: u64) -> Result<bool> {
        if let Some(rule) = &self.params.early_stop {
            let weights = self.params.validation_weight.as_deref();
            st.score_epoch(rule, self.validation, weights, mistakes);
        }
        self.observer.on_epoch_end(st.state())?;
        Ok(false)
    }
}

impl<F: Real> Loop<'_, F> {
    /// The weights the variant would return now: the last iterate, the
    /// average of every iterate so far, or the pocket.
    pub(super) fn returned_weights(&self) -> Vec<F> {
        let w = &self.state.weights;
        if let Some(p) = &self.state.pocket {
            return p.weights.clone();
        }
        match &self.state.average {
            Some(u) if u.len() == w.len() => {
                variants::averaged(w, u, self.state.visits(self.placement.epoch_rows))
            }
            _ => w.clone(),
        }
    }

    /// Records the score of the epoch just finished with `mistakes`, and
    /// with a validation part (its rows weighted by `validation_weight`,
    /// when given) that keeps the best epoch's weights, keeps those of a
    /// new best epoch.
    pub(super) fn score_epoch(
        &mut self,
        rule: &EarlyStop,
        validation: Option<&Dataset<F>>,
        validation_weight: Option<&[f64]>,
        mistakes: u64,
    ) {
        let epoch = self.state.mistakes_per_epoch.len() - 1;
        let held = validation.filter(|_| rule.validation.is_some());
        let (score, weights) = match held {
            Some(v) => {
                let w = self.returned_weights();
                let score = early_stop::accuracy(v, &w, self.bias, self.heads, validation_weight);
                (score, (rule.keep == Keep::Best).then_some(w))
            }
            None => {
                let rows = self.placement.epoch_rows.max(1) as f64;
                let judged = match rule.judge {
                    Judge::Mistakes => mistakes as f64,
                    Judge::MeanLoss => self.state.early.as_ref().map_or(0.0, |e| e.loss_in_epoch),
                };
                (-(judged / rows), None)
            }
        };
        let state = self.state.early.get_or_insert_with(EarlyState::default);
        state.loss_in_epoch = 0.0;
        let best = state
            .scores
            .iter()
            .copied()
            .fold(f64::NEG_INFINITY, f64::max);
        state.scores.push(score);
        if let Some(w) = weights
            && score > best
        {
            state.best = Some((epoch, w));
        }
    }
}
