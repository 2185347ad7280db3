//! Progress on a terminal during long training runs (`train`, and the
//! folds of `cv`); silent otherwise.

use std::sync::Mutex;
use std::sync::atomic::{AtomicU64, AtomicUsize, Ordering};
use std::time::{Duration, Instant};

use indicatif::{HumanCount, ProgressBar, ProgressDrawTarget, ProgressState, ProgressStyle};

use crate::train::Observer;

/// Shows a bar on stderr when it is a terminal and the run takes a while.
pub struct TrainProgress {
    bar: Option<ProgressBar>,
    enabled: bool,
    started: Instant,
    rows: u64,
    max_epochs: usize,
    last_mistakes: Option<u64>,
    warnings: Vec<String>,
}

impl TrainProgress {
    pub fn new(enabled: bool, rows: usize, max_epochs: usize) -> Self {
        TrainProgress {
            bar: None,
            enabled,
            started: Instant::now(),
            rows: rows as u64,
            max_epochs,
            last_mistakes: None,
            warnings: Vec::new(),
        }
    }

    fn bar(&mut self) -> Option<&ProgressBar> {
        if self.bar.is_none() && due(self.enabled, self.started) {
            let total = self.rows.saturating_mul(self.max_epochs as u64);
            self.bar = Some(new_bar(total, self.started, "epoch"));
        }
        self.bar.as_ref()
    }

    pub fn finish(&mut self) {
        if let Some(b) = self.bar.take() {
            b.finish_and_clear();
        }
    }

    pub fn take_warnings(&mut self) -> Vec<String> {
        std::mem::take(&mut self.warnings)
    }
}

/// Whether a run started at `started` is due a bar: only runs that last
/// longer than a moment get one.
fn due(enabled: bool, started: Instant) -> bool {
    enabled && started.elapsed() > Duration::from_millis(300)
}

/// A bar of `total` rows on stderr for a run started at `started`, its
/// message after `what`. The bar's clock starts with the run, and its rate
/// is the rows done over that time: a bar that starts late, or a first
/// step of many rows, never shows the rate of a moment.
fn new_bar(total: u64, started: Instant, what: &str) -> ProgressBar {
    let bar = ProgressBar::with_draw_target(Some(total), ProgressDrawTarget::stderr())
        .with_elapsed(started.elapsed());
    bar.set_style(
        ProgressStyle::with_template(&format!(
            "{{spinner}} {what} {{msg}} [{{elapsed_precise}}] {{wide_bar}} {{rate}}"
        ))
        .map(|s| {
            s.with_key(
                "rate",
                |state: &ProgressState, w: &mut dyn std::fmt::Write| {
                    let _ = w.write_str(&rate(average_rate(
                        state.pos(),
                        state.elapsed().as_secs_f64(),
                    )));
                },
            )
        })
        .unwrap_or_else(|_| ProgressStyle::default_bar()),
    );
    bar
}

/// `cv`'s bar: the rows the folds walked (side by side) against the most
/// they can walk, and the folds done; each fold's warnings on stderr.
pub struct FoldsProgress {
    enabled: bool,
    started: Instant,
    folds: AtomicUsize,
    total: AtomicU64,
    walked: AtomicU64,
    done: AtomicUsize,
    bar: Mutex<Option<ProgressBar>>,
}

impl FoldsProgress {
    pub fn new(enabled: bool) -> Self {
        FoldsProgress {
            enabled,
            started: Instant::now(),
            folds: AtomicUsize::new(0),
            total: AtomicU64::new(0),
            walked: AtomicU64::new(0),
            done: AtomicUsize::new(0),
            bar: Mutex::new(None),
        }
    }

    fn draw(&self) {
        let Ok(mut bar) = self.bar.lock() else {
            return;
        };
        if bar.is_none() && due(self.enabled, self.started) {
            *bar = Some(new_bar(
                self.total.load(Ordering::Relaxed),
                self.started,
                "cv:",
            ));
        }
        if let Some(b) = bar.as_ref() {
            b.set_message(format!(
                "{}/{} folds done",
                self.done.load(Ordering::Relaxed),
                self.folds.load(Ordering::Relaxed)
            ));
            b.set_position(self.walked.load(Ordering::Relaxed));
        }
    }

    pub fn finish(&self) {
        if let Ok(mut bar) = self.bar.lock()
            && let Some(b) = bar.take()
        {
            b.finish_and_clear();
        }
    }
}

impl crate::train::cv::CvWatch for FoldsProgress {
    fn started(&self, folds: usize, rows: u64) {
        self.folds.store(folds, Ordering::Relaxed);
        self.total.store(rows, Ordering::Relaxed);
    }

    fn walked(&self, rows: u64) {
        self.walked.fetch_add(rows, Ordering::Relaxed);
        self.draw();
    }

    fn fold_done(&self, _fold: usize) {
        self.done.fetch_add(1, Ordering::Relaxed);
        self.draw();
    }

    fn warning(&self, fold: usize, message: &str) {
        let line = format!("warning: fold {fold}: {message}");
        match self.bar.lock().ok().as_deref().and_then(Option::as_ref) {
            Some(b) => b.suspend(|| eprintln!("{line}")),
            None => eprintln!("{line}"),
        }
    }
}

/// Rows per second over the whole run: `rows` done in `seconds`.
pub fn average_rate(rows: u64, seconds: f64) -> f64 {
    if seconds > 0.0 {
        rows as f64 / seconds
    } else {
        0.0
    }
}

/// Rows per second as a whole number with thousands separators, such as
/// "115,154,200 rows/s" (indicatif's `{per_sec}` prints every decimal).
pub fn rate(per_sec: f64) -> String {
    let n = if per_sec.is_finite() && per_sec > 0.0 {
        per_sec.round() as u64
    } else {
        0
    };
    format!("{} rows/s", HumanCount(n))
}

impl<F: crate::float::Real> Observer<F> for TrainProgress {
    fn on_progress(&mut self, epoch: usize, position: usize, rows: usize) {
        let done = (epoch as u64) * rows as u64 + position as u64;
        let last = self.last_mistakes;
        let max = self.max_epochs;
        if let Some(bar) = self.bar() {
            bar.set_position(done);
            let tail = last
                .map(|m| format!(", last epoch {}", crate::text::count(m, "mistake")))
                .unwrap_or_default();
            bar.set_message(format!("{}/{max}{tail}", epoch + 1));
        }
    }

    fn on_epoch_end(&mut self, state: &crate::train::State<F>) -> crate::error::Result<()> {
        self.last_mistakes = state.mistakes_per_epoch.last().copied();
        Ok(())
    }

    fn on_warning(&mut self, message: &str) {
        match &self.bar {
            Some(b) => b.suspend(|| eprintln!("warning: {message}")),
            None => eprintln!("warning: {message}"),
        }
        self.warnings.push(message.to_owned());
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_rate_is_a_whole_number_of_rows_per_second() {
        assert_eq!(rate(115_154_200.056_7), "115,154,200 rows/s");
        assert_eq!(rate(999.5), "1,000 rows/s");
        assert_eq!(rate(0.4), "0 rows/s");
        assert_eq!(rate(f64::NAN), "0 rows/s");
        assert_eq!(rate(f64::INFINITY), "0 rows/s");
        // The first frame of a bar that starts 0.3 s into a run that has
        // done 700,000 rows: their average, not the rate of one step.
        assert_eq!(rate(average_rate(700_000, 0.35)), "2,000,000 rows/s");
        assert_eq!(average_rate(5, 0.0), 0.0);
    }
}
