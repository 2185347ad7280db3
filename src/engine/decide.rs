//! Certified predictions: the class a fixed model gives every row, from an
//! engine's certificates, with the reference dot wherever they are uncertain.
//!
//! `predict` and `eval` need only the sign of s = w~·x~ per row, which is
//! what engines certify: with every label set to +1, "certainly correct"
//! means s > E and so the +1 class, "certainly a mistake" means s < -E and
//! so the -1 class. Every other row gets the host's fast certified margin,
//! then the reference dot. So the classes are those of `predict`'s
//! reference arithmetic on every backend.

use crate::data::{Dataset, Features, Format, LabelMap};
use crate::engine::certify::{self, Bound, Settled};
use crate::engine::reference;
use crate::engine::{MarginEngine, Pass};
use crate::error::Result;
use crate::float::Real;

/// What deciding the rows took.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct DecideStats {
    /// Rows an engine pass settled.
    pub certified: u64,
    /// Rows the host settled with its fast certified margin.
    pub host_certified: u64,
    /// Rows that needed the reference dot.
    pub host_dots: u64,
    /// Why the engine was given up, if it failed (the rest was decided on
    /// the host; no row is decided twice or lost).
    pub engine_failure: Option<String>,
}

/// The data of a prediction: `features` with every label +1, so that an
/// engine's "correct" is the +1 class.
pub fn as_positive<F: Real>(features: Features<F>) -> Dataset<F> {
    let rows = features.rows();
    Dataset {
        features,
        labels: vec![1; rows],
        label_map: LabelMap {
            positive: "+1".into(),
            negative: Some("-1".into()),
        },
        classes: Vec::new(),
        class_ids: Vec::new(),
        source: "<prediction>".into(),
        format: Format::Csv,
        facts: Default::default(),
    }
}

/// The model's weights for data with `cols` feature columns (never more
/// than the model's): the first `cols` feature weights, then the bias.
/// Missing features count as zero, so this is the reference's arithmetic.
pub fn weights_for<F: Real>(augmented: &[F], has_bias: bool, cols: usize) -> Vec<F> {
    let features = augmented.len() - has_bias as usize;
    let mut w = augmented[..cols.min(features)].to_vec();
    w.resize(cols, F::ZERO);
    if has_bias {
        w.push(augmented[augmented.len() - 1]);
    }
    w
}

/// What settled a row in [`settle_row`].
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum SettledBy {
    Engine,
    Host,
    /// Nothing: the verdict is `Unknown`, for the reference dot.
    Neither,
}

/// Row `i`'s decision under weights `w` with label `y`: by the engine's
/// `slack` (0 when no pass covered it), else by the host's certified margin
/// when `host` is given, else `Unknown` (the caller's reference dot).
/// Host-only rows are never settled.
#[allow(clippy::too_many_arguments)]
pub(crate) fn settle_row<F: Real>(
    facts: &certify::RowFacts,
    host: Option<&Bound<F>>,
    slack: f32,
    w: &[F],
    data: &Dataset<F>,
    i: usize,
    bias: bool,
    y: i8,
) -> (Settled, SettledBy) {
    if facts.is_host_only(i) {
        return (Settled::Unknown, SettledBy::Neither);
    }
    let verdict = certify::settle(slack, certify::threshold(0.0));
    if verdict != Settled::Unknown {
        return (verdict, SettledBy::Engine);
    }
    match host.map(|b| crate::engine::cpu::decide(b, w, data.features.row(i), bias, y)) {
        Some(v) if v != Settled::Unknown => (v, SettledBy::Host),
        _ => (Settled::Unknown, SettledBy::Neither),
    }
}

/// Whether each row of `data` (labels all +1, see [`as_positive`]) is in
/// the +1 class under `weights` (s > 0), decided by `engine` where it
/// certifies and by the reference dot elsewhere.
pub fn positive_rows<F: Real>(
    data: &Dataset<F>,
    weights: &[F],
    bias: bool,
    engine: &mut dyn MarginEngine<F>,
) -> Result<(Vec<bool>, DecideStats)> {
    let rows = data.rows();
    let facts = data.facts(bias);
    let mut stats = DecideStats::default();
    let mut use_engine = engine.certifies() && certify::engine_safe(weights, facts.max_norm);
    let host = Bound::<F>::for_weights(weights, facts.l1_max);
    let step = engine.max_pass().clamp(1, 1 << 20);
    let mut positive = vec![false; rows];
    let mut slack = Vec::new();
    let mut start = 0;
    while start < rows {
        let end = (start + step).min(rows);
        slack.clear();
        slack.resize(end - start, 0.0);
        if use_engine {
            let pass = Pass {
                start,
                end,
                weights,
                tau: F::ZERO,
                heads: 1,
            };
            if let Err(e) = engine
                .submit(&pass)
                .and_then(|()| engine.collect(&mut slack))
            {
                stats.engine_failure = Some(e.0);
                use_engine = false;
                slack.fill(0.0);
            }
        }
        for i in start..end {
            let (verdict, by) = settle_row(
                &facts,
                Some(&host),
                slack[i - start],
                weights,
                data,
                i,
                bias,
                1,
            );
            match by {
                SettledBy::Engine => stats.certified += 1,
                SettledBy::Host => stats.host_certified += 1,
                SettledBy::Neither => {}
            }
            positive[i] = match verdict {
                Settled::Correct => true,
                Settled::Mistake => false,
                Settled::Unknown => {
                    stats.host_dots += 1;
                    // A NaN score (overflowing features) is class -1.
                    let s = reference::dot(weights, data.features.row(i), bias);
                    crate::engine::reference::predicted_sign(s) > 0
                }
            };
        }
        start = end;
    }
    Ok((positive, stats))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::data::DenseMatrix;
    use crate::engine::ReferenceEngine;

    #[test]
    fn every_engine_gives_the_reference_classes() {
        // Rows whose scores are exactly 0 (class -1), tiny, and ordinary.
        let values = vec![
            0.0f32, 0.0, 1.0, -1.0, 1e-30, 0.0, -2.0, 3.0, 0.5, 0.25, 1e8, -1e8,
        ];
        let data = as_positive(Features::Dense(DenseMatrix {
            rows: 6,
            cols: 2,
            values: values.into(),
        }));
        let w = [0.5f32, 0.5, 0.0];
        let expected: Vec<bool> = (0..6)
            .map(|i| reference::dot(&w, data.features.row(i), true) > 0.0)
            .collect();
        let mut cpu = crate::engine::cpu::CpuEngine::new(&data, true);
        let (got, stats) = positive_rows(&data, &w, true, &mut cpu).unwrap();
        assert_eq!(got, expected);
        assert!(stats.certified > 0 && stats.host_dots > 0, "{stats:?}");
        let (got, stats) = positive_rows(&data, &w, true, &mut ReferenceEngine).unwrap();
        assert_eq!(got, expected);
        assert_eq!(stats.certified, 0);
    }

    #[test]
    fn a_nan_score_is_the_negative_class_as_in_the_model() {
        // 1e30·1e30 overflows to +inf and the next term to -inf: NaN.
        let data = as_positive(Features::Dense(DenseMatrix {
            rows: 2,
            cols: 2,
            values: vec![1e30f32, -1e30, 1.0, 1.0].into(),
        }));
        let w = [1e30f32, 1e30, 0.0];
        assert!(reference::dot(&w, data.features.row(0), true).is_nan());
        let expected = [
            crate::engine::reference::predicted_sign::<f32>(f32::NAN) > 0,
            crate::engine::reference::predicted_sign::<f32>(2e30) > 0,
        ];
        assert_eq!(expected, [false, true]);
        let mut cpu = crate::engine::cpu::CpuEngine::new(&data, true);
        let (got, _) = positive_rows(&data, &w, true, &mut cpu).unwrap();
        assert_eq!(got, expected);
        let (got, _) = positive_rows(&data, &w, true, &mut ReferenceEngine).unwrap();
        assert_eq!(got, expected);
    }

    #[test]
    fn weights_follow_the_data_columns() {
        assert_eq!(
            weights_for(&[1.0f32, 2.0, 3.0, 9.0], true, 2),
            [1.0, 2.0, 9.0]
        );
        assert_eq!(weights_for(&[1.0f32, 2.0, 3.0], false, 3), [1.0, 2.0, 3.0]);
        assert_eq!(weights_for(&[1.0f32, 2.0, 9.0], true, 0), [9.0]);
    }
}
