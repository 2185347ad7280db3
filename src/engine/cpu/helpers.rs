//! Helper threads that stay up between the sparse walk's batches, so that a
//! batch neither waits for a sleeping thread to wake before it ends nor
//! pays a wake-up for each helper it starts.
//!
//! A pool of the global thread pool's jobs would do the work, but a scope
//! over them must wait, at its end, for every job it spawned to run, and a
//! job spawned to a sleeping thread runs only once that thread wakes (up to
//! a millisecond on a virtual machine): longer than a short batch. Here a
//! batch publishes its work, runs its own part, then withdraws the work:
//! a helper that had not yet started never will, and the batch waits only
//! for the helpers that did. Between batches the helpers spin briefly for
//! the next one before they sleep.

use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Condvar, Mutex};
use std::thread::JoinHandle;
use std::time::{Duration, Instant};

/// How long an idle helper polls for the next batch before it sleeps: the
/// loop's replay between two batches takes about this long when mistakes
/// are rare.
const SPIN: Duration = Duration::from_micros(200);

/// The work of one batch, its lifetime erased: valid while it is published
/// and while a helper that took it runs it (see [`Helpers::run`]).
#[derive(Clone, Copy)]
struct Work(*const (dyn Fn() + Sync));

// SAFETY: the pointee is `Sync`, and `Helpers::run` keeps it alive until no
// helper can reach it (see there).
unsafe impl Send for Work {}

#[derive(Default)]
struct Slot {
    work: Option<Work>,
    /// Helpers running the published work now.
    running: usize,
    shutdown: bool,
}

#[derive(Default)]
struct Control {
    slot: Mutex<Slot>,
    /// Signalled when work is published or the pool shuts down.
    published: Condvar,
    /// Signalled when the last running helper finished.
    finished: Condvar,
    /// Bumped with each published work, for idle helpers to poll.
    batch: AtomicU64,
}

/// Threads that run each batch's helper part beside the calling thread.
pub(super) struct Helpers {
    control: Arc<Control>,
    threads: Vec<JoinHandle<()>>,
}

impl Helpers {
    /// `n` helper threads (none if the system refuses to start them: the
    /// walk then runs alone).
    pub(super) fn new(n: usize) -> Self {
        let control = Arc::new(Control::default());
        let threads = (0..n)
            .map_while(|k| {
                let control = Arc::clone(&control);
                std::thread::Builder::new()
                    .name(format!("perceptron-helper-{k}"))
                    .spawn(move || serve(&control))
                    .ok()
            })
            .collect();
        Helpers { control, threads }
    }

    pub(super) fn len(&self) -> usize {
        self.threads.len()
    }

    /// Runs `own` on this thread while the helpers run `work`, then
    /// withdraws `work` and waits for the helpers that took it. `own` must
    /// make `work` return soon after it does (the walk's quit flag).
    pub(super) fn run<R>(&self, work: &(dyn Fn() + Sync), own: impl FnOnce() -> R) -> R {
        let erased: *const (dyn Fn() + Sync + '_) = work;
        // SAFETY: only the lifetime changes; the pointer is withdrawn
        // below, and this function returns only once no helper holds it.
        let erased: *const (dyn Fn() + Sync + 'static) = unsafe { std::mem::transmute(erased) };
        {
            let mut slot = lock(&self.control.slot);
            slot.work = Some(Work(erased));
        }
        self.control.batch.fetch_add(1, Ordering::Release);
        self.control.published.notify_all();
        // Withdrawn even if `own` panics, so no helper outlives `work`.
        struct Withdraw<'a>(&'a Control);
        impl Drop for Withdraw<'_> {
            fn drop(&mut self) {
                let mut slot = lock(&self.0.slot);
                slot.work = None;
                while slot.running > 0 {
                    slot = self
                        .0
                        .finished
                        .wait(slot)
                        .unwrap_or_else(|e| e.into_inner());
                }
            }
        }
        let _withdraw = Withdraw(&self.control);
        own()
    }
}

impl Drop for Helpers {
    fn drop(&mut self) {
        lock(&self.control.slot).shutdown = true;
        self.control.published.notify_all();
        for t in self.threads.drain(..) {
            let _ = t.join();
        }
    }
}

fn lock(m: &Mutex<Slot>) -> std::sync::MutexGuard<'_, Slot> {
    m.lock().unwrap_or_else(|e| e.into_inner())
}

/// A helper thread: runs each published work once, spinning briefly for
/// the next before it sleeps.
fn serve(control: &Control) {
    let mut done = 0u64;
    loop {
        let since = Instant::now();
        while control.batch.load(Ordering::Acquire) == done && since.elapsed() < SPIN {
            std::hint::spin_loop();
        }
        let work = {
            let mut slot = lock(&control.slot);
            loop {
                if slot.shutdown {
                    return;
                }
                let batch = control.batch.load(Ordering::Acquire);
                if batch != done
                    && let Some(work) = slot.work
                {
                    done = batch;
                    slot.running += 1;
                    break work;
                }
                done = batch;
                slot = control
                    .published
                    .wait(slot)
                    .unwrap_or_else(|e| e.into_inner());
            }
        };
        // SAFETY: `running` counts this helper, so `Helpers::run` has not
        // returned and the work is alive.
        let ran = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| unsafe { (*work.0)() }));
        {
            let mut slot = lock(&control.slot);
            slot.running -= 1;
            if slot.running == 0 {
                control.finished.notify_all();
            }
        }
        if let Err(panic) = ran {
            // Counted out first, so the batch is not left waiting for this
            // thread; its chunks were never marked done, and the walk sums
            // their rows itself.
            std::panic::resume_unwind(panic);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::sync::atomic::{AtomicBool, AtomicUsize};

    /// Every batch's work runs on at most each helper once, never after the
    /// batch returned, and a batch ends without waiting for idle helpers.
    #[test]
    fn work_runs_only_inside_its_batch() {
        let helpers = Helpers::new(3);
        assert_eq!(helpers.len(), 3);
        for round in 0..200 {
            let quit = AtomicBool::new(false);
            let inside = AtomicBool::new(true);
            let ran = AtomicUsize::new(0);
            let work = || {
                assert!(inside.load(Ordering::SeqCst), "work ran after its batch");
                ran.fetch_add(1, Ordering::SeqCst);
                while !quit.load(Ordering::SeqCst) {
                    std::hint::spin_loop();
                }
            };
            helpers.run(&work, || {
                if round % 2 == 0 {
                    std::thread::sleep(Duration::from_micros(300));
                }
                quit.store(true, Ordering::SeqCst);
            });
            inside.store(false, Ordering::SeqCst);
            assert!(ran.load(Ordering::SeqCst) <= 3);
        }
    }

    /// A helper whose work panics is counted out before its thread ends:
    /// the batch returns instead of waiting for it forever.
    #[test]
    fn a_panicking_helper_does_not_hold_the_batch() {
        let helpers = Helpers::new(1);
        let started = AtomicBool::new(false);
        let work = || {
            started.store(true, Ordering::SeqCst);
            panic!("a helper's bug");
        };
        let t = Instant::now();
        helpers.run(&work, || {
            while !started.load(Ordering::SeqCst) && t.elapsed() < Duration::from_secs(5) {
                std::hint::spin_loop();
            }
        });
        assert!(started.load(Ordering::SeqCst));
        // Later batches run without the dead helper.
        helpers.run(&|| {}, || ());
    }
}
