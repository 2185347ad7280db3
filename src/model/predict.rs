//! Predicting with a model: every row's class, as the reference arithmetic
//! gives it, on whichever backend is asked for.
//!
//! A single head needs only the sign of s = w~·x~, which engines certify
//! ([`crate::engine::decide`]): the rows they cannot certify get the reference dot
//! on the host. Several heads compare scores, which only the reference dots
//! decide exactly, so one-vs-rest predictions are made on the host.

use std::path::Path;

use crate::data::Features;
use crate::engine::backend::{self, Backend};
use crate::engine::gpu::GpuOptions;
use crate::error::{Error, Result};
use crate::float::Real;
use crate::model::Model;
use crate::text::{Quoted, printed_label};

pub use crate::engine::decide::DecideStats;

/// Every row's predicted class, as an index into [`Model::class_names`].
#[derive(Clone, Debug, PartialEq)]
pub struct Predictions<F> {
    pub classes: Vec<usize>,
    pub stats: DecideStats,
    /// The first row whose score is not a finite number, if any (see
    /// [`Model::first_non_finite_score`]): its class above is the one a
    /// NaN or infinite score gives by the rule, not a prediction.
    pub non_finite: Option<NonFinite<F>>,
}

/// A row whose score w~·x~ overflowed the model's precision (or is NaN).
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct NonFinite<F> {
    /// 0-based row and head.
    pub row: usize,
    pub head: usize,
    pub score: F,
}

impl<F: Real> Predictions<F> {
    /// Every row's class, or the error of the first row whose score is not
    /// a finite number (see [`Model::non_finite_score`]); `data` names the
    /// file the rows were read from.
    pub fn into_classes(self, model: &Model<F>, data: &Path) -> Result<Vec<usize>> {
        match self.non_finite {
            Some(bad) => Err(model.non_finite_score(data, bad)),
            None => Ok(self.classes),
        }
    }
}

impl<F: Real> Model<F> {
    /// The class of every row of `features` (no more columns than the model
    /// has features; missing ones count as zero), decided on `backend` for a
    /// binary model. The features are in the data's own units: a model with
    /// a scaling applies it first, to a copy. Otherwise the features are
    /// lent to the engine and put back, not copied.
    pub fn predict(
        &self,
        features: &mut Features<F>,
        backend: Backend,
        gpu: &GpuOptions,
    ) -> Result<Predictions<F>> {
        if let Some(s) = self.scaling() {
            let mut scaled = s
                .apply(features)
                .map_err(|e| crate::error::Error::Train(format!("cannot scale the data: {e}")))?;
            return self.predict_scaled(&mut scaled, backend, gpu);
        }
        self.predict_scaled(features, backend, gpu)
    }

    /// The first row (and head) of `features` (in the weights' units)
    /// whose score w~·x~ is not a finite number: such a row has no class.
    /// Only rows whose score could overflow get a dot product: |w~·x~| is at
    /// most max|w~| times the row's L1 norm plus 1, and the rounding of a
    /// sum of n terms adds at most a factor (1 + u)^n, under 2 for any row
    /// there can be; below the largest finite value, the row is safe.
    pub fn first_non_finite_score(&self, features: &Features<F>) -> Option<NonFinite<F>> {
        let largest: Vec<f64> = (0..self.heads())
            .map(|h| {
                self.head(h)
                    .iter()
                    .map(|w| w.to_f64().abs())
                    .fold(0.0, f64::max)
            })
            .collect();
        (0..features.rows()).find_map(|row| {
            let x = features.row(row);
            let l1 = x.l1_upper_f64() + 1.0;
            (0..self.heads()).find_map(|head| {
                if 2.0 * largest[head] * l1 < F::MAX_VALUE {
                    return None;
                }
                let score = crate::engine::reference::dot(self.head(head), x, self.has_bias());
                (!score.is_finite()).then_some(NonFinite { row, head, score })
            })
        })
    }

    /// `features` (read from `data`) in the weights' units, for scoring
    /// them: scaled, for a model trained with a scaling. An error when a
    /// row's score is not a finite number (see [`Model::non_finite_score`]).
    pub fn scored_features(&self, features: Features<F>, data: &Path) -> Result<Features<F>> {
        let features = self.input(features)?;
        if let Some(bad) = self.first_non_finite_score(&features) {
            return Err(self.non_finite_score(data, bad));
        }
        Ok(features)
    }

    /// The error for a row of `data` whose score is not a finite number: it
    /// has no class, and the one a NaN or infinity gives would be a guess.
    pub fn non_finite_score(&self, data: &Path, bad: NonFinite<F>) -> Error {
        let names = self.class_names();
        let class = if self.heads() == 1 {
            String::new()
        } else {
            format!(" for class {}", Quoted(names[bad.head]))
        };
        let precision = F::PRECISION.name();
        Error::data(
            data,
            format!(
                "row {}: the score w·x{class} is {}: the model's weights times this row's \
                 values overflow {precision}, so the row has no class; {}",
                bad.row + 1,
                bad.score,
                crate::float::overflow_remedy(precision)
            ),
        )
    }

    /// The names of the columns of rows scored by every head, tab-separated:
    /// `predicted`, then the class of each score (a binary model's one score
    /// is its +1 class's). A tab inside a class name would shift the
    /// columns: such names are quoted, with the tab escaped.
    pub fn scores_header(&self) -> String {
        let names = self.class_names();
        let scored: &[&str] = if self.heads() == 1 {
            &names[1..]
        } else {
            &names
        };
        let mut line = "predicted".to_owned();
        for n in scored {
            line.push('\t');
            line.push_str(&printed_label(n));
        }
        line
    }

    /// [`Model::predict`] for features already in the weights' units.
    fn predict_scaled(
        &self,
        features: &mut Features<F>,
        backend: Backend,
        gpu: &GpuOptions,
    ) -> Result<Predictions<F>> {
        let non_finite = self.first_non_finite_score(features);
        if self.heads() > 1 {
            let mut scores = Vec::with_capacity(self.heads());
            let classes = (0..features.rows())
                .map(|i| {
                    self.scores(features.row(i), &mut scores);
                    self.class_of_scores(&scores)
                })
                .collect();
            return Ok(Predictions {
                classes,
                stats: DecideStats {
                    host_dots: (features.rows() * self.heads()) as u64,
                    ..DecideStats::default()
                },
                non_finite,
            });
        }
        let cols = features.cols();
        let data =
            crate::engine::decide::as_positive(std::mem::replace(features, Features::empty()));
        let weights = crate::engine::decide::weights_for(self.head(0), self.has_bias(), cols);
        let decided = backend::choose(backend, gpu, &data, self.has_bias()).and_then(|mut c| {
            crate::engine::decide::positive_rows(
                &data,
                &weights,
                self.has_bias(),
                c.engine.as_mut(),
            )
        });
        *features = data.features;
        let (positive, stats) = decided?;
        Ok(Predictions {
            classes: positive.into_iter().map(usize::from).collect(),
            stats,
            non_finite,
        })
    }
}
