//! Whole-number margins: where the rows are kept as bytes and the weights
//! are whole numbers, the host's fast margin of a row is the reference's
//! own, bit for bit ([`certify::whole_sum_is_exact`]), so the loop decides
//! the row from it with no reference dot, and a mistake's loss for the
//! mean-loss rule reuses it instead of summing the row again.
//!
//! The weights stay whole under the classic update of whole rows, so they
//! are checked afresh only when something other than an update changed
//! them (a warm start, weights adopted from another process).

use crate::engine::certify::{self, Bound, Settled};
use crate::engine::reference;
use crate::float::Real;
use crate::train::sweep::Loop;

/// What the loop knows of whether its weights are whole numbers.
#[derive(Default)]
pub(super) struct WholeWeights {
    /// The weights' version and the updates made when they were last
    /// checked, and the answer then.
    checked: Option<(u64, u64, bool)>,
}

impl WholeWeights {
    /// Whether `weights` (of `version`, after `updates` updates) are whole:
    /// the last answer while every change since was an update (an update
    /// keeps whole weights whole; weights that were not whole are not
    /// looked at again until they change otherwise).
    fn hold<F: Real>(&mut self, weights: &[F], version: u64, updates: u64) -> bool {
        if let Some((v, u, whole)) = self.checked
            && version - v == updates - u
        {
            return whole;
        }
        let whole = certify::all_whole(weights);
        self.checked = Some((version, updates, whole));
        whole
    }

    /// Some weights were set from outside (another process's updates),
    /// the version moving from `version - 1` to `version`: the answer
    /// carries over, without a pass over every weight, when it was known
    /// just before and the values set (`all_set_whole`) keep it.
    pub(super) fn set(&mut self, all_set_whole: bool, version: u64, updates: u64) {
        if let Some((v, u, whole)) = self.checked
            && version - 1 - v == updates - u
        {
            self.checked = Some((version, updates, whole && all_set_whole));
        }
    }
}

/// A mistake's margin the host computed exactly: of head `head` at walk
/// position `at`, under the weights of `version`.
pub(super) struct KnownMargin<F> {
    pub at: usize,
    pub head: usize,
    pub version: u64,
    pub value: F,
}

impl<F: Real> Loop<'_, F> {
    /// Whether the host's margins of byte rows are exact now: the rows are
    /// bytes, every update is the classic one ([`Loop::unit_updates`]),
    /// the engine certifies (so `--backend reference` stays the textbook
    /// loop), and the weights are whole.
    pub(super) fn margins_whole(&mut self) -> bool {
        if self.bytes.is_none() || self.host_bound.is_none() || !self.unit_updates() {
            return false;
        }
        self.whole
            .hold(&self.state.weights, self.weights_version, self.updates_made)
    }

    /// The host's verdict on row `r` of the data, labelled `y`, under
    /// weights `w`, from its fast margin: for a row kept as bytes, exact
    /// with its margin when `whole` ([`Loop::margins_whole`]) and the row's
    /// sum is exact; else the certified one.
    #[inline]
    pub(super) fn host_verdict(
        &self,
        bound: &Bound<F>,
        w: &[F],
        r: usize,
        y: i8,
        whole: bool,
    ) -> (Settled, Option<F>) {
        use crate::engine::cpu::{self, byte_rows};
        let Some(bytes) = &self.bytes else {
            return (
                cpu::decide(bound, w, self.data.features.row(r), self.bias, y),
                None,
            );
        };
        let x = bytes.row(r);
        if !whole {
            return (byte_rows::decide(bound, w, x, self.bias, y), None);
        }
        // One sum for both: past 2^p it is certified like any other.
        let sums = byte_rows::margin(w, x, self.bias);
        match byte_rows::exact_of(sums) {
            Some(s) => {
                let verdict = match reference::is_mistake_within(y, s, self.tau) {
                    true => Settled::Mistake,
                    false => Settled::Correct,
                };
                (verdict, Some(s))
            }
            None => (byte_rows::settle(bound, sums, x.len(), self.bias, y), None),
        }
    }

    /// Keeps the exact margin of the mistake at position `i`, head `h`, for
    /// its update's loss ([`Loop::known_margin`]).
    pub(super) fn keep_margin(&mut self, i: usize, h: usize, value: Option<F>) {
        self.known = value.map(|value| KnownMargin {
            at: i,
            head: h,
            version: self.weights_version,
            value,
        });
    }

    /// The margin kept for the update of head `h` at position `i`, if it
    /// was computed under the current weights (before the update counts).
    pub(super) fn known_margin(&mut self, i: usize, h: usize) -> Option<F> {
        let k = self.known.take()?;
        (k.at == i && k.head == h && k.version == self.weights_version).then_some(k.value)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The answer is looked up again only after a change that was not an
    /// update; weights set from outside keep it when they are whole.
    #[test]
    fn whole_weights_are_checked_again_only_after_other_changes() {
        let mut known = WholeWeights::default();
        let (whole, half) = ([1.0f64, -3.0, 0.0], [1.0f64, 0.5, 0.0]);
        assert!(known.hold(&whole, 0, 0));
        // Two updates: the weights are not looked at.
        assert!(known.hold(&half, 2, 2));
        // Changed otherwise: looked at again.
        assert!(!known.hold(&half, 3, 2));
        assert!(known.hold(&whole, 4, 2));
        // Set from outside, to whole values, then to a fraction.
        known.set(true, 5, 2);
        assert!(known.hold(&half, 5, 2));
        known.set(false, 6, 2);
        assert!(!known.hold(&whole, 6, 2));
        // A set after an unseen change leaves the answer to a fresh look.
        known.set(true, 8, 2);
        assert!(known.hold(&whole, 8, 2));
        assert!(!certify::all_whole(&[f64::NAN]) && !certify::all_whole(&[f64::INFINITY]));
        assert!(certify::all_whole(&[-0.0f32, 2f32.powi(30)]));
    }
}
