//! A labelled dataset ready for training or evaluation: the features, each
//! row's -1/+1 label and class, and per-row facts computed on first use.

use std::path::{Path, PathBuf};
use std::sync::{Arc, OnceLock};

use crate::error::{Error, Result};
use crate::float::Real;

use super::byte_rows::ByteRows;
use super::facts::RowFacts;
use super::labels::{self, ClassLabel, LabelMap};
use super::matrix::Features;
use super::options::Format;
use super::raw::RawData;

/// A labelled dataset ready for training or evaluation.
#[derive(Clone, Debug)]
pub struct Dataset<F> {
    pub features: Features<F>,
    /// -1 or +1 per row.
    pub labels: Vec<i8>,
    pub label_map: LabelMap,
    /// The distinct label values with their row counts.
    pub classes: Vec<ClassLabel>,
    /// Per row, its index in `classes` (for one-vs-rest multiclass
    /// training); empty for data built without class information.
    pub class_ids: Vec<u32>,
    /// Where the data came from, for messages and reports.
    pub source: PathBuf,
    pub format: Format,
    /// Per-row facts for engines, computed on first use (see [`Dataset::facts`]).
    pub facts: FactsCache,
}

/// [`RowFacts`] for the data with and without the bias, and the rows as
/// bytes where they are bytes, each computed at most once (and moved with
/// the rows into a permuted copy).
#[derive(Clone, Debug, Default)]
pub struct FactsCache {
    facts: [OnceLock<Arc<RowFacts>>; 2],
    bytes: OnceLock<Option<Arc<ByteRows>>>,
}

impl PartialEq for FactsCache {
    /// A cache never makes two datasets differ.
    fn eq(&self, _: &Self) -> bool {
        true
    }
}

impl<F: Real> Dataset<F> {
    pub fn rows(&self) -> usize {
        self.features.rows()
    }

    pub fn cols(&self) -> usize {
        self.features.cols()
    }

    /// Maps raw labels with the rules of [`labels::decide`].
    pub fn from_raw(raw: RawData<F>, source: &Path, positive: Option<&str>) -> Result<Self> {
        let (label_map, signs) =
            labels::decide(&raw.table, positive).map_err(|rule| Error::Labels {
                path: source.to_path_buf(),
                rule,
            })?;
        let labels = raw.class_ids.iter().map(|&c| signs[c as usize]).collect();
        Ok(Dataset {
            features: raw.features,
            labels,
            label_map,
            classes: raw.table.classes().to_vec(),
            class_ids: raw.class_ids,
            source: source.to_path_buf(),
            format: raw.format,
            facts: FactsCache::default(),
        })
    }

    /// Row norms, the L1 maximum and the host-only rows (with the bias
    /// feature when `bias`), computed in one parallel pass on first use.
    pub fn facts(&self, bias: bool) -> Arc<RowFacts> {
        self.facts.facts[bias as usize]
            .get_or_init(|| {
                // From the rows as bytes where they were made first: the
                // same facts, from an eighth of the memory.
                Arc::new(match self.built_byte_rows() {
                    Some(bytes) => RowFacts::of_bytes::<F>(&bytes, bias),
                    None => RowFacts::compute(&self.features, bias),
                })
            })
            .clone()
    }

    /// The rows one byte a value ([`ByteRows`]) when every value is a
    /// whole number from 0 to 255, checked and copied on first use; `None`
    /// otherwise (sparse data, or any other value). Called where the host's
    /// walk will read the rows ([`crate::train`]'s runs on the CPU), which
    /// [`Dataset::built_byte_rows`] then finds.
    pub fn byte_rows(&self) -> Option<Arc<ByteRows>> {
        self.facts
            .bytes
            .get_or_init(|| ByteRows::of(&self.features).map(Arc::new))
            .clone()
    }

    /// The rows as bytes if [`Dataset::byte_rows`] has made them: a reader
    /// that only may profit (a final tally, a walk on the host beside a
    /// device) never makes the copy itself.
    pub fn built_byte_rows(&self) -> Option<Arc<ByteRows>> {
        self.facts.bytes.get().cloned().flatten()
    }

    /// The radius D = max_i ||x~_i|| (with the bias feature when `bias`):
    /// the same bits as `info` reports ([`super::stats::radius_from`]), from
    /// the cached facts.
    pub fn radius(&self, bias: bool) -> f64 {
        super::stats::radius_from(self.facts(bias).largest_norm_sq, bias)
    }

    /// Head `head`'s label of row `row` when training `heads` perceptrons:
    /// the -1/+1 label with one head, +1 iff the class id is `head` otherwise.
    #[inline]
    pub fn label_for(&self, head: usize, heads: usize, row: usize) -> i8 {
        if heads == 1 {
            self.labels[row]
        } else if self.class_ids[row] as usize == head {
            1
        } else {
            -1
        }
    }

    /// Keeps every label value as its own class, for one-vs-rest training:
    /// `class_ids` indexes `classes`, which are in scikit-learn's order
    /// ([`LabelTable::sorted`](super::LabelTable::sorted): numbers by value,
    /// else text by bytes), and the -1/+1 `labels` stay empty.
    pub fn from_raw_classes(raw: RawData<F>, source: &Path) -> Result<Self> {
        let (classes, new_id) = raw.table.sorted();
        if classes.len() < 2 {
            return Err(Error::data(
                source,
                format!(
                    "one-vs-rest training needs at least two label values; found {}",
                    raw.table.describe()
                ),
            ));
        }
        Ok(Dataset {
            features: raw.features,
            labels: Vec::new(),
            label_map: LabelMap {
                positive: String::new(),
                negative: None,
            },
            classes,
            class_ids: raw.class_ids.iter().map(|&c| new_id[c as usize]).collect(),
            source: source.to_path_buf(),
            format: raw.format,
            facts: FactsCache::default(),
        })
    }

    /// The rows reordered so that new row `p` is old row `order[p]`.
    pub fn permuted(&self, order: &[usize]) -> Self {
        self.permuted_into(order, None)
    }

    /// [`Dataset::permuted`] into the buffers of `spare` (a dataset this
    /// one was permuted into before), with the row facts already computed
    /// moved along rather than computed again.
    pub fn permuted_into(&self, order: &[usize], spare: Option<Dataset<F>>) -> Self {
        let facts = FactsCache::default();
        for (cache, moved) in self.facts.facts.iter().zip(&facts.facts) {
            if let Some(f) = cache.get() {
                let _ = moved.set(Arc::new(f.permuted(order)));
            }
        }
        if let Some(bytes) = self.facts.bytes.get() {
            let _ = facts
                .bytes
                .set(bytes.as_ref().map(|b| Arc::new(b.permuted(order))));
        }
        Dataset {
            features: self
                .features
                .permuted_into(order, spare.map(|d| d.features)),
            labels: if self.labels.is_empty() {
                Vec::new()
            } else {
                order.iter().map(|&i| self.labels[i]).collect()
            },
            label_map: self.label_map.clone(),
            classes: self.classes.clone(),
            class_ids: if self.class_ids.is_empty() {
                Vec::new()
            } else {
                order.iter().map(|&i| self.class_ids[i]).collect()
            },
            source: self.source.clone(),
            format: self.format,
            facts,
        }
    }
}
