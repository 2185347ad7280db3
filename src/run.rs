//! One training run, defined once: a trainer (checked parameters, the
//! backend) and the data in file order in; the fit, the model and the run's
//! one description out. The front ends (the CLI, Python) call it and only
//! translate arguments and render results.
//!
//! [`Run::prepare`] does, in this order, what every run needs before the
//! loop: the run's [`RunDescription`], the data's fingerprint when
//! checkpoints may need it, the weights' memory check, the stratified
//! held-out part (early stopping's validation), the feature scaling
//! (fitted on the training rows, or the `--init` model's), the starting
//! state (zero, given weights, a model's, or a checkpoint's), and the
//! shuffle. [`Run::fit`]
//! runs the loop; [`Run::model`] makes the model of the fit.
//!
//! A process that holds one block of the rows (a rank of a distributed
//! run) prepares its run the same way with [`Run::prepare_block`], and
//! drives the loop itself from [`Run::take_start`].
//!
//! [`online`] is the online run of `perceptron online` (a stream, one
//! example at a time), defined once the same way.
//!
//! [`report`] is a finished run's summary (`perceptron train`'s), the one
//! record every front end serialises or renders as text; [`cv`] is
//! `perceptron cv`'s run and its report, in the same way.

mod block;
pub mod cv;
pub mod online;
mod outputs;
pub mod report;

pub use block::Block;
pub use outputs::{check_outputs, read_init_model};

use std::path::Path;

use crate::data::{Dataset, Scaling};
use crate::error::{Error, Result};
use crate::float::Real;
use crate::model::{AnyModel, DataLayout, Model};
use crate::train::checkpoint::MixRecord;
use crate::train::{
    Fit, Observer, Placement, RunDescription, RunSettings, State, Trainer, checkpoint, folds,
    shuffle,
};

/// Where the weights start, besides a checkpoint.
pub enum Init<'a, F> {
    /// w~ = 0 for every head.
    Zero,
    /// Every head's w~, head after head (a warm start from a caller's
    /// weights); `source` names them in the run's description.
    Weights { weights: Vec<F>, source: String },
    /// A model file's weights and scaling (`--init`); `fingerprint`
    /// identifies the file's content.
    Model {
        path: &'a Path,
        model: &'a AnyModel,
        fingerprint: String,
    },
}

/// When the data's fingerprint is taken (a pass over the rows): a
/// checkpoint records it, and a run that resumes must match it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum FingerprintWhen {
    /// Never: nothing of this run is checkpointed.
    Never,
    /// Only where the rows are about to be replaced (held out, scaled,
    /// shuffled), so that a stop request can still save a checkpoint; else
    /// when [`Run::take_fingerprint`] asks.
    BeforeReplacing,
    /// At once: the run checkpoints, or resumes from a checkpoint.
    Now,
}

/// What a run starts from.
pub struct RunInputs<'a, F: Real> {
    pub trainer: Trainer,
    /// The training data, in file order.
    pub data: Dataset<F>,
    pub settings: RunSettings,
    pub init: Init<'a, F>,
    /// An interrupted run's checkpoint (its path and text): the loop goes
    /// on from its state.
    pub resume: Option<(&'a Path, &'a str)>,
    pub fingerprint: FingerprintWhen,
}

/// A run prepared for the loop: the data as trained on (held-out rows
/// apart, scaled, in training order) and the state it starts from.
pub struct Run<F: Real> {
    pub trainer: Trainer,
    pub description: RunDescription,
    /// The training rows, in training order.
    pub data: Dataset<F>,
    /// Early stopping's held-out rows, in file order.
    pub held: Option<Dataset<F>>,
    pub scaling: Option<Scaling>,
    /// Where the training rows sit in an epoch: all of it, or a block's
    /// share.
    pub placement: Placement,
    /// The mix-mode record of the checkpoint resumed from (a distributed
    /// mix run's mistakes per rank so far).
    pub resumed_mix: Option<MixRecord>,
    start: Option<State<F>>,
}

impl<F: Real> Run<F> {
    /// Everything before the loop, once (see the module documentation).
    pub fn prepare(inputs: RunInputs<'_, F>) -> Result<Self> {
        Self::prepare_on(inputs, None)
    }

    /// [`Run::prepare`] for a process that holds one `block` of the rows
    /// (`inputs.data`, in file order): the description, the fingerprint,
    /// the checkpoint's kind and the visit order are the whole dataset's.
    /// Every step that can fail comes after the block's one collective
    /// question (the fingerprint), so that processes that fail and
    /// processes that do not still ask it together. Holding out rows and
    /// scaling need every row, and are refused.
    pub fn prepare_block(inputs: RunInputs<'_, F>, block: &dyn Block<F>) -> Result<Self> {
        Self::prepare_on(inputs, Some(block))
    }

    fn prepare_on(inputs: RunInputs<'_, F>, block: Option<&dyn Block<F>>) -> Result<Self> {
        let RunInputs {
            trainer,
            mut data,
            settings,
            init,
            resume,
            fingerprint,
        } = inputs;
        let params = trainer.params();
        let heads = params.heads(data.classes.len());
        let dim = data.cols() + params.bias as usize;
        let init_name = match &init {
            Init::Zero => None,
            Init::Weights { source, .. } => Some(source.clone()),
            Init::Model { fingerprint, .. } => Some(fingerprint.clone()),
        };
        let mut description = RunDescription::new(params, &data, init_name, settings);
        if let Some(b) = block {
            description.rows = b.whole_rows();
        }
        // Rows held out by index (scikit-learn's validation mask) are split
        // off by the schedule itself, in every epoch's order.
        let validation = match params.held_out {
            Some(_) => None,
            None => params.early_stop.as_ref().and_then(|e| e.validation),
        };
        // Scaling, a held-out part and a shuffle replace the rows, so the
        // fingerprint of the rows as read is taken first.
        let replaced =
            description.seed.is_some() || description.scale.is_some() || validation.is_some();
        if fingerprint == FingerprintWhen::Now
            || (fingerprint == FingerprintWhen::BeforeReplacing && replaced)
        {
            match block {
                Some(b) => description.fingerprint = b.fingerprint(&data),
                None => description.take_fingerprint(&data),
            }
        }
        crate::memory::check_weights_fit(&data.source, dim, heads)?;
        if block.is_some() && (validation.is_some() || params.scale.is_some()) {
            return Err(Error::Usage(
                "a run on one block of the rows cannot hold rows out or scale the features: \
                 both need every row in one process"
                    .into(),
            ));
        }
        let (data_kept, held, scaling) = split_and_scale(data, validation, &init, params)?;
        data = data_kept;
        let mix = block.and_then(|b| b.mix());
        let (start, resumed_mix) = match (resume, init) {
            (Some((path, text)), _) => checkpoint::parse_mix::<F>(path, text, &description, mix)?,
            (None, init) => (initial_state(init, &data, heads, params.bias)?, None),
        };
        let (order, placement) = match block {
            Some(b) => b.order(data.rows(), description.seed),
            None => (
                description
                    .seed
                    .map(|s| shuffle::permutation(data.rows(), s)),
                Placement::whole(data.rows()),
            ),
        };
        if let Some(o) = order {
            data = data.permuted(&o);
        }
        Ok(Run {
            trainer,
            description,
            data,
            held,
            scaling,
            placement,
            resumed_mix,
            start: Some(start),
        })
    }

    /// The prepared state, for a caller that drives the loop itself (a
    /// rank of a distributed run); [`Run::fit`] takes it otherwise.
    pub fn take_start(&mut self) -> Result<State<F>> {
        self.start
            .take()
            .ok_or_else(|| Error::Train("a prepared run is fitted once".into()))
    }

    /// Runs the loop from the prepared state, reporting to `observer`.
    pub fn fit(&mut self, observer: &mut dyn Observer<F>) -> Result<Fit<F>> {
        let start = self.take_start()?;
        self.trainer
            .fit_validated(&self.data, self.held.as_ref(), start, observer)
    }

    /// Takes the data's fingerprint if not yet taken (before a checkpoint
    /// is saved). The rows are then still in file order: a run whose rows
    /// were reordered took it before (see [`FingerprintWhen`]).
    pub fn take_fingerprint(&mut self) {
        debug_assert!(self.description.seed.is_none() || !self.description.fingerprint.is_empty());
        self.description.take_fingerprint(&self.data);
    }

    /// [`Run::take_fingerprint`] for a run on one `block` of the rows:
    /// every process that holds a block calls it at the same point.
    pub fn take_block_fingerprint(&mut self, block: &dyn Block<F>) {
        if self.description.fingerprint.is_empty() {
            debug_assert!(self.description.seed.is_none());
            self.description.fingerprint = block.fingerprint(&self.data);
        }
    }

    /// The model of `fit`, with the run's scaling; `layout` records how the
    /// data file was laid out (`None` for data from memory).
    pub fn model(&self, fit: &Fit<F>, layout: Option<DataLayout>) -> Result<Model<F>> {
        Model::from_scaled_fit(
            fit,
            &self.description,
            &self.data,
            layout,
            self.scaling.clone(),
        )
    }
}

/// The held-out rows (stratified and seeded, in file order) split off the
/// training rows, then both scaled by the training rows' statistics in
/// file order, or by those of the `--init` model, whose weights read
/// features scaled by them.
#[allow(clippy::type_complexity)]
fn split_and_scale<F: Real>(
    mut data: Dataset<F>,
    validation: Option<crate::train::early_stop::Validation>,
    init: &Init<'_, F>,
    params: &crate::train::CheckedParams,
) -> Result<(Dataset<F>, Option<Dataset<F>>, Option<Scaling>)> {
    let mut held = match validation {
        Some(v) => {
            let each_class = params.heads(data.classes.len()) > 1;
            let (kept, out) = hold_out(&data, v.fraction, v.seed, each_class)?;
            data = kept;
            Some(out)
        }
        None => None,
    };
    let scaling = match init {
        Init::Model { path, model, .. } => model.warm_scaling(path, params.scale)?,
        _ => params.fit_scaling(&data)?,
    };
    if let Some(s) = &scaling {
        data = s.apply_to(data)?;
        held = held.map(|h| s.apply_to(h)).transpose()?;
    }
    Ok((data, held, scaling))
}

/// The state a run that resumes nothing starts from: w~ = 0, the given
/// weights, or the `--init` model's (checked against the scaled rows).
fn initial_state<F: Real>(
    init: Init<'_, F>,
    data: &Dataset<F>,
    heads: usize,
    bias: bool,
) -> Result<State<F>> {
    Ok(match init {
        Init::Zero => State::initial((data.cols() + bias as usize) * heads),
        Init::Weights { weights, .. } => State::starting_from(weights),
        Init::Model { path, model, .. } => {
            State::starting_from(model.warm_start(path, data, heads, bias)?)
        }
    })
}

/// Splits off early stopping's held-out rows, stratified and seeded,
/// leaving rows of both labels to train on (of every class when
/// `each_class`: one-vs-rest).
fn hold_out<F: Real>(
    data: &Dataset<F>,
    fraction: f64,
    seed: u64,
    each_class: bool,
) -> Result<(Dataset<F>, Dataset<F>)> {
    let (strata, classes) = folds::strata(data);
    let held = folds::holdout(&strata, classes, fraction, seed);
    if let Some((class, rows)) = folds::class_held_whole(data, &held, each_class) {
        return Err(Error::Usage(format!(
            "--validation-fraction {fraction} holds out every row of class {} ({}), \
             leaving it none to train on; hold out a smaller fraction, or add rows of \
             that class",
            crate::text::Quoted(&class),
            crate::text::count(rows, "row")
        )));
    }
    let (kept, out) = folds::split(data, &held);
    if kept.rows() == 0 || out.rows() == 0 {
        return Err(Error::Usage(format!(
            "--validation-fraction {fraction} of {} leaves {} to train on and {} held out; \
             both need rows",
            crate::text::count(data.rows(), "row"),
            crate::text::count(kept.rows(), "row"),
            crate::text::count(out.rows(), "row")
        )));
    }
    Ok((kept, out))
}
