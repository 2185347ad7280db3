//! Training across processes and machines: several ranks (MPI processes),
//! each holding one contiguous block of the rows.
//!
//! Two modes:
//! - **exact** ([`exact`]): the textbook model, bit for bit the one a single
//!   process trains, for any number of ranks. Every rank keeps a replica of
//!   the state; rows are decided in visit order with the reference
//!   semantics by the rank that holds them, and only exact integers, rows'
//!   weight changes and whole vectors cross between ranks.
//! - **mix** ([`mix`]): iterative parameter mixing (McDonald, Hall & Mann,
//!   NAACL 2010), a different algorithm: every rank runs an epoch over its
//!   block, then the weights are mixed.
//!
//! The ranks talk through a [`Transport`]: MPI (`mpi`, cargo feature
//! `mpi`) or threads of one process ([`local`], for tests). Which rows a
//! rank holds is [`plan`]'s; reading them [`load`]'s.

pub mod agree;
pub mod block;
pub mod exact;
pub mod fingerprint;
pub mod load;
pub mod local;
pub mod mix;
#[cfg(feature = "mpi")]
pub mod mpi;
pub mod order;
pub mod plan;
pub mod rank;
pub mod report;
pub mod sync;
pub mod theory;
pub mod transport;
pub mod wire;

pub use agree::{Failure, agree};
pub use transport::{MeteredTransport, Reduce, Traffic, Transport};

use serde::{Deserialize, Serialize};

use crate::error::{Error, OneProcessOption, ParamError, Result};
use crate::train::{CheckedParams, Variant};

/// How the ranks train together.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Mode {
    /// The single-process model, bit for bit.
    Exact,
    /// Iterative parameter mixing: a different algorithm.
    Mix,
}

/// How mix mode weighs the ranks' weights.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Mixing {
    /// Each rank 1/K.
    #[default]
    Uniform,
    /// Each rank by its share of the epoch's mistakes (the paper's second
    /// scheme).
    Errors,
}

/// Whether `params` can train in `mode`, else the usage error that names
/// the option, its value and the mode. Exact mode runs every variant of the
/// one loop (classic, averaged, pocket; --margin, one-vs-rest, --shuffle,
/// --init); mix mode the classic rule only. Neither runs the options that
/// need every row in one process: feature scaling (statistics of all rows
/// before the first update), class weights and an intercept decay (its
/// ranks apply the textbook update), and early stopping (its scores, and
/// a held-out part taken from the whole dataset).
pub fn check_params(params: &CheckedParams, mode: Mode) -> Result<()> {
    let refuse = |option: OneProcessOption| {
        Err(Error::Param(ParamError::OneProcessOnly {
            option,
            mode: mode.name(),
        }))
    };
    if let Some(kind) = params.scale {
        return refuse(OneProcessOption::Scale(kind.name()));
    }
    if let Some(c) = &params.class_weight {
        return refuse(OneProcessOption::ClassWeight(c.text()));
    }
    if let Some(d) = params.intercept_decay {
        return refuse(OneProcessOption::InterceptDecay(d.to_string()));
    }
    if let Some(rule) = &params.early_stop {
        return refuse(match &rule.validation {
            Some(v) => OneProcessOption::ValidationFraction(v.fraction.to_string()),
            None => OneProcessOption::EarlyStopping {
                tol: rule.tol.to_string(),
                n_iter_no_change: rule.n_iter_no_change,
            },
        });
    }
    if mode == Mode::Mix {
        let variant = match params.variant {
            Variant::Classic => return Ok(()),
            Variant::Averaged => "averaged",
            Variant::Pocket => "pocket",
        };
        return Err(Error::Param(ParamError::MixVariant { variant }));
    }
    Ok(())
}

impl Mode {
    pub fn name(self) -> &'static str {
        match self {
            Mode::Exact => "exact",
            Mode::Mix => "mix",
        }
    }
}

impl Mixing {
    pub fn name(self) -> &'static str {
        match self {
            Mixing::Uniform => "uniform",
            Mixing::Errors => "errors",
        }
    }
}

#[cfg(test)]
mod tests;
