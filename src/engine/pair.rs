//! A device's engine with the CPU engine beside it: what `auto` trains
//! with on dense rows when it finds a GPU, so that the machine's cores are
//! not idle while the device serves, and the loop's chooser can price the
//! two engines' walks against each other (and against the host's own).
//!
//! The pair is one engine to the loop: whichever side serves answers every
//! call, and the loop switches sides only with nothing in flight (see
//! [`MarginEngine::serve_cores`]). Neither side decides anything, so which
//! one served which rows cannot change a result.

use crate::engine::{EngineError, EngineStats, MarginEngine, Pass, Walker};
use crate::float::Real;

/// The device's engine and the CPU engine, one of them serving.
pub struct EnginePair<'d, F: Real> {
    device: Box<dyn MarginEngine<F> + 'd>,
    cores: Box<dyn MarginEngine<F> + 'd>,
    /// Whether the CPU engine serves now (else the device's).
    on_cores: bool,
}

impl<'d, F: Real> EnginePair<'d, F> {
    /// The pair, the device serving first.
    pub fn new(
        device: Box<dyn MarginEngine<F> + 'd>,
        cores: Box<dyn MarginEngine<F> + 'd>,
    ) -> Self {
        EnginePair {
            device,
            cores,
            on_cores: false,
        }
    }

    fn serving(&self) -> &dyn MarginEngine<F> {
        if self.on_cores {
            self.cores.as_ref()
        } else {
            self.device.as_ref()
        }
    }

    fn serving_mut(&mut self) -> &mut dyn MarginEngine<F> {
        if self.on_cores {
            self.cores.as_mut()
        } else {
            self.device.as_mut()
        }
    }
}

impl<F: Real> MarginEngine<F> for EnginePair<'_, F> {
    /// Both names, the device's first (`gpu: ADAPTER + cpu (N threads)`).
    fn name(&self) -> String {
        format!("{} + {}", self.device.name(), self.cores.name())
    }

    fn preferred_window(&self, mistake_rate: f64) -> usize {
        self.serving().preferred_window(mistake_rate)
    }

    fn max_pass(&self) -> usize {
        self.serving().max_pass()
    }

    fn submit(&mut self, pass: &Pass<'_, F>) -> Result<(), EngineError> {
        self.serving_mut().submit(pass)
    }

    fn collect(&mut self, slack: &mut [f32]) -> Result<(), EngineError> {
        self.serving_mut().collect(slack)
    }

    /// Both sides' counters, summed.
    fn stats(&self) -> EngineStats {
        let mut total = self.device.stats();
        total.add(&self.cores.stats());
        total
    }

    fn walker(&mut self) -> Option<&mut dyn Walker<F>> {
        self.serving_mut().walker()
    }

    fn walks_like_the_host_ahead(&self) -> bool {
        self.serving().walks_like_the_host_ahead()
    }

    fn take_notice(&mut self) -> Option<String> {
        self.device
            .take_notice()
            .or_else(|| self.cores.take_notice())
    }

    fn has_cores_beside(&self) -> bool {
        true
    }

    fn serve_cores(&mut self, cores: bool) {
        self.on_cores = cores;
    }

    fn serves_cores(&self) -> bool {
        self.on_cores
    }
}
