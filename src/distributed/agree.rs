//! Failing together: when one rank fails (bad data in its block, a weight
//! that overflows), every rank must learn it at the same point of the
//! protocol, or the others would wait for it forever. At each such point
//! the ranks agree: the lowest failing rank's error, described in the front
//! end's words, reaches every rank, and every rank returns it.

use crate::error::{Error, Result};

use super::transport::{Reduce, Transport};
use super::wire::{Reader, Writer};

/// A failure every rank agreed on: which rank failed, the exit status and
/// the message its front end gives (printed once, by rank 0).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Failure {
    pub rank: usize,
    pub ranks: usize,
    /// Every rank failed (the same way: a bad option, say), so naming one
    /// says nothing.
    pub everywhere: bool,
    pub status: i32,
    pub message: String,
}

impl std::fmt::Display for Failure {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        if self.ranks > 1 && !self.everywhere {
            write!(f, "rank {} of {}: {}", self.rank, self.ranks, self.message)
        } else {
            f.write_str(&self.message)
        }
    }
}

/// How a front end says an error: its exit status and message.
pub type DescribeFailure<'a> = &'a dyn Fn(&Error) -> (i32, String);

/// The result of a distributed step: a failure every rank agreed on.
pub type Agreed<T> = std::result::Result<T, Failure>;

/// Every rank's `result` at the same point: `Ok` on every rank if every
/// rank succeeded, else on every rank the failure of the lowest rank that
/// failed. Costs one all-reduce of one integer (and a broadcast on failure).
pub fn agree<T>(t: &dyn Transport, result: Result<T>, describe: DescribeFailure<'_>) -> Agreed<T> {
    let mut who = [if result.is_err() {
        t.rank() as u64
    } else {
        u64::MAX
    }];
    t.all_reduce(Reduce::Min, &mut who);
    match result {
        Ok(v) if who[0] == u64::MAX => Ok(v),
        r => {
            let mut failed = [r.is_err() as u64];
            t.all_reduce(Reduce::Sum, &mut failed);
            let e = r.err();
            let mut f = spread(t, who[0] as usize, e.as_ref(), describe);
            f.everywhere = failed[0] == t.size() as u64;
            Err(f)
        }
    }
}

/// The failure of rank `from` (this rank's error `e` when it is `from`),
/// broadcast from it: every rank calls this at the same point.
pub fn spread(
    t: &dyn Transport,
    from: usize,
    e: Option<&Error>,
    describe: DescribeFailure<'_>,
) -> Failure {
    let mut bytes = match e {
        Some(e) if from == t.rank() => {
            let (status, message) = describe(e);
            Writer::default()
                .u64(status as u32 as u64)
                .str(&message)
                .finish()
        }
        _ => Vec::new(),
    };
    t.broadcast(from, &mut bytes);
    let mut r = Reader::new(&bytes);
    let status = r.u64().map(|s| s as u32 as i32).unwrap_or(1);
    let message = r
        .str()
        .unwrap_or_else(|_| "failed without a message".to_owned());
    Failure {
        rank: from,
        ranks: t.size(),
        everywhere: false,
        status,
        message,
    }
}

/// The failure of an error every rank met at the same point without
/// talking (a check of what every rank was given alike): no message is
/// sent.
pub fn everywhere(t: &dyn Transport, e: &Error, describe: DescribeFailure<'_>) -> Failure {
    let (status, message) = describe(e);
    Failure {
        rank: 0,
        ranks: t.size(),
        everywhere: true,
        status,
        message,
    }
}

/// A message from another rank that this one cannot read: the ranks no
/// longer agree on the state, and only ending the whole job is safe.
pub fn broken(t: &dyn Transport, e: &Error) -> ! {
    eprintln!(
        "perceptron: rank {} of {}: {e}; ending the job",
        t.rank(),
        t.size()
    );
    t.abort(70)
}

/// Describes an error as itself, with exit status 1 (for tests and
/// front ends without words of their own).
pub fn plainly(e: &Error) -> (i32, String) {
    (1, e.to_string())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::distributed::local::run_ranks;

    #[test]
    fn the_lowest_failing_rank_is_every_ranks_failure() {
        let all = run_ranks(3, |t| {
            agree::<()>(t, Err(Error::Usage("bad".into())), &plainly).unwrap_err()
        });
        assert!(all.iter().all(|f| f.everywhere && f.to_string() == "bad"));
        let out = run_ranks(4, |t| {
            let mine: Result<u32> = if t.rank() % 2 == 1 {
                Err(Error::Usage(format!("bad on {}", t.rank())))
            } else {
                Ok(t.rank() as u32)
            };
            let fine = agree(t, Ok::<_, Error>(t.rank()), &plainly);
            assert_eq!(fine.unwrap(), t.rank());
            agree(t, mine, &plainly).unwrap_err()
        });
        for f in out {
            assert_eq!(f.rank, 1);
            assert_eq!(f.to_string(), "rank 1 of 4: bad on 1");
        }
    }
}
