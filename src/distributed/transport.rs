//! What the distributed drivers need of a message-passing engine, and the
//! count of what they sent.
//!
//! The operations are MPI's, reduced to the few the drivers use: a
//! broadcast of bytes, an all-reduce of unsigned integers (min, max or sum:
//! exact, so the result cannot depend on the order MPI combines them in),
//! and sends between two ranks. `super::mpi` implements them on MPI;
//! [`super::local`] on threads of one process, for tests. No floating-point
//! value is ever reduced: floats cross as whole vectors or as their bits
//! (min and max through [`f64_key`], which orders like the numbers).

use std::cell::RefCell;

/// An exact reduction of unsigned integers.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Reduce {
    Min,
    Max,
    Sum,
}

impl Reduce {
    pub fn apply(self, a: u64, b: u64) -> u64 {
        match self {
            Reduce::Min => a.min(b),
            Reduce::Max => a.max(b),
            Reduce::Sum => a.wrapping_add(b),
        }
    }
}

/// The ranks of a run and the operations between them. Every rank calls
/// the collective operations in the same order; a rank that fails between
/// them must say so through them (see [`super::agree`](mod@super::agree)) or end the job.
pub trait Transport {
    /// This process's rank, 0-based.
    fn rank(&self) -> usize;
    /// The number of ranks.
    fn size(&self) -> usize;
    /// This rank's index among the ranks on its machine (for choosing a GPU).
    fn local_rank(&self) -> usize;
    /// Replaces `bytes` on every rank by root's.
    fn broadcast(&self, root: usize, bytes: &mut Vec<u8>);
    /// Replaces `values` on every rank by the element-wise reduction of
    /// every rank's (all ranks pass the same length).
    fn all_reduce(&self, op: Reduce, values: &mut [u64]);
    /// Sends `bytes` to rank `to` (delivered in order).
    fn send(&self, to: usize, bytes: &[u8]);
    /// The next message from rank `from`.
    fn receive(&self, from: usize) -> Vec<u8>;
    /// Ends every rank of the job at once, with `code` (for failures no
    /// collective operation can report).
    fn abort(&self, code: i32) -> !;
}

/// What a transport carried, counted by [`MeteredTransport`]: collective operations
/// and point-to-point messages, and their payload bytes (as the caller sees
/// them: what MPI sends for them depends on its algorithms and the ranks).
#[derive(Clone, Debug, Default, PartialEq, Eq, serde::Serialize)]
pub struct Traffic {
    pub broadcasts: u64,
    pub broadcast_bytes: u64,
    pub all_reduces: u64,
    pub all_reduce_bytes: u64,
    pub sends: u64,
    pub send_bytes: u64,
}

impl Traffic {
    /// Operations of every kind.
    pub fn operations(&self) -> u64 {
        self.broadcasts + self.all_reduces + self.sends
    }

    /// Payload bytes of every kind.
    pub fn bytes(&self) -> u64 {
        self.broadcast_bytes + self.all_reduce_bytes + self.send_bytes
    }

    /// What happened since `earlier`.
    pub fn since(&self, earlier: &Traffic) -> Traffic {
        Traffic {
            broadcasts: self.broadcasts - earlier.broadcasts,
            broadcast_bytes: self.broadcast_bytes - earlier.broadcast_bytes,
            all_reduces: self.all_reduces - earlier.all_reduces,
            all_reduce_bytes: self.all_reduce_bytes - earlier.all_reduce_bytes,
            sends: self.sends - earlier.sends,
            send_bytes: self.send_bytes - earlier.send_bytes,
        }
    }
}

/// A transport that counts what passes through it.
pub struct MeteredTransport<'t> {
    inner: &'t dyn Transport,
    traffic: RefCell<Traffic>,
}

impl<'t> MeteredTransport<'t> {
    pub fn new(inner: &'t dyn Transport) -> Self {
        MeteredTransport {
            inner,
            traffic: RefCell::new(Traffic::default()),
        }
    }

    /// What was carried so far.
    pub fn traffic(&self) -> Traffic {
        self.traffic.borrow().clone()
    }

    /// The traffic since `last`, which moves up to now (an epoch's share).
    pub fn since(&self, last: &mut Traffic) -> Traffic {
        let now = self.traffic();
        let share = now.since(last);
        *last = now;
        share
    }
}

impl Transport for MeteredTransport<'_> {
    fn rank(&self) -> usize {
        self.inner.rank()
    }
    fn size(&self) -> usize {
        self.inner.size()
    }
    fn local_rank(&self) -> usize {
        self.inner.local_rank()
    }
    fn broadcast(&self, root: usize, bytes: &mut Vec<u8>) {
        self.inner.broadcast(root, bytes);
        let mut t = self.traffic.borrow_mut();
        t.broadcasts += 1;
        t.broadcast_bytes += bytes.len() as u64;
    }
    fn all_reduce(&self, op: Reduce, values: &mut [u64]) {
        self.inner.all_reduce(op, values);
        let mut t = self.traffic.borrow_mut();
        t.all_reduces += 1;
        t.all_reduce_bytes += 8 * values.len() as u64;
    }
    fn send(&self, to: usize, bytes: &[u8]) {
        self.inner.send(to, bytes);
        let mut t = self.traffic.borrow_mut();
        t.sends += 1;
        t.send_bytes += bytes.len() as u64;
    }
    fn receive(&self, from: usize) -> Vec<u8> {
        self.inner.receive(from)
    }
    fn abort(&self, code: i32) -> ! {
        self.inner.abort(code)
    }
}

/// Every rank's `value`, in rank order.
pub fn all_gather(t: &dyn Transport, value: u64) -> Vec<u64> {
    all_gather_many(t, &[value])
        .into_iter()
        .map(|v| v[0])
        .collect()
}

/// Every rank's `values` (the same length on every rank), in rank order.
pub fn all_gather_many(t: &dyn Transport, values: &[u64]) -> Vec<Vec<u64>> {
    let (k, n) = (t.size(), values.len());
    let mut all = vec![0u64; k * n];
    all[t.rank() * n..(t.rank() + 1) * n].copy_from_slice(values);
    t.all_reduce(Reduce::Sum, &mut all);
    all.chunks(n.max(1)).map(<[u64]>::to_vec).take(k).collect()
}

/// Every rank's bytes, in rank order (one broadcast per rank: for small,
/// rare exchanges).
pub fn all_gather_bytes(t: &dyn Transport, bytes: &[u8]) -> Vec<Vec<u8>> {
    (0..t.size())
        .map(|root| {
            let mut b = if root == t.rank() {
                bytes.to_vec()
            } else {
                Vec::new()
            };
            t.broadcast(root, &mut b);
            b
        })
        .collect()
}

/// For each entry, the sum of the ranks before this one's values (0 on
/// rank 0).
pub fn exclusive_sums(t: &dyn Transport, values: &[u64]) -> Vec<u64> {
    let all = all_gather_many(t, values);
    (0..values.len())
        .map(|j| all[..t.rank()].iter().map(|v| v[j]).sum())
        .collect()
}

/// An unsigned key that orders like the finite f64 values and infinities
/// (-0.0 before +0.0), so that min and max of f64 are exact integer
/// reductions.
pub fn f64_key(v: f64) -> u64 {
    let b = v.to_bits();
    if b >> 63 == 1 { !b } else { b | (1 << 63) }
}

/// The value of an [`f64_key`].
pub fn f64_of_key(k: u64) -> f64 {
    f64::from_bits(if k >> 63 == 1 { k & !(1 << 63) } else { !k })
}

/// The smallest of every rank's `v`.
pub fn min_f64(t: &dyn Transport, v: f64) -> f64 {
    let mut k = [f64_key(v)];
    t.all_reduce(Reduce::Min, &mut k);
    f64_of_key(k[0])
}

/// The largest of every rank's `v`.
pub fn max_f64(t: &dyn Transport, v: f64) -> f64 {
    let mut k = [f64_key(v)];
    t.all_reduce(Reduce::Max, &mut k);
    f64_of_key(k[0])
}

/// Whether any rank's `v` is true.
pub fn any(t: &dyn Transport, v: bool) -> bool {
    let mut k = [v as u64];
    t.all_reduce(Reduce::Max, &mut k);
    k[0] == 1
}

/// The sum of every rank's `v`.
pub fn sum(t: &dyn Transport, v: u64) -> u64 {
    let mut k = [v];
    t.all_reduce(Reduce::Sum, &mut k);
    k[0]
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn keys_order_like_the_numbers() {
        let vals = [
            f64::NEG_INFINITY,
            -1e300,
            -1.5,
            -f64::MIN_POSITIVE,
            -0.0,
            0.0,
            1e-310,
            2.0,
            f64::INFINITY,
        ];
        for w in vals.windows(2) {
            assert!(f64_key(w[0]) < f64_key(w[1]), "{} {}", w[0], w[1]);
        }
        for v in vals {
            assert_eq!(f64_of_key(f64_key(v)).to_bits(), v.to_bits());
        }
    }
}
