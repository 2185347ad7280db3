//! How the labels of a stream map to ±1: the `--init` model's labels,
//! `--positive L` (L is +1), or the numeric labels -1, +1, 0 and 1.

use std::path::Path;

use crate::data::LabelMap;
use crate::data::stream::StreamRow;
use crate::error::Error;
use crate::float::Real;
use crate::text::Quoted;

/// How the labels of a stream map to ±1.
pub enum LabelRule {
    /// The `--init` model's map.
    Model(LabelMap),
    /// `--positive L`: L is +1, anything else -1.
    Positive(LabelMap),
    /// -1, +1, 0 or 1.
    Numeric,
}

impl LabelRule {
    /// The map a model of the run records (numeric labels print 1 and -1).
    pub fn map(&self) -> LabelMap {
        match self {
            LabelRule::Model(m) | LabelRule::Positive(m) => m.clone(),
            LabelRule::Numeric => LabelMap {
                positive: "1".into(),
                negative: Some("-1".into()),
            },
        }
    }

    /// Where the rule came from, as the report names it: `model`,
    /// `positive` or `numeric`.
    pub fn name(&self) -> &'static str {
        match self {
            LabelRule::Model(_) => "model",
            LabelRule::Positive(_) => "positive",
            LabelRule::Numeric => "numeric",
        }
    }

    /// The sign of the label `text`, or `None` when the rule has none for it.
    pub fn sign(&self, text: &str) -> Option<i8> {
        match self {
            LabelRule::Model(m) | LabelRule::Positive(m) => m.sign_of(text),
            LabelRule::Numeric => {
                let v = text.parse::<f64>().ok()?;
                if v == 1.0 {
                    Some(1)
                } else if v == 0.0 || v == -1.0 {
                    Some(-1)
                } else {
                    None
                }
            }
        }
    }

    /// The error for a label [`LabelRule::sign`] refused, at its line and
    /// column of `path`; `init` is the `--init` model's file.
    pub fn refuse(
        &self,
        path: &Path,
        row: &StreamRow<'_, impl Real>,
        init: Option<&Path>,
    ) -> Error {
        let label = crate::data::message::quote(row.label);
        let message = match self {
            LabelRule::Model(m) => format!(
                "label {label} is not one of the --init model's labels (+1 = {}, -1 = {}){}",
                Quoted(&m.positive),
                Quoted(m.negative_text()),
                init.map(|p| format!(" in {}", p.display()))
                    .unwrap_or_default()
            ),
            _ => format!(
                "label {label} is not -1, +1, 0 or 1; for other labels name the +1 class with \
                 --positive LABEL (every other label is then -1), or start from a model with \
                 --init"
            ),
        };
        Error::parse(path, row.line, Some(row.label_column), message)
    }
}
