//! The named variants of the classic loop, each with its own exact reference.
//!
//! - **Classic**: Rosenblatt's rule, the default.
//! - **Averaged** (`--average`): predicts with the average of the weights
//!   after every row visit, w_avg = (1/T)·Σ_{t=1..T} w_t. Computed without
//!   work per row: on a mistake at visit c (1-based over all epochs) the
//!   loop also does u_k <- u_k ± fl(F(c-1)·x_k) (+ for y = +1, - for -1) on
//!   each stored coordinate and u_bias <- u_bias ± F(c-1); at the end
//!   w_avg,k = fl(w_k - fl(u_k / F(T))). Because Σ_t w_t = T·w_T - Σ_j (c_j - 1)·y_j·x_j,
//!   this is the average in exact arithmetic; the order of operations above
//!   is the definition of its rounding, shared by every backend.
//! - **Pocket with ratchet** (`--pocket`, Gallant 1990): keeps the weights
//!   with the fewest training mistakes (rows with y·s <= 0, counted over the
//!   whole training set) seen so far. The *run* of the current weights is
//!   the number of consecutive rows they classified correctly. Each distinct
//!   weight vector is evaluated at most once, when its run first exceeds the
//!   pocket's run; it replaces the pocket only if it makes strictly fewer
//!   mistakes (the ratchet), and the pocket's run becomes that run. The
//!   initial weights are the first pocket, evaluated before training.
//! - **Margin threshold** (`--margin TAU`, combinable with the others):
//!   updates when y·s <= τ instead of 0 (see [`crate::engine::certify::Bound::with_margin`]).

use crate::data::Row;
use crate::error::{Error, ParamError, Result};
use crate::float::Real;

/// Which weights training returns.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Variant {
    #[default]
    Classic,
    Averaged,
    Pocket,
}

impl Variant {
    pub fn name(self) -> &'static str {
        match self {
            Variant::Classic => "classic",
            Variant::Averaged => "averaged",
            Variant::Pocket => "pocket",
        }
    }
}

/// The margin threshold τ as the user wrote it, so it can be read directly
/// in either precision (no double rounding through f64).
#[derive(Clone, Debug, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub struct Margin(String);

impl Margin {
    /// Checks that `text` is a finite number >= 0 in both precisions. (A
    /// threshold below 0 would count no row of the zero weights as a
    /// mistake: a run from them would learn nothing and call it
    /// convergence.)
    pub fn parse(text: &str) -> std::result::Result<Self, ParamError> {
        let ok = |t: &str| {
            t.trim()
                .parse::<f64>()
                .ok()
                .filter(|v| v.is_finite() && *v >= 0.0)
                .is_some()
                && t.trim()
                    .parse::<f32>()
                    .ok()
                    .filter(|v| v.is_finite())
                    .is_some()
        };
        if ok(text) {
            Ok(Margin(text.trim().to_owned()))
        } else {
            Err(ParamError::Margin(text.to_owned()))
        }
    }

    /// τ in precision `F` (0 when unparsable, which `parse` rules out).
    pub fn value<F: Real>(&self) -> F {
        self.0.parse::<F>().unwrap_or(F::ZERO)
    }

    pub fn text(&self) -> &str {
        &self.0
    }
}

impl std::str::FromStr for Margin {
    type Err = ParamError;
    fn from_str(s: &str) -> std::result::Result<Self, ParamError> {
        Margin::parse(s)
    }
}

/// The pocket algorithm's state.
#[derive(Clone, Debug, PartialEq)]
pub struct Pocket<F> {
    pub weights: Vec<F>,
    /// Training mistakes (y·s <= 0 over all rows) of the pocket weights.
    pub mistakes: u64,
    /// The run of the pocket weights when they were pocketed.
    pub run: u64,
    /// 0-based epoch in which the pocket weights were pocketed (0 for the
    /// initial weights).
    pub epoch: usize,
    /// The run of the current weights, and whether they were evaluated.
    pub current_run: u64,
    pub current_evaluated: bool,
    /// Candidates evaluated so far.
    pub evaluations: u64,
}

impl<F: Real> Pocket<F> {
    /// The pocket of the initial weights, whose training mistakes are
    /// `mistakes`: evaluated already, with a run of 0.
    pub fn initial(weights: Vec<F>, mistakes: u64) -> Self {
        Pocket {
            weights,
            mistakes,
            run: 0,
            epoch: 0,
            current_run: 0,
            current_evaluated: true,
            evaluations: 1,
        }
    }

    /// The current weights made a mistake: they change, and the new ones
    /// start a run of their own.
    pub fn on_mistake(&mut self) {
        self.current_run = 0;
        self.current_evaluated = false;
    }

    /// Of the next `rows` rows the current weights classify correctly, the
    /// 1-based one after which they are due for evaluation (their run then
    /// first exceeds the pocket's), if any.
    pub fn due_within(&self, rows: u64) -> Option<u64> {
        if self.current_evaluated {
            return None;
        }
        // The run never exceeds the pocket's without an evaluation, so the
        // row is at least the next one.
        let k = (self.run + 1).saturating_sub(self.current_run).max(1);
        (k <= rows).then_some(k)
    }

    /// The current weights `weights`, at epoch `epoch`, make `mistakes`
    /// training mistakes: they replace the pocket if they make strictly
    /// fewer (the ratchet).
    pub fn evaluated(&mut self, weights: &[F], mistakes: u64, epoch: usize) {
        self.current_evaluated = true;
        self.evaluations += 1;
        if mistakes < self.mistakes {
            self.weights.clear();
            self.weights.extend_from_slice(weights);
            self.mistakes = mistakes;
            self.run = self.current_run;
            self.epoch = epoch;
        }
    }
}

/// The averaged-perceptron accumulator update for a mistake at 1-based
/// visit `c` on `row` with label `y`.
pub fn accumulate<F: Real>(u: &mut [F], row: Row<'_, F>, y: i8, c: u64, bias: bool) -> Result<()> {
    accumulate_weighted(u, row, y, c, None, bias, None)
}

/// [`accumulate`] for a class-weighted update (`--class-weight`): the
/// update's own terms v_k = fl(w_c·x_k) and v_bias = w_c (see
/// [`crate::engine::reference::apply_weighted_update`]) take the place of x_k and 1,
/// so u_k <- u_k ± fl(F(c-1)·fl(w_c·x_k)) and u_bias <- u_bias ± fl(F(c-1)·w_c).
/// With no class weight (`None`) this is the unweighted accumulator. With
/// an intercept decay d ([`crate::train::TrainParams::intercept_decay`])
/// the bias's own term is the step the update made, fl(w_c·d) (d alone
/// without a class weight).
pub fn accumulate_weighted<F: Real>(
    u: &mut [F],
    row: Row<'_, F>,
    y: i8,
    c: u64,
    class_weight: Option<F>,
    bias: bool,
    intercept_decay: Option<F>,
) -> Result<()> {
    let k = F::from_f64((c - 1) as f64);
    let mut finite = true;
    row.for_each(|j, x| {
        let v = match class_weight {
            Some(w) => w * x,
            None => x,
        };
        let kx = k * v;
        u[j] = if y > 0 { u[j] + kx } else { u[j] - kx };
        finite &= u[j].is_finite();
    });
    if bias {
        let last = u.len() - 1;
        let step = match (class_weight, intercept_decay) {
            (Some(w), Some(d)) => Some(w * d),
            (w, d) => w.or(d),
        };
        let kb = match step {
            Some(s) => k * s,
            None => k,
        };
        u[last] = if y > 0 { u[last] + kb } else { u[last] - kb };
        finite &= u[last].is_finite();
    }
    if finite {
        Ok(())
    } else {
        Err(Error::Train(format!(
            "the averaged perceptron's accumulator overflowed at visit {c}: too many visits or too large features for {}; {}",
            F::PRECISION,
            match F::PRECISION {
                crate::float::Precision::F32 => "use f64 precision, or rescale the features",
                crate::float::Precision::F64 => "rescale the features (they overflow f64 too)",
            }
        )))
    }
}

/// w_avg = w - u / F(T), coordinate by coordinate.
pub fn averaged<F: Real>(w: &[F], u: &[F], visits: u64) -> Vec<F> {
    let t = F::from_f64(visits.max(1) as f64);
    w.iter().zip(u).map(|(&w, &u)| w - u / t).collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn averaged_weights_are_the_mean_of_every_iterate() {
        // Visits 1..=4; mistakes at visits 1 (+x1) and 3 (-x2), no bias.
        let (x1, x2) = ([1.0f64, 2.0], [4.0f64, -2.0]);
        let mut w = [0.0f64; 2];
        let mut u = [0.0f64; 2];
        let mut iterates = Vec::new();
        for c in 1..=4u64 {
            match c {
                1 => {
                    w = [w[0] + x1[0], w[1] + x1[1]];
                    accumulate(&mut u, Row::Dense(&x1), 1, c, false).unwrap();
                }
                3 => {
                    w = [w[0] - x2[0], w[1] - x2[1]];
                    accumulate(&mut u, Row::Dense(&x2), -1, c, false).unwrap();
                }
                _ => {}
            }
            iterates.push(w);
        }
        let mean: Vec<f64> = (0..2)
            .map(|k| iterates.iter().map(|v| v[k]).sum::<f64>() / 4.0)
            .collect();
        assert_eq!(averaged(&w, &u, 4), mean);
    }

    #[test]
    fn margins_parse_in_both_precisions() {
        assert_eq!(Margin::parse(" 0.1 ").unwrap().value::<f32>(), 0.1f32);
        assert_eq!(Margin::parse("0.1").unwrap().value::<f64>(), 0.1f64);
        assert!(Margin::parse("1e39").is_err(), "infinite in f32");
        assert!(Margin::parse("nan").is_err());
        // Below 0 the zero weights pass every row: refused, saying so.
        let e = Margin::parse("-0.5").unwrap_err();
        assert_eq!(
            e.to_string(),
            "the margin threshold must be a finite number >= 0, got \"-0.5\": below 0, the \
             zero weights would pass every row and the run would learn nothing"
        );
        assert_eq!(Margin::parse("-0").unwrap().value::<f64>(), 0.0);
    }
}
