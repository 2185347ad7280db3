//! `train --distributed exact|mix`: the same command on several processes,
//! launched by `mpirun` or `srun` (see [`crate::distributed`]).
//!
//! Every rank reads its block of DATA and trains; rank 0 alone writes the
//! model, the checkpoints and the report, and prints. A failure on any rank
//! is agreed on by all (so none waits forever): rank 0 prints it, naming
//! the rank, and every rank exits with its status; nothing is written. A
//! build without the `mpi` feature answers `--distributed` with how to get
//! one.

use std::path::Path;

use super::args::{DistributedArg, TrainArgs};
use crate::error::{Error, Result};
use crate::float::Real;

/// How to get a perceptron that trains on several processes.
const BUILD_HINT: &str = "--distributed needs a perceptron built with MPI: install Open MPI \
    (on Debian or Ubuntu: apt-get install openmpi-bin libopenmpi-dev libclang-dev), build with \
    `cargo build --release --features mpi`, and launch it with `mpirun -np K perceptron train \
    DATA --distributed exact` (or srun)";

/// Runs `train --distributed`.
#[cfg(not(feature = "mpi"))]
pub fn run<F: Real>(
    _args: &TrainArgs,
    _resume: Option<(&Path, &str)>,
    _mode: DistributedArg,
) -> Result<i32> {
    Err(Error::Usage(format!(
        "this perceptron was built without MPI. {BUILD_HINT}"
    )))
}

/// Runs `train --distributed` on the MPI job this process belongs to (a
/// job of one rank when started without a launcher).
#[cfg(feature = "mpi")]
pub fn run<F: Real>(
    args: &TrainArgs,
    resume: Option<(&Path, &str)>,
    mode: DistributedArg,
) -> Result<i32> {
    use crate::distributed::{MeteredTransport, Transport};
    let Some(mpi) = crate::distributed::mpi::Mpi::start() else {
        return Err(Error::System(format!(
            "MPI could not be started in this process. {BUILD_HINT}"
        )));
    };
    let net = MeteredTransport::new(&mpi);
    let describe = |e: &Error| {
        (
            crate::cli::errors::status(e),
            crate::cli::errors::message(e),
        )
    };
    let interrupted = crate::cli::interrupt::flag();
    let stop = move || interrupted.load(std::sync::atomic::Ordering::SeqCst);
    Ok(
        match on_ranks::train::<F>(&net, args, resume, mode, &describe, &stop) {
            Ok(code) => code,
            Err(failure) => {
                if net.rank() == 0 {
                    eprintln!("perceptron: error: {failure}");
                }
                failure.status
            }
        },
    )
}

// Without MPI the unit tests run it on ranks that are threads.
#[cfg(any(feature = "mpi", test))]
mod on_ranks;
#[cfg(any(feature = "mpi", test))]
mod write;

#[cfg(test)]
mod tests;
