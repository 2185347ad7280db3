//! The one interface between the training loop and a way of obtaining margins.
//!
//! An engine never decides anything. For a range of positions it reports which
//! rows it could *not* certify as correct (see [`crate::certify`]) under the
//! weights the loop says are in force at each position. The loop resolves
//! those rows itself with the reference arithmetic.

use std::ops::Range;

use crate::float::Real;

/// Weights in force from position `from` onward: the previous segment's
/// weights (or the pass base) with the coordinates of `patch` overwritten.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Segment {
    pub from: usize,
    /// Range into [`Pass::patch_coords`] / [`Pass::patch_values`].
    pub patch: Range<usize>,
}

/// One evaluation request: positions `start..end` under piecewise-constant
/// weights. Positions are row indices of the (possibly shuffled) dataset.
#[derive(Clone, Copy, Debug)]
pub struct Pass<'a, F> {
    pub start: usize,
    pub end: usize,
    /// The weights in force at `start` (the exact host state there).
    pub base: &'a [F],
    /// Later segments in increasing `from`, each with `start < from < end`.
    pub segments: &'a [Segment],
    pub patch_coords: &'a [u32],
    pub patch_values: &'a [F],
}

impl<F: Real> Pass<'_, F> {
    pub fn len(&self) -> usize {
        self.end - self.start
    }

    pub fn is_empty(&self) -> bool {
        self.end == self.start
    }

    /// Number of u32 words of the flag bitmask for this pass.
    pub fn flag_words(&self) -> usize {
        self.len().div_ceil(32)
    }

    /// Calls `f(segment_index, weights)` for the base (index 0) and every
    /// later segment with its weights materialised in `scratch`. For engines
    /// that want one dense weight vector per segment.
    pub fn for_each_materialised(&self, scratch: &mut Vec<F>, mut f: impl FnMut(usize, &[F])) {
        scratch.clear();
        scratch.extend_from_slice(self.base);
        f(0, scratch);
        for (k, seg) in self.segments.iter().enumerate() {
            for e in seg.patch.clone() {
                scratch[self.patch_coords[e] as usize] = self.patch_values[e];
            }
            f(k + 1, scratch);
        }
    }

    /// Index of the segment in force at `pos` (0 = base).
    pub fn segment_at(&self, pos: usize) -> usize {
        self.segments.partition_point(|s| s.from <= pos)
    }
}

/// A failure of the device behind an engine. The loop's state is unaffected:
/// it can continue with another engine from the same position.
#[derive(Clone, Debug, thiserror::Error)]
#[error("{0}")]
pub struct EngineError(pub String);

/// Counters an engine keeps for reports and benchmarks.
#[derive(Clone, Debug, Default, PartialEq, serde::Serialize)]
pub struct EngineStats {
    /// Evaluation requests served (GPU: round trips).
    pub passes: u64,
    /// Row evaluations, counting a row again each time a pass covers it.
    pub rows_evaluated: u64,
    /// Rows the engine flagged (not certified correct).
    pub rows_flagged: u64,
    /// Time spent inside `evaluate`, in seconds.
    pub seconds: f64,
}

/// A way of obtaining certified margins.
pub trait MarginEngine<F: Real> {
    /// Short name for reports (`reference`, `cpu`, `gpu: NVIDIA H100`...).
    fn name(&self) -> String;

    /// False for an engine that certifies nothing: the loop then resolves
    /// every row itself and skips `evaluate`.
    fn certifies(&self) -> bool {
        true
    }

    /// A good number of positions for a pass to cover, given the fraction of
    /// rows recently flagged. The loop clamps it to what is left of the epoch.
    fn preferred_window(&self, flag_rate: f64) -> usize;

    /// Sets bit `p - start` of `flags` (zeroed, `pass.flag_words()` long) for
    /// every position `p` whose row is not certified correct under the
    /// weights of its segment.
    fn evaluate(&mut self, pass: &Pass<'_, F>, flags: &mut [u32]) -> Result<(), EngineError>;

    fn stats(&self) -> EngineStats;
}

/// The engine that certifies nothing: with it the loop *is* the textbook
/// sequential algorithm, computing every margin with the reference dot.
#[derive(Debug, Default)]
pub struct ReferenceEngine;

impl<F: Real> MarginEngine<F> for ReferenceEngine {
    fn name(&self) -> String {
        "reference".into()
    }

    fn certifies(&self) -> bool {
        false
    }

    fn preferred_window(&self, _flag_rate: f64) -> usize {
        usize::MAX
    }

    fn evaluate(&mut self, pass: &Pass<'_, F>, flags: &mut [u32]) -> Result<(), EngineError> {
        flags.fill(u32::MAX);
        let tail = pass.len() % 32;
        if tail != 0
            && let Some(last) = flags.last_mut()
        {
            *last = (1u32 << tail) - 1;
        }
        Ok(())
    }

    fn stats(&self) -> EngineStats {
        EngineStats::default()
    }
}
