//! Keeping the replicas of an exact run identical: after a rank walked
//! some rows, what changed in its state, as exact values.
//!
//! A [`Delta`] holds the new values of every weight the walk's updates
//! touched (and of the average's accumulator at the same places), the
//! counters, and the pocket (its weights only when they were replaced).
//! Values cross as their bits, and a replica writes them over its own, so
//! no arithmetic is repeated and nothing depends on how it would round.

use crate::engine::reference;
use crate::error::{Error, Result};
use crate::float::Real;
use crate::train::{Pocket, State, Stepper};

use super::wire::{Reader, Writer};

/// The state's changes since the last delta.
#[derive(Clone, Debug, PartialEq)]
pub struct Delta<F> {
    pub mistakes_in_epoch: u64,
    pub head_mistakes_in_epoch: Vec<u64>,
    /// Indices into the weights (head after head), increasing; when `full`,
    /// every index (and the message holds none of them).
    pub at: Vec<u64>,
    pub full: bool,
    pub weights: Vec<F>,
    /// The average's accumulator at the same indices (averaged variant).
    pub average: Vec<F>,
    pub pocket: Option<PocketDelta<F>>,
}

/// The pocket's state; its weights only when replaced.
#[derive(Clone, Debug, PartialEq)]
pub struct PocketDelta<F> {
    pub weights: Option<Vec<F>>,
    pub mistakes: u64,
    pub run: u64,
    pub epoch: u64,
    pub current_run: u64,
    pub current_evaluated: bool,
    pub evaluations: u64,
}

/// What the other replicas hold of the pocket, as far as the sender knows,
/// and the sender's scratch space.
#[derive(Clone, Debug, Default)]
pub struct PeerPocket {
    /// The pocket's mistake count they hold (it only falls, and only when
    /// the weights are replaced).
    pub pocket_mistakes: Option<u64>,
    /// Which weights a delta already holds (all false between deltas).
    seen: Vec<bool>,
}

impl<F: Real> Delta<F> {
    /// The changes of `stepper`'s state since the last call (it must keep
    /// its updates: [`Stepper::log_updates`]).
    pub fn take(stepper: &mut Stepper<'_, '_, '_, F>, mirror: &mut PeerPocket) -> Self {
        let data = stepper.data();
        let bias_dim = stepper.dim();
        let updates = stepper.take_updates();
        let s = stepper.state();
        let bias = bias_dim > data.cols();
        // Each weight once, however many updates touched it; when they
        // touched about as many terms as there are weights, all of them.
        let seen = &mut mirror.seen;
        seen.resize(s.weights.len(), false);
        let mut at: Vec<u64> = Vec::new();
        let terms: usize = updates
            .iter()
            .map(|&(i, _)| data.features.row(i).stored() + bias as usize)
            .sum();
        let full = terms > s.weights.len();
        let updates = if full {
            at.extend(0..s.weights.len() as u64);
            Vec::new()
        } else {
            updates
        };
        for (i, h) in updates {
            let base = h * bias_dim;
            reference::for_each_touched(data.features.row(i), bias, bias_dim, |k| {
                if !seen[base + k] {
                    seen[base + k] = true;
                    at.push((base + k) as u64);
                }
            });
        }
        at.sort_unstable();
        for &k in &at {
            seen[k as usize] = false;
        }
        let weights = at.iter().map(|&k| s.weights[k as usize]).collect();
        let average = match &s.average {
            Some(u) => at.iter().map(|&k| u[k as usize]).collect(),
            None => Vec::new(),
        };
        let pocket = s.pocket.as_ref().map(|p| {
            let replaced = mirror.pocket_mistakes != Some(p.mistakes);
            mirror.pocket_mistakes = Some(p.mistakes);
            PocketDelta {
                weights: replaced.then(|| p.weights.clone()),
                mistakes: p.mistakes,
                run: p.run,
                epoch: p.epoch as u64,
                current_run: p.current_run,
                current_evaluated: p.current_evaluated,
                evaluations: p.evaluations,
            }
        });
        Delta {
            mistakes_in_epoch: s.mistakes_in_epoch,
            head_mistakes_in_epoch: s.head_mistakes_in_epoch.clone(),
            at,
            full,
            weights,
            average,
            pocket,
        }
    }

    pub fn write(&self, w: &mut Writer) {
        w.u64(self.mistakes_in_epoch)
            .u64s(&self.head_mistakes_in_epoch)
            .bool(self.full);
        if !self.full {
            w.u64s(&self.at);
        }
        w.reals(&self.weights).reals(&self.average);
        match &self.pocket {
            None => {
                w.u8(0);
            }
            Some(p) => {
                w.u8(1)
                    .u64(p.mistakes)
                    .u64(p.run)
                    .u64(p.epoch)
                    .u64(p.current_run)
                    .bool(p.current_evaluated)
                    .u64(p.evaluations);
                match &p.weights {
                    None => w.u8(0),
                    Some(v) => w.u8(1).reals(v),
                };
            }
        }
    }

    pub fn read(r: &mut Reader<'_>) -> Result<Self> {
        let mistakes_in_epoch = r.u64()?;
        let head_mistakes_in_epoch = r.u64s()?;
        let full = r.bool()?;
        let listed = if full { Vec::new() } else { r.u64s()? };
        let weights: Vec<F> = r.reals()?;
        let at = if full {
            (0..weights.len() as u64).collect()
        } else {
            listed
        };
        let average = r.reals()?;
        let pocket = match r.u8()? {
            0 => None,
            _ => {
                let (mistakes, run, epoch, current_run) = (r.u64()?, r.u64()?, r.u64()?, r.u64()?);
                let current_evaluated = r.bool()?;
                let evaluations = r.u64()?;
                let weights = match r.u8()? {
                    0 => None,
                    _ => Some(r.reals()?),
                };
                Some(PocketDelta {
                    weights,
                    mistakes,
                    run,
                    epoch,
                    current_run,
                    current_evaluated,
                    evaluations,
                })
            }
        };
        if weights.len() != at.len() || !(average.is_empty() || average.len() == at.len()) {
            return Err(Error::Train(
                "a state update from another rank is inconsistent".into(),
            ));
        }
        Ok(Delta {
            mistakes_in_epoch,
            head_mistakes_in_epoch,
            at,
            full,
            weights,
            average,
            pocket,
        })
    }

    /// Writes the changes over `stepper`'s state.
    pub fn apply(
        self,
        stepper: &mut Stepper<'_, '_, '_, F>,
        mirror: &mut PeerPocket,
    ) -> Result<()> {
        let n = stepper.state().weights.len() as u64;
        if self.at.iter().any(|&k| k >= n) || (self.full && self.at.len() as u64 != n) {
            return Err(Error::Train(format!(
                "a state update from another rank changes weight {} of {n}",
                self.at.iter().max().copied().unwrap_or(0) + 1
            )));
        }
        let changes: Vec<(usize, F)> = self
            .at
            .iter()
            .zip(&self.weights)
            .map(|(&k, &v)| (k as usize, v))
            .collect();
        stepper.adopt_weights(&changes)?;
        if let Some(p) = &self.pocket {
            mirror.pocket_mistakes = Some(p.mistakes);
        }
        stepper.adopt_bookkeeping(|s: &mut State<F>| {
            s.mistakes_in_epoch = self.mistakes_in_epoch;
            s.head_mistakes_in_epoch = self.head_mistakes_in_epoch;
            if let Some(u) = &mut s.average {
                for (&k, &v) in self.at.iter().zip(&self.average) {
                    u[k as usize] = v;
                }
            }
            if let Some(d) = self.pocket {
                let weights = match (d.weights, s.pocket.take()) {
                    (Some(w), _) => w,
                    (None, Some(p)) => p.weights,
                    (None, None) => Vec::new(),
                };
                s.pocket = Some(Pocket {
                    weights,
                    mistakes: d.mistakes,
                    run: d.run,
                    epoch: d.epoch as usize,
                    current_run: d.current_run,
                    current_evaluated: d.current_evaluated,
                    evaluations: d.evaluations,
                });
            }
        });
        Ok(())
    }
}
