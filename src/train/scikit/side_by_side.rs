//! One-vs-rest perceptrons trained side by side on the host's cores: each
//! class's perceptron is independent of the others (its own labels, order
//! and stopping rule), so training several at once gives each the same
//! bits as training them one after another.
//!
//! # Why heads rather than rows
//! Within one perceptron only the margins can be shared among cores; the
//! updates stay in order on one. Heads share nothing, so `at_once` heads
//! on one thread each keep every core busy where one head on every thread
//! keeps one busy and the rest partly. scikit-learn trains the classes
//! one after another unless given `n_jobs`.
//!
//! # The observer
//! The run's observer may belong to the calling thread (Python's signals,
//! a terminal's progress line), so only the calling thread calls it: the
//! workers send it what happens, and it forwards their messages and polls
//! for a stop request while they train.
//!
//! # Stops and errors
//! A stop request interrupts every head in training and starts no other.
//! A head that fails starts no other either; the heads in training finish.
//! The result is what training them one after another gives: the heads up
//! to and including the first interrupted one, or the first error in class
//! order.

use std::sync::Mutex;
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::mpsc::{self, RecvTimeoutError, Sender};
use std::time::Duration;

use crate::error::Result;
use crate::float::Real;
use crate::train::fit::Fit;
use crate::train::state::{Observer, State, Stop};

/// How often the calling thread asks its observer whether to stop while
/// the heads train: as often as a loop polls between windows, in time.
const POLL: Duration = Duration::from_millis(20);

/// What a head on a worker tells the calling thread's observer.
enum Message<F> {
    Progress {
        epoch: usize,
        position: usize,
        rows: usize,
    },
    EpochEnd(Box<State<F>>),
    Warning(String),
}

/// Trains head `h` with the observer given: the heads' one job.
pub(super) type TrainHead<'a, F> =
    dyn Fn(usize, &mut dyn Observer<F>) -> Result<Fit<F>> + Sync + 'a;

/// Trains `heads` perceptrons with `train` (a head's index and its
/// observer), at most `threads` at once, each head on `threads / at_once`
/// of them: the fits in class order, cut as training them one after
/// another would cut them (see the module's notes).
pub(super) fn train_heads<F: Real>(
    heads: usize,
    threads: usize,
    train: &TrainHead<'_, F>,
    observer: &mut dyn Observer<F>,
) -> Result<Vec<Fit<F>>> {
    let (at_once, per_head) = sharing(heads, threads);
    let shared = Shared {
        heads,
        per_head,
        train,
        next: AtomicUsize::new(0),
        // A request made before the heads start interrupts the first at
        // its first poll, as it would alone, and starts no other.
        interrupt: AtomicBool::new(observer.should_stop()),
        no_more: AtomicBool::new(false),
        results: Mutex::new((0..heads).map(|_| None).collect()),
    };
    let (tx, rx) = mpsc::channel::<Message<F>>();
    let observer_error = std::thread::scope(|s| {
        for worker in 0..at_once {
            let (tx, shared) = (tx.clone(), &shared);
            s.spawn(move || shared.work(worker == 0, &tx));
        }
        drop(tx);
        relay_until_done(&rx, &shared.interrupt, observer)
    });
    if let Some(e) = observer_error {
        return Err(e);
    }
    let results = shared
        .results
        .into_inner()
        .unwrap_or_else(|p| p.into_inner());
    in_class_order(results, |f| f.stop == Stop::Interrupted)
}

/// How `heads` classes share `threads` threads, in the report's words (each
/// class's engine names only its own threads).
pub(super) fn how(heads: usize, threads: usize) -> String {
    let (at_once, per_head) = sharing(heads, threads);
    format!(
        "the {heads} classes trained side by side, {at_once} at a time on {}",
        crate::text::count(per_head, "thread") + " each"
    )
}

/// How many of `heads` train at once on `threads` threads.
pub(super) fn at_once(heads: usize, threads: usize) -> usize {
    sharing(heads, threads).0
}

/// How many of `heads` train at once on `threads` threads, and the threads
/// each gets.
fn sharing(heads: usize, threads: usize) -> (usize, usize) {
    let at_once = heads.min(threads).max(1);
    (at_once, (threads / at_once).max(1))
}

/// What the workers share: the next head to take, the stop flags, and each
/// head's result.
struct Shared<'a, F> {
    heads: usize,
    per_head: usize,
    train: &'a TrainHead<'a, F>,
    next: AtomicUsize,
    /// The calling thread's observer asked to stop (or failed).
    interrupt: AtomicBool,
    /// A head failed or was interrupted: start no other.
    no_more: AtomicBool,
    results: Mutex<Vec<Option<Result<Fit<F>>>>>,
}

impl<F: Real> Shared<'_, F> {
    /// A worker: takes heads in class order until none is left or one
    /// stopped the others, each on a pool of `per_head` threads; the first
    /// worker's head shows the run's progress.
    fn work(&self, shows_progress: bool, tx: &Sender<Message<F>>) {
        // A pool of its own sets the threads a head's engine uses; without
        // one (the system refused), the global pool's.
        let pool = rayon::ThreadPoolBuilder::new()
            .num_threads(self.per_head)
            .build();
        loop {
            let h = self.next.fetch_add(1, Ordering::Relaxed);
            // The first head always starts, as it would alone (a stop
            // request then interrupts it at its first poll).
            let stopped =
                self.no_more.load(Ordering::Relaxed) || self.interrupt.load(Ordering::Relaxed);
            if h >= self.heads || (h > 0 && stopped) {
                break;
            }
            let mut relay = Relay {
                tx,
                interrupt: &self.interrupt,
                shows_progress,
            };
            let fit = match &pool {
                Ok(pool) => pool.install(|| (self.train)(h, &mut relay)),
                Err(_) => (self.train)(h, &mut relay),
            };
            if !matches!(&fit, Ok(f) if f.stop != Stop::Interrupted) {
                self.no_more.store(true, Ordering::Relaxed);
            }
            lock(&self.results)[h] = Some(fit);
        }
    }
}

/// The calling thread while the workers train: forwards their messages to
/// `observer` and polls it for a stop request, until every worker is done.
/// The first error the observer returned stops every head.
fn relay_until_done<F>(
    rx: &mpsc::Receiver<Message<F>>,
    interrupt: &AtomicBool,
    observer: &mut dyn Observer<F>,
) -> Option<crate::error::Error> {
    let mut observer_error = None;
    loop {
        match rx.recv_timeout(POLL) {
            Ok(Message::Progress {
                epoch,
                position,
                rows,
            }) => observer.on_progress(epoch, position, rows),
            Ok(Message::EpochEnd(state)) => {
                if let Err(e) = observer.on_epoch_end(&state)
                    && observer_error.is_none()
                {
                    observer_error = Some(e);
                    interrupt.store(true, Ordering::Relaxed);
                }
            }
            Ok(Message::Warning(m)) => observer.on_warning(&m),
            Err(RecvTimeoutError::Timeout) => {}
            // Every worker is done.
            Err(RecvTimeoutError::Disconnected) => return observer_error,
        }
        if !interrupt.load(Ordering::Relaxed) && observer.should_stop() {
            interrupt.store(true, Ordering::Relaxed);
        }
    }
}

/// The heads' results as one after another gives them: every head up to
/// the first `interrupted` one (included), or the first error.
fn in_class_order<T>(
    results: Vec<Option<Result<T>>>,
    interrupted: impl Fn(&T) -> bool,
) -> Result<Vec<T>> {
    let mut fits = Vec::with_capacity(results.len());
    for result in results {
        match result {
            Some(Ok(fit)) => {
                let interrupted = interrupted(&fit);
                fits.push(fit);
                if interrupted {
                    break;
                }
            }
            Some(Err(e)) => return Err(e),
            // Heads are taken in class order, so a head never started
            // follows the head that stopped the others.
            None => break,
        }
    }
    Ok(fits)
}

fn lock<T>(m: &Mutex<T>) -> std::sync::MutexGuard<'_, T> {
    // A worker that panicked has ended the scope's join with that panic;
    // what it left is still each head's own slot.
    m.lock().unwrap_or_else(|p| p.into_inner())
}

/// A head's observer on a worker: its messages go to the calling thread,
/// and it stops when that thread's observer asked.
struct Relay<'a, F> {
    tx: &'a Sender<Message<F>>,
    interrupt: &'a AtomicBool,
    shows_progress: bool,
}

impl<F: Real> Observer<F> for Relay<'_, F> {
    fn on_progress(&mut self, epoch: usize, position: usize, rows: usize) {
        if self.shows_progress {
            // The calling thread is there until every worker is done.
            let _ = self.tx.send(Message::Progress {
                epoch,
                position,
                rows,
            });
        }
    }

    /// The calling thread's observer sees the state a little later; an
    /// error it returns stops every head at its next poll.
    fn on_epoch_end(&mut self, state: &State<F>) -> Result<()> {
        let _ = self.tx.send(Message::EpochEnd(Box::new(state.clone())));
        Ok(())
    }

    fn on_warning(&mut self, message: &str) {
        let _ = self.tx.send(Message::Warning(message.to_owned()));
    }

    fn should_stop(&mut self) -> bool {
        self.interrupt.load(Ordering::Relaxed)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::error::Error;

    fn done(h: usize) -> Option<Result<(usize, bool)>> {
        Some(Ok((h, false)))
    }

    fn cut(results: Vec<Option<Result<(usize, bool)>>>) -> std::result::Result<Vec<usize>, String> {
        in_class_order(results, |r| r.1)
            .map(|v| v.into_iter().map(|r| r.0).collect())
            .map_err(|e| e.to_string())
    }

    #[test]
    fn the_heads_are_cut_as_one_after_another_cuts_them() {
        let failed = || Some(Err(Error::Usage("head 2 failed".into())));
        // Every head done.
        assert_eq!(cut(vec![done(0), done(1), done(2)]), Ok(vec![0, 1, 2]));
        // Interrupted: the heads up to the first interrupted one, even
        // where a later one finished.
        let stopped = Some(Ok((1, true)));
        assert_eq!(cut(vec![done(0), stopped, done(2), None]), Ok(vec![0, 1]));
        // A failure is the run's error, though a later head finished...
        assert_eq!(
            cut(vec![done(0), done(1), failed(), done(3)]),
            Err("head 2 failed".into())
        );
        // ...but not when an earlier head was interrupted first.
        let stopped = Some(Ok((1, true)));
        assert_eq!(cut(vec![done(0), stopped, failed()]), Ok(vec![0, 1]));
        // Heads never started follow the one that stopped the others.
        assert_eq!(cut(vec![done(0), done(1), None, None]), Ok(vec![0, 1]));
    }
}
