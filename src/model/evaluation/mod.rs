//! How well a model classifies labelled rows: the confusion counts of true
//! against predicted classes, and the figures made of them (accuracy; the
//! precision, recall and F1 of the +1 class, or of every class and their
//! macro means for a one-vs-rest model), gathered in one record,
//! [`Evaluation`]: its JSON is `eval --json`'s, its text form ([`text`])
//! what `eval` prints. The true classes come from [`true_classes`], the
//! predicted ones from [`Model::predict`].

pub mod text;

use std::collections::BTreeMap;
use std::path::Path;

use serde::Serialize;

use crate::data::labels::LISTED;
use crate::data::{Format, RawData};
use crate::error::{Error, Result};
use crate::float::{Precision, Real};
use crate::model::Model;
use crate::text::{Quoted, count};
use crate::train::cv::FoldConfusion;

/// Models with at most this many classes get the full confusion matrix;
/// beyond, a matrix of K x K cells (64 million at 8,000 classes) is neither
/// readable nor affordable, so eval keeps only the cells that are not zero
/// (at most one per row evaluated) and shows the largest.
pub const MATRIX_MAX_CLASSES: usize = 20;

/// The confusion matrix, binary and one-vs-rest alike.
#[derive(Serialize, Debug, Clone, PartialEq)]
pub struct Confusion {
    /// The class texts in matrix order: a binary model's -1 class then its
    /// +1 class; a one-vs-rest model's classes in its order.
    pub labels: Vec<String>,
    /// `matrix[t][p]`: rows whose true class is `labels[t]` and predicted
    /// class is `labels[p]`.
    pub matrix: Vec<Vec<u64>>,
}

/// One non-zero cell of a confusion matrix too large to show whole.
#[derive(Serialize, Debug, Clone, PartialEq)]
pub struct ConfusionCell {
    #[serde(rename = "true")]
    pub truth: String,
    pub predicted: String,
    pub rows: u64,
}

/// A one-vs-rest model's confusion counts: the whole matrix up to
/// [`MATRIX_MAX_CLASSES`] classes, its non-zero cells beyond.
#[derive(Serialize, Debug, Clone, PartialEq)]
#[serde(untagged)]
pub enum OvrConfusion {
    Matrix(Confusion),
    Cells {
        /// The model's number of classes (the matrix's side).
        classes: usize,
        /// Every cell that is not zero, by true then predicted class in the
        /// model's order.
        cells: Vec<ConfusionCell>,
    },
}

impl OvrConfusion {
    /// A cross-validation fold's confusion counts as `eval --json` writes
    /// them: the whole matrix up to [`MATRIX_MAX_CLASSES`] classes, its
    /// non-zero cells beyond (a matrix of 8,000 classes would be 64 million
    /// numbers a fold). `labels` are the classes in the fold's order.
    pub fn of_fold(c: &FoldConfusion, labels: &[String]) -> Self {
        if c.classes <= MATRIX_MAX_CLASSES {
            return OvrConfusion::Matrix(Confusion {
                labels: labels.to_vec(),
                matrix: c.matrix(),
            });
        }
        OvrConfusion::Cells {
            classes: c.classes,
            cells: c
                .cells
                .iter()
                .map(|&(t, p, rows)| ConfusionCell {
                    truth: labels[t].clone(),
                    predicted: labels[p].clone(),
                    rows,
                })
                .collect(),
        }
    }
}

/// Precision, recall and F1 of the +1 class; `None` where undefined (0/0).
#[derive(Serialize, Debug, Clone, PartialEq)]
pub struct ClassScores {
    pub label: String,
    pub precision: Option<f64>,
    pub recall: Option<f64>,
    pub f1: Option<f64>,
}

/// Everything `eval` reports.
#[derive(Serialize, Debug, Clone, PartialEq)]
pub struct EvalReport {
    pub model: String,
    pub data: String,
    pub format: Format,
    /// The arithmetic precision of the model (and of the scores).
    pub precision: Precision,
    pub rows: usize,
    pub features: usize,
    pub positive_label: String,
    pub negative_label: String,
    pub correct: u64,
    pub accuracy: f64,
    pub confusion: Confusion,
    pub true_positives: u64,
    pub false_positives: u64,
    pub false_negatives: u64,
    pub true_negatives: u64,
    pub positive_class: ClassScores,
}

/// One class's scores in a one-vs-rest evaluation.
#[derive(Serialize, Debug, Clone, PartialEq)]
pub struct OvrClassScores {
    pub label: String,
    /// Rows truly of this class.
    pub support: u64,
    pub precision: Option<f64>,
    pub recall: Option<f64>,
    pub f1: Option<f64>,
}

/// Everything `eval` reports for a one-vs-rest model.
#[derive(Serialize, Debug, Clone, PartialEq)]
pub struct OvrEvalReport {
    pub model: String,
    pub data: String,
    pub format: Format,
    pub precision: Precision,
    pub rows: usize,
    pub features: usize,
    pub correct: u64,
    pub accuracy: f64,
    pub confusion: OvrConfusion,
    /// Every class of the model up to [`MATRIX_MAX_CLASSES`]; beyond, the
    /// classes that occur in the data or the predictions (the others have
    /// no defined figure), in the model's order.
    pub classes: Vec<OvrClassScores>,
    /// Unweighted means over the classes where the score is defined.
    pub macro_precision: Option<f64>,
    pub macro_recall: Option<f64>,
    pub macro_f1: Option<f64>,
}

/// Everything an evaluation reports: a binary model's report, with the +1
/// class's scores, or a one-vs-rest model's, with every class's. Its JSON
/// is the inner report's, unchanged.
#[derive(Serialize, Debug, Clone, PartialEq)]
#[serde(untagged)]
pub enum Evaluation {
    Binary(EvalReport),
    OneVsRest(OvrEvalReport),
}

impl Evaluation {
    /// `model`'s report on the rows `counts` counts: binary for one
    /// perceptron, one-vs-rest for several.
    pub fn of<F: Real>(what: Evaluated, model: &Model<F>, counts: &Counts) -> Self {
        if model.heads() == 1 {
            Evaluation::Binary(EvalReport::of(what, model, counts))
        } else {
            Evaluation::OneVsRest(OvrEvalReport::of(what, model, counts))
        }
    }

    /// The human-readable report, as `perceptron eval` prints it.
    pub fn render(&self) -> String {
        match self {
            Evaluation::Binary(r) => text::render(r),
            Evaluation::OneVsRest(r) => text::render_ovr(r),
        }
    }
}

/// Rows truly of a class, rows predicted as it, and rows both.
#[derive(Default, Clone, Copy)]
struct Tally {
    support: u64,
    predicted: u64,
    correct: u64,
}

/// What an evaluation names: the model and the data as a report shows
/// them, and the data's format and width.
pub struct Evaluated {
    pub model: String,
    pub data: String,
    pub format: Format,
    pub features: usize,
}

/// Rows of each (true, predicted) pair of classes, as indices into the
/// model's class names, for the pairs that occur: at most one per row,
/// whatever the number of classes.
pub struct Counts {
    rows: usize,
    cells: BTreeMap<(usize, usize), u64>,
}

impl Counts {
    /// Row i's true class is `truth[class_ids[i]]` (see [`true_classes`])
    /// and its predicted class `predicted[i]`.
    pub fn of(truth: &[usize], class_ids: &[u32], predicted: &[usize]) -> Self {
        let mut cells = BTreeMap::new();
        for (i, &c) in class_ids.iter().enumerate() {
            *cells.entry((truth[c as usize], predicted[i])).or_insert(0) += 1;
        }
        Counts {
            rows: class_ids.len(),
            cells,
        }
    }

    fn cell(&self, t: usize, p: usize) -> u64 {
        self.cells.get(&(t, p)).copied().unwrap_or(0)
    }
}

/// The model's class (an index into its class names) of every class id of
/// `raw`, or an error naming the first label value the model does not know.
pub fn true_classes<F: Real>(
    model: &Model<F>,
    model_path: &Path,
    raw: &RawData<F>,
    path: &Path,
) -> Result<Vec<usize>> {
    let classes = raw.table.classes();
    let mut map = Vec::with_capacity(classes.len());
    let mut unknown = Vec::new();
    for (c, class) in classes.iter().enumerate() {
        match model.class_of_label(&class.text) {
            Some(k) => map.push(k),
            None => {
                map.push(0);
                unknown.push(c);
            }
        }
    }
    let Some(&first) = unknown.first() else {
        return Ok(map);
    };
    let class = &classes[first];
    let (known, others) = match model.labels() {
        Some(labels) => {
            let known = format!(
                "{} (+1) and {} (-1)",
                Quoted(&labels.positive),
                Quoted(labels.negative_text())
            );
            // A wrong label column can give thousands: list a few.
            let others = if unknown.len() > 1 {
                let rest: Vec<String> = unknown[1..]
                    .iter()
                    .take(LISTED)
                    .map(|&c| Quoted(&classes[c].text).to_string())
                    .collect();
                let more = unknown.len() - 1 - rest.len();
                format!(
                    "; other unknown labels: {}{}",
                    rest.join(", "),
                    if more > 0 {
                        format!(", and {more} more")
                    } else {
                        String::new()
                    }
                )
            } else {
                String::new()
            };
            (known, others)
        }
        None => (
            model
                .class_names()
                .iter()
                .map(|c| Quoted(c).to_string())
                .collect::<Vec<_>>()
                .join(", "),
            String::new(),
        ),
    };
    let message = format!(
        "label {} ({}) is not a class of the model {}, which knows {known}{others}",
        Quoted(&class.text),
        count(class.count, "row"),
        model_path.display()
    );
    Err(if class.first_line > 0 {
        Error::parse(path, class.first_line, None, message)
    } else {
        Error::data(path, message)
    })
}

fn ratio(num: u64, den: u64) -> Option<f64> {
    (den > 0).then(|| num as f64 / den as f64)
}

impl EvalReport {
    /// A binary model's scores on the rows `counts` counts.
    pub fn of<F: Real>(what: Evaluated, model: &Model<F>, counts: &Counts) -> Self {
        // [true][predicted], index 0 = -1, 1 = +1.
        let m = [
            [counts.cell(0, 0), counts.cell(0, 1)],
            [counts.cell(1, 0), counts.cell(1, 1)],
        ];
        let rows = counts.rows;
        let (tn, fp, fn_, tp) = (m[0][0], m[0][1], m[1][0], m[1][1]);
        let precision = ratio(tp, tp + fp);
        let recall = ratio(tp, tp + fn_);
        let f1 = ratio(2 * tp, 2 * tp + fp + fn_);
        let names = model.class_names();
        let (negative, positive) = (names[0].to_owned(), names[1].to_owned());
        EvalReport {
            model: what.model,
            data: what.data,
            format: what.format,
            precision: F::PRECISION,
            rows,
            features: what.features,
            positive_label: positive.clone(),
            negative_label: negative.clone(),
            correct: tp + tn,
            accuracy: (tp + tn) as f64 / rows as f64,
            confusion: Confusion {
                labels: vec![negative, positive.clone()],
                matrix: m.iter().map(|r| r.to_vec()).collect(),
            },
            true_positives: tp,
            false_positives: fp,
            false_negatives: fn_,
            true_negatives: tn,
            positive_class: ClassScores {
                label: positive,
                precision,
                recall,
                f1,
            },
        }
    }
}

impl OvrEvalReport {
    /// A one-vs-rest model's scores on the rows `counts` counts (a row's
    /// predicted class is the highest-scoring one, as in `predict`).
    pub fn of<F: Real>(what: Evaluated, model: &Model<F>, counts: &Counts) -> Self {
        let Counts { rows, cells } = counts;
        let rows = *rows;
        let names = model.class_names();
        let k = names.len();
        let whole = k <= MATRIX_MAX_CLASSES;
        // Per class, from the non-zero cells alone: no K-long table beyond the
        // matrix's size.
        let mut tallies: BTreeMap<usize, Tally> = BTreeMap::new();
        if whole {
            tallies.extend((0..k).map(|c| (c, Tally::default())));
        }
        for (&(t, p), &n) in cells {
            tallies.entry(t).or_default().support += n;
            tallies.entry(p).or_default().predicted += n;
            if t == p {
                tallies.entry(t).or_default().correct += n;
            }
        }
        let correct: u64 = tallies.values().map(|t| t.correct).sum();
        let classes: Vec<OvrClassScores> = tallies
            .iter()
            .map(|(&c, t)| OvrClassScores {
                label: names[c].to_owned(),
                support: t.support,
                precision: ratio(t.correct, t.predicted),
                recall: ratio(t.correct, t.support),
                f1: ratio(2 * t.correct, t.predicted + t.support),
            })
            .collect();
        let mean = |f: fn(&OvrClassScores) -> Option<f64>| {
            let v: Vec<f64> = classes.iter().filter_map(f).collect();
            (!v.is_empty()).then(|| v.iter().sum::<f64>() / v.len() as f64)
        };
        let confusion = if whole {
            let mut matrix = vec![vec![0u64; k]; k];
            for (&(t, p), &n) in cells {
                matrix[t][p] = n;
            }
            OvrConfusion::Matrix(Confusion {
                labels: names.iter().map(|c| c.to_string()).collect(),
                matrix,
            })
        } else {
            OvrConfusion::Cells {
                classes: k,
                cells: cells
                    .iter()
                    .map(|(&(t, p), &n)| ConfusionCell {
                        truth: names[t].to_owned(),
                        predicted: names[p].to_owned(),
                        rows: n,
                    })
                    .collect(),
            }
        };
        OvrEvalReport {
            model: what.model,
            data: what.data,
            format: what.format,
            precision: F::PRECISION,
            rows,
            features: what.features,
            correct,
            accuracy: if rows == 0 {
                0.0
            } else {
                correct as f64 / rows as f64
            },
            confusion,
            macro_precision: mean(|c| c.precision),
            macro_recall: mean(|c| c.recall),
            macro_f1: mean(|c| c.f1),
            classes,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn labels(k: usize) -> Vec<String> {
        (0..k).map(|c| format!("c{c}")).collect()
    }

    #[test]
    fn a_folds_counts_are_a_matrix_up_to_the_limit_and_cells_beyond() {
        let small = FoldConfusion {
            classes: 2,
            cells: vec![(0, 0, 3), (1, 0, 1)],
        };
        assert_eq!(
            OvrConfusion::of_fold(&small, &labels(2)),
            OvrConfusion::Matrix(Confusion {
                labels: labels(2),
                matrix: vec![vec![3, 0], vec![1, 0]],
            })
        );
        let k = MATRIX_MAX_CLASSES + 1;
        let large = FoldConfusion {
            classes: k,
            cells: vec![(k - 1, 0, 2)],
        };
        assert_eq!(
            OvrConfusion::of_fold(&large, &labels(k)),
            OvrConfusion::Cells {
                classes: k,
                cells: vec![ConfusionCell {
                    truth: format!("c{}", k - 1),
                    predicted: "c0".into(),
                    rows: 2,
                }],
            }
        );
    }
}
