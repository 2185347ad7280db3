//! Progress on a terminal during long training runs; silent otherwise.

use std::time::{Duration, Instant};

use indicatif::{ProgressBar, ProgressDrawTarget, ProgressStyle};

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
            let bar = ProgressBar::with_draw_target(Some(total), ProgressDrawTarget::stderr());
            bar.set_style(
                ProgressStyle::with_template(
                    "{spinner} epoch {msg} [{elapsed_precise}] {wide_bar} {per_sec} rows",
                )
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

impl<F: crate::float::Real> Observer<F> for TrainProgress {
    fn on_progress(&mut self, epoch: usize, position: usize, rows: usize) {
        let done = (epoch as u64) * rows as u64 + position as u64;
        let last = self.last_mistakes;
        let max = self.max_epochs;
        if let Some(bar) = self.bar() {
            bar.set_position(done);
            let tail = last
                .map(|m| format!(", last epoch {m} mistakes"))
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
