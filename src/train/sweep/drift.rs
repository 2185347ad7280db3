//! How far the weights moved since an engine pass: the drift bound that
//! keeps a pass's slacks usable while the host updates, and the scan's
//! window of slacks that carries one per head.

use crate::engine::certify;
use crate::float::Real;

/// An upper bound of δ = ||w - w_pass||, kept up to date incrementally.
pub(super) struct Drift {
    /// Σ (w_k - w_pass,k)² as computed, and a bound on its rounding error.
    pub(super) sq: f64,
    pub(super) err: f64,
    pub(super) threshold: f64,
}

impl Drift {
    /// Starts tracking w relative to `base`: the pass may have been
    /// submitted before the latest updates, so w need not equal it.
    pub(super) fn start<F: Real>(&mut self, w: &[F], base: &[F]) {
        self.sq = 0.0;
        self.err = 0.0;
        for (a, b) in w.iter().zip(base) {
            if a != b {
                self.change(0.0, a.to_f64() - b.to_f64());
            }
        }
        self.refresh();
    }

    /// Coordinate `k` moved from `old` to `new` (both relative to w_pass).
    #[inline]
    pub(super) fn change(&mut self, old: f64, new: f64) {
        let (o, n) = (old * old, new * new);
        self.sq = self.sq + n - o;
        // Each of the few operations above errs by at most 2^-53 of the
        // magnitudes involved; 2^-50 leaves room for all of them.
        self.err += 2f64.powi(-50) * (self.sq.abs() + n + o);
    }

    pub(super) fn refresh(&mut self) {
        let delta = (self.sq.max(0.0) + self.err).sqrt() * (1.0 + 2f64.powi(-50));
        self.threshold = certify::threshold(delta);
    }
}

/// A window of slacks and the weights it was computed with.
pub(super) struct ScanWindow<F> {
    pub(super) start: usize,
    pub(super) end: usize,
    pub(super) weights: Vec<F>,
    pub(super) slack: Vec<f32>,
    /// One drift bound per head, relative to `weights`.
    pub(super) drift: Vec<Drift>,
    /// The weights changed since the pass.
    pub(super) moved: bool,
    /// `drift` must be recomputed from all the weights before use.
    pub(super) stale: bool,
    /// Weight changes followed one at a time since the pass: beyond the
    /// number of weights, recomputing the drift once is cheaper.
    pub(super) followed: usize,
}
