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
//! The ranks talk through a [`Transport`]: MPI ([`mpi`], cargo feature
//! `mpi`) or threads of one process ([`local`], for tests). Which rows a
//! rank holds is [`plan`]'s; reading them [`load`]'s.

pub mod agree;
pub mod exact;
pub mod fingerprint;
pub mod load;
pub mod local;
pub mod mix;
#[cfg(feature = "mpi")]
pub mod mpi;
pub mod order;
pub mod plan;
pub mod sync;
pub mod theory;
pub mod transport;
pub mod wire;

pub use agree::{Failure, agree};
pub use transport::{Counted, Reduce, Traffic, Transport};

use serde::{Deserialize, Serialize};

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
