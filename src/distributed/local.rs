//! Ranks as threads of one process: the [`Transport`] the protocol tests
//! run on without `mpirun`. Collectives meet at a rendezvous (every rank
//! deposits its part; the last one to arrive releases them all); a rank
//! that panics releases the others with a panic of their own, so a test
//! fails instead of hanging.

use std::collections::{HashMap, VecDeque};
use std::panic::{AssertUnwindSafe, catch_unwind, resume_unwind};
use std::sync::{Arc, Condvar, Mutex, MutexGuard};

use super::transport::{Reduce, Transport};

/// What the ranks share.
struct Hub {
    size: usize,
    state: Mutex<Shared>,
    wake: Condvar,
}

#[derive(Default)]
struct Shared {
    /// Collective operations completed so far.
    generation: u64,
    arrived: usize,
    slots: Vec<Option<Vec<u8>>>,
    /// The parts of the last completed collective, in rank order.
    result: Arc<Vec<Vec<u8>>>,
    /// Messages in flight, by (from, to).
    mail: HashMap<(usize, usize), VecDeque<Vec<u8>>>,
    /// A rank panicked.
    failed: bool,
    /// The first rank that did (the others' panics only follow from it).
    first_failed: Option<usize>,
}

/// One rank's end of the hub.
pub struct LocalRank {
    hub: Arc<Hub>,
    rank: usize,
}

impl Hub {
    fn lock(&self) -> MutexGuard<'_, Shared> {
        match self.state.lock() {
            Ok(g) => g,
            Err(p) => p.into_inner(),
        }
    }

    fn wait<'a>(&self, g: MutexGuard<'a, Shared>) -> MutexGuard<'a, Shared> {
        let g = match self.wake.wait(g) {
            Ok(g) => g,
            Err(p) => p.into_inner(),
        };
        if g.failed {
            drop(g);
            panic!("another rank failed");
        }
        g
    }
}

impl LocalRank {
    /// Every rank's `part`, in rank order.
    fn gather(&self, part: Vec<u8>) -> Arc<Vec<Vec<u8>>> {
        let mut g = self.hub.lock();
        if g.failed {
            drop(g);
            panic!("another rank failed");
        }
        if g.slots.len() != self.hub.size {
            g.slots = vec![None; self.hub.size];
        }
        let generation = g.generation;
        g.slots[self.rank] = Some(part);
        g.arrived += 1;
        if g.arrived == self.hub.size {
            let parts = g.slots.iter_mut().map(|s| s.take().unwrap_or_default());
            g.result = Arc::new(parts.collect());
            g.arrived = 0;
            g.generation += 1;
            self.hub.wake.notify_all();
            return Arc::clone(&g.result);
        }
        while g.generation == generation {
            g = self.hub.wait(g);
        }
        Arc::clone(&g.result)
    }
}

impl Transport for LocalRank {
    fn rank(&self) -> usize {
        self.rank
    }

    fn size(&self) -> usize {
        self.hub.size
    }

    fn local_rank(&self) -> usize {
        self.rank
    }

    fn broadcast(&self, root: usize, bytes: &mut Vec<u8>) {
        let mine = if self.rank == root {
            std::mem::take(bytes)
        } else {
            Vec::new()
        };
        let all = self.gather(mine);
        bytes.clone_from(&all[root]);
    }

    fn all_reduce(&self, op: Reduce, values: &mut [u64]) {
        let mine: Vec<u8> = values.iter().flat_map(|v| v.to_le_bytes()).collect();
        let all = self.gather(mine);
        for (j, v) in values.iter_mut().enumerate() {
            let at = |p: &Vec<u8>| {
                let mut b = [0u8; 8];
                b.copy_from_slice(&p[8 * j..8 * j + 8]);
                u64::from_le_bytes(b)
            };
            *v = all
                .iter()
                .skip(1)
                .fold(at(&all[0]), |a, p| op.apply(a, at(p)));
        }
    }

    fn send(&self, to: usize, bytes: &[u8]) {
        let mut g = self.hub.lock();
        g.mail
            .entry((self.rank, to))
            .or_default()
            .push_back(bytes.to_vec());
        self.hub.wake.notify_all();
    }

    fn receive(&self, from: usize) -> Vec<u8> {
        let mut g = self.hub.lock();
        loop {
            if let Some(m) = g
                .mail
                .get_mut(&(from, self.rank))
                .and_then(|q| q.pop_front())
            {
                return m;
            }
            if g.failed {
                drop(g);
                panic!("another rank failed");
            }
            g = self.hub.wait(g);
        }
    }

    fn abort(&self, code: i32) -> ! {
        panic!("rank {} aborted the job with code {code}", self.rank)
    }
}

/// Runs `f` on `size` ranks, each a thread with its own [`LocalRank`];
/// returns their results in rank order. A panic on any rank is resumed
/// here after every rank has stopped.
pub fn run_ranks<T: Send>(size: usize, f: impl Fn(&LocalRank) -> T + Sync) -> Vec<T> {
    let hub = Arc::new(Hub {
        size,
        state: Mutex::new(Shared::default()),
        wake: Condvar::new(),
    });
    let results: Vec<std::thread::Result<T>> = std::thread::scope(|s| {
        let handles: Vec<_> = (0..size)
            .map(|rank| {
                let me = LocalRank {
                    hub: Arc::clone(&hub),
                    rank,
                };
                let f = &f;
                let hub = Arc::clone(&hub);
                s.spawn(move || {
                    let r = catch_unwind(AssertUnwindSafe(|| f(&me)));
                    if r.is_err() {
                        let mut g = hub.lock();
                        if !g.failed {
                            g.failed = true;
                            g.first_failed = Some(rank);
                        }
                        drop(g);
                        hub.wake.notify_all();
                    }
                    r
                })
            })
            .collect();
        handles
            .into_iter()
            .map(|h| h.join().unwrap_or_else(Err))
            .collect()
    });
    let first = hub.lock().first_failed;
    let mut out = Vec::with_capacity(size);
    let mut panics = Vec::new();
    for (rank, r) in results.into_iter().enumerate() {
        match r {
            Ok(v) => out.push(v),
            Err(p) => panics.push((rank, p)),
        }
    }
    if let Some(i) = panics.iter().position(|(r, _)| Some(*r) == first) {
        resume_unwind(panics.swap_remove(i).1);
    }
    if let Some((_, p)) = panics.pop() {
        resume_unwind(p);
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::distributed::transport::{all_gather, all_gather_bytes, exclusive_sums};

    #[test]
    fn collectives_meet_and_messages_arrive_in_order() {
        let out = run_ranks(4, |t| {
            let mut v = [t.rank() as u64 + 1, 10 - t.rank() as u64];
            t.all_reduce(Reduce::Sum, &mut v);
            assert_eq!(v, [10, 34]);
            let mut m = [t.rank() as u64 + 3];
            t.all_reduce(Reduce::Min, &mut m);
            assert_eq!(m, [3]);
            let mut b = if t.rank() == 2 { vec![7, 8] } else { vec![] };
            t.broadcast(2, &mut b);
            assert_eq!(b, [7, 8]);
            assert_eq!(all_gather(t, t.rank() as u64 * 2), [0, 2, 4, 6]);
            assert_eq!(
                exclusive_sums(t, &[1, t.rank() as u64]),
                [t.rank() as u64, { (0..t.rank() as u64).sum() }]
            );
            let parts = all_gather_bytes(t, &vec![t.rank() as u8; t.rank()]);
            assert_eq!(parts[3], [3, 3, 3]);
            if t.rank() == 0 {
                for k in 1..4 {
                    t.send(k, &[k as u8, 1]);
                    t.send(k, &[k as u8, 2]);
                }
            } else {
                assert_eq!(t.receive(0), [t.rank() as u8, 1]);
                assert_eq!(t.receive(0), [t.rank() as u8, 2]);
            }
            t.rank()
        });
        assert_eq!(out, [0, 1, 2, 3]);
    }

    #[test]
    #[should_panic(expected = "rank 1 gives up")]
    fn a_failing_rank_releases_the_others() {
        run_ranks(3, |t| {
            if t.rank() == 1 {
                panic!("rank 1 gives up");
            }
            let mut v = [1];
            t.all_reduce(Reduce::Sum, &mut v);
        });
    }
}
