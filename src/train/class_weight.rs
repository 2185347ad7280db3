//! Class weights (`--class-weight balanced|LABEL=W,...`): an update on a row
//! of class y adds c_y·y·x~ instead of y·x~, each product rounded once
//! ([`crate::engine::reference::apply_weighted_update`]).
//!
//! # Which weight an update uses
//! - **Binary**: c_{+1} for rows labelled +1, c_{-1} for rows labelled -1.
//!   `LABEL=W` names the +1 or the -1 label (`rest` for the -1 class of
//!   `--positive` over more than two values). `balanced` gives
//!   c_y = n / (2·n_y), n_y the rows labelled y.
//! - **One-vs-rest**: head h updates its positive rows (class h) with c_h
//!   and its negative rows with 1, as scikit-learn's one-vs-rest does
//!   (`pos_weight = class_weight[h], neg_weight = 1`). `LABEL=W` names a
//!   class; `balanced` gives c_h = n / (K·n_h) for K classes.
//!
//! Labels not named get weight 1. A weight is read in the training precision
//! from its text (no double rounding); a balanced weight is the f64 quotient
//! of the two integers, rounded once to the training precision (numpy's
//! `n_samples / (n_classes * np.bincount(y))`, which scikit-learn's
//! `class_weight="balanced"` uses).
//!
//! # What happens to the mistake bound
//! Novikoff's argument with updates w <- w + c_t·y_t·x~_t: with u a unit
//! separator of margin γ, u·w grows by c_t·γ at least per mistake, and
//! ||w||² by at most c_t²·D² + 2·c_t·τ (y·w·x~ <= τ at a mistake). After M
//! mistakes, with S = Σ c_t >= M·c_min and Σ c_t² <= c_max·S:
//! (γ·S)² <= ||w||² <= c_max·D²·S + 2τ·S, so S <= (c_max·D² + 2τ)/γ² and
//!
//!   M <= (c_max·D² + 2τ) / (c_min·γ²)  =  (c_max/c_min)·(D/γ)² for τ = 0.
//!
//! Equal weights give the classic bound. (Like the classic bound, this is a
//! statement about exact arithmetic; the report checks it with the same
//! allowance for the f64 rounding of D and γ.)

use crate::text::Quoted;
use serde::{Deserialize, Serialize};

use crate::data::Dataset;
use crate::data::labels::same_label;
use crate::error::{Error, ParamError, Result};
use crate::float::Real;

/// The class weights as asked for.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum ClassWeights {
    /// c_y inversely proportional to the class's rows.
    Balanced,
    /// `LABEL=W` pairs, as written (the weight text is read in the training
    /// precision).
    Given(Vec<(String, String)>),
}

impl ClassWeights {
    /// `balanced`, or `LABEL=W,LABEL=W,...` with finite positive weights.
    pub fn parse(text: &str) -> std::result::Result<Self, ParamError> {
        let bad = |why: &str| ParamError::ClassWeight {
            text: text.to_owned(),
            why: why.to_owned(),
        };
        if text.trim() == "balanced" {
            return Ok(ClassWeights::Balanced);
        }
        let mut pairs: Vec<(String, String)> = Vec::new();
        for part in text.split(',') {
            let Some((label, weight)) = part.rsplit_once('=') else {
                return Err(bad(&format!("{} is not LABEL=W", Quoted(part))));
            };
            let (label, weight) = (label.trim(), weight.trim());
            if label.is_empty() {
                return Err(bad(&format!("{} has no label", Quoted(part))));
            }
            if pairs.iter().any(|(l, _)| same_label(l, label)) {
                return Err(bad(&format!("label {} is given twice", Quoted(label))));
            }
            check_weight(weight).map_err(|why| bad(&why))?;
            pairs.push((label.to_owned(), weight.to_owned()));
        }
        Ok(ClassWeights::Given(pairs))
    }

    /// Checks a deserialised value as [`ClassWeights::parse`] checks text.
    pub fn check(&self) -> std::result::Result<(), ParamError> {
        if let ClassWeights::Given(pairs) = self {
            for (label, weight) in pairs {
                check_weight(weight).map_err(|why| ParamError::ClassWeight {
                    text: format!("{label}={weight}"),
                    why,
                })?;
            }
        }
        Ok(())
    }

    /// Each head's weights on `data` with `heads` perceptrons: `[c_neg,
    /// c_pos]` per head, and the class weights by label for reports. A
    /// label that is not one of the data's is an error naming it.
    pub fn resolve<F: Real>(&self, data: &Dataset<F>, heads: usize) -> Result<Resolved<F>> {
        if heads == 1 {
            return self.resolve_binary(data);
        }
        self.resolve_one_vs_rest(data)
    }

    /// [`ClassWeights::resolve`] for one head: a weight for each side, the
    /// labels named by the model's +1 and -1 classes.
    fn resolve_binary<F: Real>(&self, data: &Dataset<F>) -> Result<Resolved<F>> {
        let n = data.rows();
        let map = &data.label_map;
        let names = [map.negative_text().to_owned(), map.positive.clone()];
        let mut c = [F::ONE; 2];
        match self {
            ClassWeights::Balanced => {
                let pos = data.labels.iter().filter(|&&y| y > 0).count();
                for (side, count) in [(0, n - pos), (1, pos)] {
                    c[side] = balanced::<F>(n, 2, count);
                }
            }
            ClassWeights::Given(pairs) => {
                for (label, weight) in pairs {
                    let side = if same_label(label, &map.positive) {
                        1
                    } else if same_label(label, map.negative_text())
                        || (map.negative.is_none() && label == "rest")
                    {
                        0
                    } else {
                        return Err(Error::data(
                            &data.source,
                            format!(
                                "the class weights name label {}, but the model's \
                                 classes are {} (+1) and {} (-1)",
                                Quoted(label),
                                Quoted(&names[1]),
                                Quoted(&names[0])
                            ),
                        ));
                    };
                    c[side] = weight_of::<F>(weight);
                }
            }
        }
        Ok(Resolved {
            heads: vec![c],
            labels: vec![
                (names[1].clone(), c[1].to_f64()),
                (names[0].clone(), c[0].to_f64()),
            ],
        })
    }

    /// [`ClassWeights::resolve`] for one-vs-rest: each class's weight for its
    /// own head's +1 rows, the labels named by the data's classes.
    fn resolve_one_vs_rest<F: Real>(&self, data: &Dataset<F>) -> Result<Resolved<F>> {
        let n = data.rows();
        let k = data.classes.len();
        let mut pos = vec![F::ONE; k];
        match self {
            ClassWeights::Balanced => {
                for (h, class) in data.classes.iter().enumerate() {
                    pos[h] = balanced::<F>(n, k, class.count as usize);
                }
            }
            ClassWeights::Given(pairs) => {
                for (label, weight) in pairs {
                    let Some(h) = data.classes.iter().position(|c| same_label(&c.text, label))
                    else {
                        let known: Vec<String> = data
                            .classes
                            .iter()
                            .take(crate::data::labels::LISTED)
                            .map(|c| Quoted(&c.text).to_string())
                            .collect();
                        return Err(Error::data(
                            &data.source,
                            format!(
                                "the class weights name label {}, which is not a class of \
                                 the data (the classes are {}{})",
                                Quoted(label),
                                known.join(", "),
                                if k > known.len() { ", ..." } else { "" }
                            ),
                        ));
                    };
                    pos[h] = weight_of::<F>(weight);
                }
            }
        }
        Ok(Resolved {
            heads: pos.iter().map(|&c| [F::ONE, c]).collect(),
            labels: data
                .classes
                .iter()
                .zip(&pos)
                .map(|(class, c)| (class.text.clone(), c.to_f64()))
                .collect(),
        })
    }

    /// How the option reads (`balanced`, or the pairs as given).
    pub fn text(&self) -> String {
        match self {
            ClassWeights::Balanced => "balanced".into(),
            ClassWeights::Given(pairs) => pairs
                .iter()
                .map(|(l, w)| format!("{l}={w}"))
                .collect::<Vec<_>>()
                .join(","),
        }
    }
}

impl std::str::FromStr for ClassWeights {
    type Err = ParamError;
    fn from_str(s: &str) -> std::result::Result<Self, ParamError> {
        ClassWeights::parse(s)
    }
}

/// The weights a run uses.
#[derive(Clone, Debug, PartialEq)]
pub struct Resolved<F> {
    /// Per head, `[c for y = -1, c for y = +1]`.
    pub heads: Vec<[F; 2]>,
    /// Each class's weight by label (binary: the +1 label, then the -1
    /// label; one-vs-rest: the weight of each class's positive rows), as
    /// f64 (exact).
    pub labels: Vec<(String, f64)>,
}

impl<F: Real> Resolved<F> {
    /// Head `h`'s weight for a row labelled `y`.
    #[inline]
    pub fn of(&self, h: usize, y: i8) -> F {
        self.heads[h][(y > 0) as usize]
    }

    /// The smallest and largest weight head `h` updates with (the bound's
    /// c_min and c_max).
    pub fn range(&self, h: usize) -> (f64, f64) {
        let [a, b] = self.heads[h];
        let (a, b) = (a.to_f64(), b.to_f64());
        (a.min(b), a.max(b))
    }
}

/// n / (k·n_c) as numpy computes it (the integer product, then one f64
/// division), rounded once to `F`; 1 for a class without rows.
fn balanced<F: Real>(n: usize, k: usize, count: usize) -> F {
    if count == 0 {
        return F::ONE;
    }
    F::from_f64(n as f64 / ((k as u128 * count as u128) as f64))
}

/// A weight's text read in `F` (checked finite and positive by `parse`).
fn weight_of<F: Real>(text: &str) -> F {
    text.parse::<F>().unwrap_or(F::ONE)
}

/// Finite and positive in both precisions.
fn check_weight(text: &str) -> std::result::Result<(), String> {
    let ok32 = text
        .parse::<f32>()
        .ok()
        .filter(|v| v.is_finite() && *v > 0.0);
    let ok64 = text
        .parse::<f64>()
        .ok()
        .filter(|v| v.is_finite() && *v > 0.0);
    if ok32.is_some() && ok64.is_some() {
        Ok(())
    } else {
        Err(format!(
            "weight \"{text}\" is not a finite positive number (in f32 and f64)"
        ))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::data::{ClassLabel, DenseMatrix, Features, LabelMap};

    fn data(labels: Vec<i8>, negative: Option<&str>) -> Dataset<f64> {
        let n = labels.len();
        Dataset {
            features: Features::Dense(DenseMatrix {
                rows: n,
                cols: 1,
                values: vec![1.0; n].into(),
            }),
            labels,
            label_map: LabelMap {
                positive: "yes".into(),
                negative: negative.map(str::to_owned),
            },
            classes: vec![],
            class_ids: vec![],
            source: "d.csv".into(),
            format: crate::data::Format::Csv,
            facts: Default::default(),
        }
    }

    #[test]
    fn weights_parse_and_refuse_with_the_reason() {
        assert_eq!(ClassWeights::parse("balanced"), Ok(ClassWeights::Balanced));
        assert_eq!(
            ClassWeights::parse("a=2, b = 0.5,1=1e-3"),
            Ok(ClassWeights::Given(vec![
                ("a".into(), "2".into()),
                ("b".into(), "0.5".into()),
                ("1".into(), "1e-3".into())
            ]))
        );
        let why = |t: &str| match ClassWeights::parse(t) {
            Err(ParamError::ClassWeight { why, .. }) => why,
            other => panic!("{other:?}"),
        };
        assert_eq!(why("a"), "\"a\" is not LABEL=W");
        assert_eq!(why("=2"), "\"=2\" has no label");
        assert_eq!(
            why("a=0"),
            "weight \"0\" is not a finite positive number (in f32 and f64)"
        );
        assert!(
            why("a=1e39").contains("not a finite positive"),
            "infinite in f32"
        );
        assert_eq!(why("1=2,+1.0=3"), "label \"+1.0\" is given twice");
    }

    #[test]
    fn binary_weights_follow_the_labels() {
        let d = data(vec![1, -1, -1, -1], Some("no"));
        let r = ClassWeights::Balanced.resolve(&d, 1).unwrap();
        // n / (2 n_y): 4/2 for the one +1 row, 4/6 for the three -1 rows.
        assert_eq!(r.heads, vec![[4.0 / 6.0, 2.0]]);
        assert_eq!(r.range(0), (4.0 / 6.0, 2.0));
        assert_eq!(r.labels[0], ("yes".to_owned(), 2.0));
        let given = ClassWeights::parse("no=0.5")
            .unwrap()
            .resolve(&d, 1)
            .unwrap();
        assert_eq!((given.of(0, -1), given.of(0, 1)), (0.5, 1.0));
        let e = ClassWeights::parse("maybe=2")
            .unwrap()
            .resolve(&d, 1)
            .unwrap_err();
        assert!(
            e.to_string().contains("are \"yes\" (+1) and \"no\" (-1)"),
            "{e}"
        );
        let rest = data(vec![1, -1], None);
        let r = ClassWeights::parse("rest=3")
            .unwrap()
            .resolve(&rest, 1)
            .unwrap();
        assert_eq!(r.heads, vec![[3.0, 1.0]]);
    }

    #[test]
    fn one_vs_rest_weights_the_positive_rows_of_each_head() {
        let mut d = data(vec![], None);
        d.classes = ["a", "b", "c"]
            .iter()
            .zip([1u64, 2, 3])
            .map(|(t, count)| ClassLabel {
                text: (*t).into(),
                number: None,
                count,
                first_line: 1,
            })
            .collect();
        d.features = Features::Dense(DenseMatrix {
            rows: 6,
            cols: 1,
            values: vec![1.0; 6].into(),
        });
        let r = ClassWeights::Balanced.resolve(&d, 3).unwrap();
        assert_eq!(r.heads, vec![[1.0, 2.0], [1.0, 1.0], [1.0, 6.0 / 9.0]]);
        let r = ClassWeights::parse("c=4").unwrap().resolve(&d, 3).unwrap();
        assert_eq!((r.of(2, 1), r.of(2, -1), r.of(0, 1)), (4.0, 1.0, 1.0));
        let e = ClassWeights::parse("z=4")
            .unwrap()
            .resolve(&d, 3)
            .unwrap_err();
        assert!(
            e.to_string()
                .contains("the classes are \"a\", \"b\", \"c\""),
            "{e}"
        );
    }
}
