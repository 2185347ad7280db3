//! The [`Transport`] on MPI (rsmpi over Open MPI, or any MPI the crate
//! builds against), for runs launched with `mpirun` or `srun`. Started
//! without a launcher, MPI runs the process as the only rank.
//!
//! Only the main thread calls MPI (the engines' worker threads never do),
//! so the library is initialised with `MPI_THREAD_FUNNELED`. Errors inside
//! MPI end the job (MPI's default error handler), which is what a failed
//! rank must do anyway.

use mpi::Threading;
use mpi::collective::SystemOperation;
use mpi::environment::Universe;
use mpi::topology::SimpleCommunicator;
use mpi::traits::{Communicator, CommunicatorCollectives, Destination, Root, Source};

use super::transport::{Reduce, Transport};

/// This process's place among the ranks of an MPI job.
pub struct Mpi {
    // Finalises MPI when dropped, after the communicators.
    world: SimpleCommunicator,
    local_rank: usize,
    _universe: Universe,
}

impl Mpi {
    /// Starts MPI; `None` if it was started already.
    pub fn start() -> Option<Mpi> {
        let (universe, _) = mpi::initialize_with_threading(Threading::Funneled)?;
        let world = universe.world();
        let local_rank = world.split_shared(world.rank()).rank() as usize;
        Some(Mpi {
            world,
            local_rank,
            _universe: universe,
        })
    }
}

impl Transport for Mpi {
    fn rank(&self) -> usize {
        self.world.rank() as usize
    }

    fn size(&self) -> usize {
        self.world.size() as usize
    }

    fn local_rank(&self) -> usize {
        self.local_rank
    }

    fn broadcast(&self, root: usize, bytes: &mut Vec<u8>) {
        let root = self.world.process_at_rank(root as i32);
        let mut len = bytes.len() as u64;
        root.broadcast_into(&mut len);
        bytes.resize(len as usize, 0);
        if len > 0 {
            root.broadcast_into(&mut bytes[..]);
        }
    }

    fn all_reduce(&self, op: Reduce, values: &mut [u64]) {
        let mine = values.to_vec();
        let op = match op {
            Reduce::Min => SystemOperation::min(),
            Reduce::Max => SystemOperation::max(),
            Reduce::Sum => SystemOperation::sum(),
        };
        self.world.all_reduce_into(&mine[..], values, op);
    }

    fn send(&self, to: usize, bytes: &[u8]) {
        self.world.process_at_rank(to as i32).send(bytes);
    }

    fn receive(&self, from: usize) -> Vec<u8> {
        self.world
            .process_at_rank(from as i32)
            .receive_vec::<u8>()
            .0
    }

    fn abort(&self, code: i32) -> ! {
        self.world.abort(code)
    }
}
