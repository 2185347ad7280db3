//! Checkpoints: the exact training state, saved atomically, so an
//! interrupted run resumes to the bit-identical model.
//!
//! A checkpoint holds the weights (exact values, as in model files), the
//! epoch and row reached, the mistake counters, the options that shape the
//! result (precision, bias, epoch cap, shuffle seed, label mapping) and a
//! fingerprint of the data. Resuming refuses different data or options and
//! says what differs. It also records how the run was set up (the model
//! path, the initial model's file, the checkpoint interval), so that a resumed run
//! given only `--resume FILE` continues as the interrupted one would have.

use std::path::Path;

use serde::{Deserialize, Serialize};

use crate::error::{Error, Result};
use crate::float::Real;
use crate::train::description::RunDescription;
use crate::train::early_stop::EarlyState;
use crate::train::{Pocket, State, Variant};

pub const FORMAT_NAME: &str = "perceptron-checkpoint";
pub const FORMAT_VERSION: u32 = 1;

#[derive(Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
struct CheckpointFile {
    format: String,
    format_version: u32,
    created_by: String,
    identity: RunDescription,
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
    #[serde(default, skip_serializing_if = "Option::is_none")]
    early_stop: Option<EarlyFile>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    mix: Option<MixRecord>,
}

/// Early stopping's state in a checkpoint.
#[derive(Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
struct EarlyFile {
    scores: Vec<f64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    best_epoch: Option<usize>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    best_weights: Option<Vec<f64>>,
    /// The mean-loss rule's loss so far in the epoch in progress.
    #[serde(default, skip_serializing_if = "is_zero")]
    loss_in_epoch: f64,
}

fn is_zero(v: &f64) -> bool {
    *v == 0.0
}

/// A run in mix mode (`train --distributed mix`): it resumes only as the
/// same mix (ranks and mixing), and keeps each rank's mistakes per epoch
/// for the report's bound. Absent from every other checkpoint: exact and
/// single-process runs resume each other.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct MixRecord {
    pub ranks: usize,
    /// `uniform` or `errors`.
    pub mixing: String,
    /// Per completed epoch, each rank's mistakes.
    pub rank_mistakes: Vec<Vec<u64>>,
}

impl MixRecord {
    fn describe(mix: Option<&MixRecord>) -> String {
        match mix {
            Some(m) => format!("mix ({}) on {} ranks", m.mixing, m.ranks),
            None => "one process or exact".to_owned(),
        }
    }
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
pub fn save<F: Real>(path: &Path, identity: &RunDescription, state: &State<F>) -> Result<()> {
    save_mix(path, identity, state, None)
}

/// [`save`] for a run in mix mode, with its record.
pub fn save_mix<F: Real>(
    path: &Path,
    identity: &RunDescription,
    state: &State<F>,
    mix: Option<&MixRecord>,
) -> Result<()> {
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
        early_stop: state.early.as_ref().map(|e| EarlyFile {
            scores: e.scores.clone(),
            best_epoch: e.best.as_ref().map(|(epoch, _)| *epoch),
            best_weights: e.best.as_ref().map(|(_, w)| widen(w)),
            loss_in_epoch: e.loss_in_epoch,
        }),
        mix: mix.cloned(),
    };
    crate::output::write_atomic(path, |w| {
        serde_json::to_writer(&mut *w, &file).map_err(std::io::Error::other)?;
        w.write_all(b"\n")
    })
}

/// Reads a checkpoint and checks it belongs to the run described by
/// `expected`; returns the state to resume from.
pub fn load<F: Real>(path: &Path, expected: &RunDescription) -> Result<State<F>> {
    parse(path, &read(path)?, expected)
}

/// A checkpoint's text, read once by a resumed run for both
/// [`identity_of`] and [`parse`].
pub fn read(path: &Path) -> Result<String> {
    let bytes = crate::saved::read_capped(path, crate::saved::Kind::Checkpoint)?;
    String::from_utf8(bytes)
        .map_err(|e| Error::model(path, format!("cannot be read as UTF-8 text: {e}")))
}

/// The run a checkpoint belongs to, read before the data so that a resumed
/// run can adopt its options; the text is checked as [`parse`] checks it.
pub fn identity_of(path: &Path, text: &str) -> Result<RunDescription> {
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
pub fn parse<F: Real>(path: &Path, text: &str, expected: &RunDescription) -> Result<State<F>> {
    parse_mix(path, text, expected, None).map(|(s, _)| s)
}

/// [`parse`] for a run that is in mix mode with `ranks` ranks and
/// `mixing` (`mix`), or not (`None`): the checkpoint must be of the same
/// kind. Returns the state and the checkpoint's mix record.
pub fn parse_mix<F: Real>(
    path: &Path,
    text: &str,
    expected: &RunDescription,
    mix: Option<(usize, &str)>,
) -> Result<(State<F>, Option<MixRecord>)> {
    let value = checked_json(path, text)?;
    let file: CheckpointFile = serde_json::from_value(value)
        .map_err(|e| Error::model(path, format!("is corrupt: {e}")))?;
    check_same_run(path, &file, expected, mix)?;
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
    check_counters(path, &file, expected)?;
    let weights = narrow::<F>(path, &file.weights)?;
    let average = file
        .average
        .as_deref()
        .map(|u| narrow::<F>(path, u))
        .transpose()?;
    let pocket = file.pocket.map(|p| narrow_pocket(path, p)).transpose()?;
    let early = file.early_stop.map(|e| narrow_early(path, e)).transpose()?;
    let state = State {
        weights,
        epoch: file.epoch,
        position: file.position,
        mistakes_per_epoch: file.mistakes_per_epoch,
        mistakes_in_epoch: file.mistakes_in_epoch,
        average,
        pocket,
        head_mistakes_in_epoch: file.head_mistakes_in_epoch,
        head_mistakes_per_epoch: file.head_mistakes_per_epoch,
        early,
    };
    check_state(path, &state, expected, dim)?;
    Ok((state, file.mix))
}

/// The checkpoint belongs to this run: same identity (but for an epoch cap
/// it has not passed) and the same kind of run (mix or not), else a resume
/// error listing every difference.
fn check_same_run(
    path: &Path,
    file: &CheckpointFile,
    expected: &RunDescription,
    mix: Option<(usize, &str)>,
) -> Result<()> {
    let mut differences = file.identity.differences(expected);
    // The cap changes nothing before it is reached: the run resumes under
    // any cap it has not passed (a larger one extends it, the commonest
    // reason to resume).
    let reached = file.mistakes_per_epoch.len() + (file.position > 0) as usize;
    differences.retain(
        |d| !matches!(d, crate::error::Difference::MaxEpochs { now, .. } if *now >= reached),
    );
    let was = file.mix.as_ref().map(|m| (m.ranks, m.mixing.as_str()));
    if was != mix {
        let now = mix.map(|(ranks, mixing)| MixRecord {
            ranks,
            mixing: mixing.to_owned(),
            rank_mistakes: Vec::new(),
        });
        differences.push(crate::error::Difference::Distributed {
            was: MixRecord::describe(file.mix.as_ref()),
            now: MixRecord::describe(now.as_ref()),
        });
    }
    if !differences.is_empty() {
        return Err(Error::Resume {
            path: path.to_path_buf(),
            differences,
        });
    }
    Ok(())
}

/// The pocket state in the run's precision (its weights narrowed exactly).
fn narrow_pocket<F: Real>(path: &Path, p: PocketFile) -> Result<Pocket<F>> {
    Ok(Pocket {
        weights: narrow::<F>(path, &p.weights)?,
        mistakes: p.mistakes,
        run: p.run,
        epoch: p.epoch,
        current_run: p.current_run,
        current_evaluated: p.current_evaluated,
        evaluations: p.evaluations,
    })
}

/// Early stopping's state in the run's precision; its best epoch and kept
/// weights come together or not at all.
fn narrow_early<F: Real>(path: &Path, e: EarlyFile) -> Result<EarlyState<F>> {
    let best = match (e.best_epoch, e.best_weights) {
        (Some(epoch), Some(w)) if epoch < e.scores.len() => Some((epoch, narrow::<F>(path, &w)?)),
        (None, None) => None,
        _ => {
            return Err(Error::model(
                path,
                "is corrupt: its early-stopping epoch and weights do not agree",
            ));
        }
    };
    Ok(EarlyState {
        scores: e.scores,
        best,
        loss_in_epoch: e.loss_in_epoch,
    })
}

/// The restored state is one the run could have written: its vectors of
/// the run's length, its epoch, row and counters in agreement, and an
/// average exactly when the run is averaged.
fn check_state<F: Real>(
    path: &Path,
    state: &State<F>,
    expected: &RunDescription,
    dim: usize,
) -> Result<()> {
    let average = &state.average;
    let lengths_ok = average.as_ref().is_none_or(|u| u.len() == dim)
        && state.pocket.as_ref().is_none_or(|p| p.weights.len() == dim)
        && state
            .early
            .as_ref()
            .is_none_or(|e| e.best.as_ref().is_none_or(|(_, w)| w.len() == dim));
    if !lengths_ok {
        return Err(Error::model(
            path,
            "is corrupt: the variant's vectors have the wrong length",
        ));
    }
    let done = state.mistakes_per_epoch.len();
    let scored = state.early.as_ref().is_none_or(|e| e.scores.len() == done);
    // A checkpoint is written between rows: never after the last one (the
    // epoch would have ended, and its position gone back to 0).
    let inside = state.position < expected.rows || state.position == 0;
    if !scored || state.epoch != done || !inside || done > expected.max_epochs {
        return Err(Error::model(
            path,
            "is corrupt: its epoch, row and counters do not agree",
        ));
    }
    if (expected.variant == Variant::Averaged) != average.is_some() {
        return Err(Error::model(
            path,
            format!(
                "is corrupt: the run is {} but the checkpoint {} an average of the weights",
                expected.variant.name(),
                if average.is_some() { "has" } else { "lacks" }
            ),
        ));
    }
    Ok(())
}

/// The counters and records a checkpoint holds, against what the run can
/// have made on its rows: an epoch makes at most one mistake per row and
/// perceptron, so far into an epoch at most one per row visited; only the
/// last epoch done can have made none (the loop stops after such an epoch,
/// unless scikit-learn's schedule runs it); the pocket variant holds its
/// pocket from the first row on. Gives the field at fault.
fn check_against_rows(
    file: &CheckpointFile,
    expected: &RunDescription,
) -> std::result::Result<(), String> {
    let per_epoch = (expected.rows as u64).saturating_mul(expected.heads as u64);
    if file.identity.heads != expected.heads {
        return Err(format!(
            "its identity.heads is {}, but the run trains {}",
            file.identity.heads, expected.heads
        ));
    }
    if let Some((e, &m)) = file
        .mistakes_per_epoch
        .iter()
        .enumerate()
        .find(|(_, m)| **m > per_epoch)
    {
        return Err(format!(
            "its mistakes_per_epoch[{e}] is {m}, more than the {per_epoch} mistakes an epoch \
             of {} rows and {} can make",
            expected.rows,
            crate::text::count(expected.heads, "perceptron")
        ));
    }
    let so_far = (file.position as u64).saturating_mul(expected.heads as u64);
    if file.mistakes_in_epoch > so_far {
        return Err(format!(
            "its mistakes_in_epoch is {}, more than the {so_far} mistakes possible before \
             row {} (its position)",
            file.mistakes_in_epoch, file.position
        ));
    }
    let converges = expected.shuffle_every_epoch.is_none();
    let done = file.mistakes_per_epoch.len();
    if converges
        && let Some(e) = file.mistakes_per_epoch[..done.saturating_sub(1)]
            .iter()
            .position(|&m| m == 0)
    {
        return Err(format!(
            "its mistakes_per_epoch[{e}] is 0, but training stops after an epoch without \
             mistakes, and {} more followed",
            crate::text::count(done - 1 - e, "epoch")
        ));
    }
    let started = done > 0 || file.position > 0;
    if expected.variant == Variant::Pocket && started && file.pocket.is_none() {
        return Err("the run keeps a pocket, but its pocket is missing".into());
    }
    if expected.variant != Variant::Pocket && file.pocket.is_some() {
        return Err(format!(
            "it holds a pocket, but the run is {}",
            expected.variant.name()
        ));
    }
    Ok(())
}

/// The mistake counters agree with each other and with the run's heads:
/// one-vs-rest keeps one count per class for every epoch done (their sum
/// the epoch's count), a binary run none; no total overflows.
fn check_counters(path: &Path, file: &CheckpointFile, expected: &RunDescription) -> Result<()> {
    let heads = expected.heads;
    let corrupt = |what: &str| Error::model(path, format!("is corrupt: {what}"));
    let total = file
        .mistakes_per_epoch
        .iter()
        .try_fold(file.mistakes_in_epoch, |a, &m| a.checked_add(m));
    if total.is_none() {
        return Err(corrupt(
            "its mistakes per epoch add up to more than a 64-bit count holds",
        ));
    }
    check_against_rows(file, expected).map_err(|what| corrupt(&what))?;
    if heads > 1 {
        let per_epoch = file.head_mistakes_per_epoch.len() == file.mistakes_per_epoch.len()
            && file
                .head_mistakes_per_epoch
                .iter()
                .zip(&file.mistakes_per_epoch)
                .all(|(h, &m)| {
                    h.len() == heads && h.iter().try_fold(0u64, |a, &c| a.checked_add(c)) == Some(m)
                });
        let in_epoch = file.head_mistakes_in_epoch.is_empty()
            || (file.head_mistakes_in_epoch.len() == heads
                && file
                    .head_mistakes_in_epoch
                    .iter()
                    .try_fold(0u64, |a, &c| a.checked_add(c))
                    == Some(file.mistakes_in_epoch));
        if !per_epoch || !in_epoch {
            return Err(corrupt(&format!(
                "its per-class mistake counts do not match its {heads} classes and its \
                 mistakes per epoch"
            )));
        }
    } else if !file.head_mistakes_per_epoch.is_empty() || !file.head_mistakes_in_epoch.is_empty() {
        return Err(corrupt(
            "it holds per-class mistake counts, but the run trains one perceptron",
        ));
    }
    Ok(())
}

fn widen<F: Real>(v: &[F]) -> Vec<f64> {
    v.iter().map(|x| x.to_f64()).collect()
}

/// Reads exact values back, refusing any that are not finite values of `F`.
fn narrow<F: Real>(path: &Path, v: &[f64]) -> Result<Vec<F>> {
    v.iter()
        .map(|&v| crate::float::exact_value::<F>(path, "a weight", v))
        .collect()
}
