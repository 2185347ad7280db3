//! Checkpoints: the exact training state, saved atomically, so an
//! interrupted run resumes to the bit-identical model.
//!
//! A checkpoint holds the weights (exact values, as in model files), the
//! epoch and row reached, the mistake counters, the options that shape the
//! result (precision, bias, epoch cap, shuffle seed, label mapping) and a
//! fingerprint of the data. Resuming refuses different data or options and
//! says what differs. It also records how the run was set up (the model
//! path, the `--init` file, the checkpoint interval), so that a resumed run
//! given only `--resume FILE` continues as the interrupted one would have.

use std::path::{Path, PathBuf};

use serde::{Deserialize, Serialize};

use crate::data::LabelMap;
use crate::error::{Error, Result};
use crate::float::{Precision, Real};
use crate::train::{Margin, Pocket, State, Variant};

pub const FORMAT_NAME: &str = "perceptron-checkpoint";
pub const FORMAT_VERSION: u32 = 1;

/// What must match between the interrupted run and the resumed one.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct RunIdentity {
    pub precision: Precision,
    pub bias: bool,
    pub max_epochs: usize,
    /// The shuffle seed (None: file order).
    pub seed: Option<u64>,
    pub labels: LabelMap,
    pub rows: usize,
    pub features: usize,
    /// `data::fingerprint::fingerprint` of the data in file order.
    pub fingerprint: String,
    pub variant: Variant,
    /// The `--margin` threshold as given (None: the classic rule).
    pub margin: Option<Margin>,
    /// Fingerprint of the `--init` weights (None: started from zero).
    pub init: Option<String>,
    /// One-vs-rest training (one head per class).
    #[serde(default)]
    pub multiclass: bool,
    /// Perceptrons trained together (the classes in one-vs-rest, else 1).
    #[serde(default = "one")]
    pub heads: usize,
    /// How the run was set up beyond what must match: adopted by a resumed
    /// run that does not say otherwise, never compared. Absent from older
    /// checkpoints, and ignored by older builds.
    #[serde(default, skip_serializing_if = "RunSettings::is_empty")]
    pub settings: RunSettings,
}

fn one() -> usize {
    1
}

/// Paths and intervals of a run, as given (relative paths are relative to
/// the directory the run was started in).
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct RunSettings {
    /// `-o`, when given.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub output: Option<PathBuf>,
    /// The `--init` model's path (its content is `RunIdentity::init`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub init: Option<PathBuf>,
    /// `--checkpoint-every`, when the run checkpointed periodically.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub checkpoint_every: Option<usize>,
}

impl RunSettings {
    fn is_empty(&self) -> bool {
        *self == RunSettings::default()
    }
}

impl RunIdentity {
    /// Explains every difference from `other` (the run trying to resume).
    pub fn differences(&self, other: &RunIdentity) -> Vec<String> {
        let on = |b: bool| if b { "on" } else { "off" };
        let mut d = Vec::new();
        if self.fingerprint != other.fingerprint
            || self.rows != other.rows
            || self.features != other.features
        {
            d.push(format!(
                "the data differ: the checkpoint was made on {} rows x {} features with fingerprint {}, this data has {} rows x {} features with fingerprint {}",
                self.rows, self.features, self.fingerprint, other.rows, other.features, other.fingerprint
            ));
        }
        if self.precision != other.precision {
            d.push(format!(
                "--precision was {}, now {}",
                self.precision, other.precision
            ));
        }
        if self.bias != other.bias {
            let says = |b: bool| if b { "with the bias" } else { "--no-bias" };
            d.push(format!(
                "the run was {}, now {}",
                says(self.bias),
                says(other.bias)
            ));
        }
        if self.max_epochs != other.max_epochs {
            d.push(format!(
                "--max-epochs was {}, now {}",
                self.max_epochs, other.max_epochs
            ));
        }
        if self.seed != other.seed {
            let says = |s: Option<u64>| {
                s.map_or("file order".to_owned(), |s| format!("--shuffle --seed {s}"))
            };
            d.push(format!(
                "the row order was {}, now {}",
                says(self.seed),
                says(other.seed)
            ));
        }
        if self.variant != other.variant {
            d.push(format!(
                "the variant was {}, now {}",
                self.variant.name(),
                other.variant.name()
            ));
        }
        if self.margin != other.margin {
            let says = |m: &Option<Margin>| {
                m.as_ref()
                    .map_or("none".to_owned(), |m| m.text().to_owned())
            };
            d.push(format!(
                "--margin was {}, now {}",
                says(&self.margin),
                says(&other.margin)
            ));
        }
        if self.multiclass != other.multiclass {
            d.push(format!(
                "--multiclass was {}, now {}",
                on(self.multiclass),
                on(other.multiclass)
            ));
        }
        match (&self.init, &other.init) {
            (Some(_), None) => d.push(
                "the run started from an --init model, now from zero (pass the same --init MODEL)"
                    .to_owned(),
            ),
            (None, Some(_)) => d.push("the run started from zero, now from --init".to_owned()),
            (a, b) if a != b => d.push("the --init model differs".to_owned()),
            _ => {}
        }
        if self.labels != other.labels {
            d.push(format!(
                "the labels map differently: +1 was \"{}\", now \"{}\" (check --positive)",
                self.labels.positive, other.labels.positive
            ));
        }
        d
    }
}

#[derive(Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
struct CheckpointFile {
    format: String,
    format_version: u32,
    created_by: String,
    identity: RunIdentity,
    epoch: usize,
    position: usize,
    mistakes_per_epoch: Vec<u64>,
    mistakes_in_epoch: u64,
    weights: Vec<f64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    average: Option<Vec<f64>>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pocket: Option<PocketFile>,
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    head_mistakes_in_epoch: Vec<u64>,
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    head_mistakes_per_epoch: Vec<Vec<u64>>,
}

/// The pocket state in a checkpoint.
#[derive(Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
struct PocketFile {
    weights: Vec<f64>,
    mistakes: u64,
    run: u64,
    epoch: usize,
    current_run: u64,
    current_evaluated: bool,
    evaluations: u64,
}

/// Writes `state` atomically.
pub fn save<F: Real>(path: &Path, identity: &RunIdentity, state: &State<F>) -> Result<()> {
    let file = CheckpointFile {
        format: FORMAT_NAME.into(),
        format_version: FORMAT_VERSION,
        created_by: concat!("perceptron ", env!("CARGO_PKG_VERSION")).into(),
        identity: identity.clone(),
        epoch: state.epoch,
        position: state.position,
        mistakes_per_epoch: state.mistakes_per_epoch.clone(),
        mistakes_in_epoch: state.mistakes_in_epoch,
        weights: widen(&state.weights),
        average: state.average.as_deref().map(widen),
        pocket: state.pocket.as_ref().map(|p| PocketFile {
            weights: widen(&p.weights),
            mistakes: p.mistakes,
            run: p.run,
            epoch: p.epoch,
            current_run: p.current_run,
            current_evaluated: p.current_evaluated,
            evaluations: p.evaluations,
        }),
        head_mistakes_in_epoch: state.head_mistakes_in_epoch.clone(),
        head_mistakes_per_epoch: state.head_mistakes_per_epoch.clone(),
    };
    crate::output::write_atomic(path, |w| {
        serde_json::to_writer(&mut *w, &file).map_err(std::io::Error::other)?;
        w.write_all(b"\n")
    })
}

/// Reads a checkpoint and checks it belongs to the run described by
/// `expected`; returns the state to resume from.
pub fn load<F: Real>(path: &Path, expected: &RunIdentity) -> Result<State<F>> {
    parse(path, &read(path)?, expected)
}

/// A checkpoint's text, read once by a resumed run for both
/// [`identity_of`] and [`parse`].
pub fn read(path: &Path) -> Result<String> {
    std::fs::read_to_string(path).map_err(|e| Error::io(path, "cannot read checkpoint", e))
}

/// The run a checkpoint belongs to, read before the data so that a resumed
/// run can adopt its options; the text is checked as [`parse`] checks it.
pub fn identity_of(path: &Path, text: &str) -> Result<RunIdentity> {
    let mut value = checked_json(path, text)?;
    let identity = value
        .get_mut("identity")
        .map(serde_json::Value::take)
        .ok_or_else(|| Error::model(path, "is corrupt: missing field `identity`"))?;
    serde_json::from_value(identity).map_err(|e| Error::model(path, format!("is corrupt: {e}")))
}

/// The checkpoint's JSON, once its format and version are known good.
fn checked_json(path: &Path, text: &str) -> Result<serde_json::Value> {
    let value: serde_json::Value = serde_json::from_str(text)
        .map_err(|e| Error::model(path, format!("is not a checkpoint (not valid JSON: {e})")))?;
    if value.get("format").and_then(|v| v.as_str()) != Some(FORMAT_NAME) {
        return Err(Error::model(
            path,
            format!("is not a perceptron checkpoint (no \"format\": \"{FORMAT_NAME}\")"),
        ));
    }
    match value.get("format_version").and_then(|v| v.as_u64()) {
        Some(v) if v == FORMAT_VERSION as u64 => {}
        Some(v) if v > FORMAT_VERSION as u64 => {
            return Err(Error::model(
                path,
                format!(
                    "was written by a newer perceptron (checkpoint format {v}; this build reads {FORMAT_VERSION})"
                ),
            ));
        }
        _ => {
            return Err(Error::model(
                path,
                "has a missing or invalid \"format_version\"",
            ));
        }
    }
    Ok(value)
}

/// [`load`] for a checkpoint's text already in memory (`path` is for
/// messages).
pub fn parse<F: Real>(path: &Path, text: &str, expected: &RunIdentity) -> Result<State<F>> {
    let value = checked_json(path, text)?;
    let file: CheckpointFile = serde_json::from_value(value)
        .map_err(|e| Error::model(path, format!("is corrupt: {e}")))?;
    let diffs = file.identity.differences(expected);
    if !diffs.is_empty() {
        return Err(Error::Usage(format!(
            "{} cannot be resumed by this run: {}. Resume with the same data and options as the interrupted run.",
            path.display(),
            diffs.join("; ")
        )));
    }
    let dim = (expected.features + expected.bias as usize) * expected.heads;
    if file.weights.len() != dim {
        return Err(Error::model(
            path,
            format!(
                "is corrupt: {} weights for {dim} needed",
                file.weights.len()
            ),
        ));
    }
    let weights = narrow::<F>(path, &file.weights)?;
    let average = file
        .average
        .as_deref()
        .map(|u| narrow::<F>(path, u))
        .transpose()?;
    let pocket = match file.pocket {
        None => None,
        Some(p) => Some(Pocket {
            weights: narrow::<F>(path, &p.weights)?,
            mistakes: p.mistakes,
            run: p.run,
            epoch: p.epoch,
            current_run: p.current_run,
            current_evaluated: p.current_evaluated,
            evaluations: p.evaluations,
        }),
    };
    let lengths_ok = average.as_ref().is_none_or(|u| u.len() == dim)
        && pocket.as_ref().is_none_or(|p| p.weights.len() == dim);
    if !lengths_ok {
        return Err(Error::model(
            path,
            "is corrupt: the variant's vectors have the wrong length",
        ));
    }
    let done = file.mistakes_per_epoch.len();
    if file.epoch != done || file.position > expected.rows || done > expected.max_epochs {
        return Err(Error::model(
            path,
            "is corrupt: its epoch, row and counters do not agree",
        ));
    }
    Ok(State {
        weights,
        epoch: file.epoch,
        position: file.position,
        mistakes_per_epoch: file.mistakes_per_epoch,
        mistakes_in_epoch: file.mistakes_in_epoch,
        average,
        pocket,
        head_mistakes_in_epoch: file.head_mistakes_in_epoch,
        head_mistakes_per_epoch: file.head_mistakes_per_epoch,
    })
}

fn widen<F: Real>(v: &[F]) -> Vec<f64> {
    v.iter().map(|x| x.to_f64()).collect()
}

/// Reads exact values back, refusing any that are not finite values of `F`.
fn narrow<F: Real>(path: &Path, v: &[f64]) -> Result<Vec<F>> {
    v.iter()
        .map(|&v| crate::model::exact_value::<F>(path, "a weight", v))
        .collect()
}
