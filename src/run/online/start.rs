//! What an online run is asked to do, checked, and where it starts: w~ = 0,
//! or an `--init` model's weights and labels, refused when the run could
//! not continue from them exactly.

use std::path::{Path, PathBuf};

use super::labels::LabelRule;
use crate::data::stream::StreamSource;
use crate::data::{LabelMap, LoadOptions, MAX_FEATURE_INDEX};
use crate::error::{Error, Result};
use crate::float::{Precision, Real};
use crate::model::{self, AnyModel, Model};
use crate::online::Learner;
use crate::text::Quoted;
use crate::train::Margin;

/// The parameters of an online run (the command's flags, as values).
#[derive(Clone, Debug)]
pub struct OnlineParams {
    /// Learn a bias (`false`: `--no-bias`).
    pub bias: bool,
    /// τ of the update rule y·s <= τ (`--margin`; `None` is 0).
    pub margin: Option<Margin>,
    /// The label that is +1, every other one -1 (`--positive`).
    pub positive: Option<String>,
    /// The most weights an example may need (`--max-features`).
    pub max_features: u64,
    /// Examples between snapshots (0: only at the end); `None`: no
    /// snapshots.
    pub snapshot_every: Option<u64>,
    /// Read the file a second time for the final weights' margin and the
    /// theorem's bound (`--report-bound`).
    pub report_bound: bool,
    /// The precision asked for (`None`: the `--init` model's, else f32).
    pub precision: Option<Precision>,
}

impl OnlineParams {
    /// Refuses parameters no run over `source` can honour.
    pub fn check(&self, source: StreamSource<'_>) -> Result<()> {
        if self.max_features == 0 || self.max_features > MAX_FEATURE_INDEX {
            return Err(Error::Usage(format!(
                "--max-features must be between 1 and {MAX_FEATURE_INDEX}"
            )));
        }
        if self.report_bound && source == StreamSource::Stdin {
            return Err(Error::Usage(
                "--report-bound reads the data a second time, which standard input cannot do; \
                 give a file"
                    .into(),
            ));
        }
        Ok(())
    }

    /// τ in precision `F`.
    pub fn tau<F: Real>(&self) -> F {
        self.margin.as_ref().map_or(F::ZERO, |m| m.value::<F>())
    }
}

/// The `--init` model a run starts from (if any) and the precision of the
/// run.
pub struct OnlineStart {
    pub(super) init: Option<(PathBuf, AnyModel)>,
    precision: Precision,
}

impl OnlineStart {
    /// Loads the model at `init`, if any (a scaled model is refused: a
    /// stream is read as it comes), and settles the precision.
    pub fn load(params: &OnlineParams, init: Option<&Path>) -> Result<Self> {
        let init = match init {
            Some(path) => Some((path.to_path_buf(), model::load(path)?)),
            None => None,
        };
        if let Some((path, s)) = init.as_ref().and_then(|(p, m)| Some((p, m.scaling()?))) {
            // A stream's statistics are unknown up front, and a standard-scaled
            // sparse stream would be dense: online learning reads rows as they are.
            return Err(Error::Usage(format!(
                "--init {} reads features scaled by `train --scale {}`; online learning reads \
                 the rows as they come and does not scale them (start from an unscaled model)",
                path.display(),
                s.kind.name()
            )));
        }
        let precision = match (params.precision, &init) {
            (Some(p), _) => p,
            (None, Some((_, m))) => m.precision(),
            (None, None) => Precision::F32,
        };
        Ok(OnlineStart { init, precision })
    }

    /// The precision the run computes in.
    pub fn precision(&self) -> Precision {
        self.precision
    }

    /// How the stream is read: `opts`, with the LIBSVM index base of the
    /// `--init` model's data when not given.
    pub(super) fn stream_options(&self, mut opts: LoadOptions) -> LoadOptions {
        if let (None, Some((path, model))) = (opts.index_base, &self.init)
            && let Some(base) = model
                .training()
                .data_layout
                .as_ref()
                .and_then(|l| l.libsvm_base())
        {
            opts.index_base = Some(base);
            opts.index_base_from = Some(path.clone());
        }
        opts
    }

    /// The learner to start from and the label rule.
    pub(super) fn learner<F: Real>(
        &self,
        params: &OnlineParams,
    ) -> Result<(Learner<F>, LabelRule)> {
        let tau = params.tau::<F>();
        let Some((path, model)) = &self.init else {
            let rule = match &params.positive {
                Some(p) => LabelRule::Positive(LabelMap {
                    positive: p.clone(),
                    negative: None,
                }),
                None => LabelRule::Numeric,
            };
            return Ok((Learner::new(params.bias, tau), rule));
        };
        if model.heads() > 1 {
            return Err(Error::Usage(format!(
                "--init {} is a one-vs-rest (multiclass) model; online learning trains binary models",
                path.display()
            )));
        }
        let (weights, bias, has_bias, labels): (Vec<F>, F, bool, LabelMap) = match model {
            // Widening f32 to f64 is exact.
            AnyModel::F32(m) => binary_start(m),
            AnyModel::F64(_) if F::PRECISION == Precision::F32 => {
                return Err(Error::Usage(format!(
                    "--init {} is an f64 model; leave out --precision f32 to continue from it exactly",
                    path.display()
                )));
            }
            AnyModel::F64(m) => binary_start(m),
        };
        if !params.bias && has_bias {
            return Err(Error::Usage(format!(
                "--init {} was trained with a bias; leave out --no-bias to continue from it",
                path.display()
            )));
        }
        if let Some(p) = &params.positive
            && labels.sign_of(p) != Some(1)
        {
            return Err(Error::Usage(format!(
                "--init {} has +1 = {}, not {}; leave out --positive to use the model's labels",
                path.display(),
                Quoted(&labels.positive),
                Quoted(p)
            )));
        }
        Ok((
            Learner::from_weights(weights, has_bias.then_some(bias), tau),
            LabelRule::Model(labels),
        ))
    }
}

/// A binary model's feature weights and bias in precision `F` (at least
/// as wide: exact), whether it has a bias, and its labels.
fn binary_start<M: Real, F: Real>(m: &Model<M>) -> (Vec<F>, F, bool, LabelMap) {
    let widen = |v: M| F::from_f64(v.to_f64());
    (
        m.weights(0).iter().map(|&v| widen(v)).collect(),
        widen(m.bias(0)),
        m.has_bias(),
        m.labels().cloned().unwrap_or(LabelMap {
            positive: "+1".into(),
            negative: Some("-1".into()),
        }),
    )
}
