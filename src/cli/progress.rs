//! Progress on a terminal during long training runs; silent otherwise.

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
        // Only runs that last longer than a moment get a bar.
        if self.bar.is_none() && self.enabled && self.started.elapsed() > Duration::from_millis(300)
        {
            let total = self.rows.saturating_mul(self.max_epochs as u64);
            // The bar's clock starts with the run, and its rate is the rows
            // done over that time: a bar that starts late, or a first step
            // of many rows, never shows the rate of a moment.
            let bar = ProgressBar::with_draw_target(Some(total), ProgressDrawTarget::stderr())
                .with_elapsed(self.started.elapsed());
            bar.set_style(
                ProgressStyle::with_template(
                    "{spinner} epoch {msg} [{elapsed_precise}] {wide_bar} {rate}",
                )
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
            self.bar = Some(bar);
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
