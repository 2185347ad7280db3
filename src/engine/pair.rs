//! A device's engine with the CPU engine beside it: what `auto` trains
//! with on dense rows when it finds a GPU, so that the machine's cores are
//! not idle while the device serves, and the loop's chooser can price the
//! two engines' walks against each other (and against the host's own).
//!
//! The pair is one engine to the loop: whichever side serves answers every
//! call, and the loop switches sides only with nothing in flight (see
//! [`MarginEngine::serve_cores`]). Neither side decides anything, so which
//! one served which rows cannot change a result.
//!
//! The device may still be starting on a thread of its own when training
//! begins ([`EnginePair::starting`]): until it is ready the cores serve,
//! and the loop is told the device is not ready
//! ([`MarginEngine::device_ready`]). The pair never changes sides on its
//! own: the device, once arrived, serves only when the loop asks for it.

use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::mpsc::{Receiver, TryRecvError};
use std::time::Instant;

use crate::engine::{EngineError, EngineStats, MarginEngine, Pass, Walker};
use crate::error::Result;
use crate::float::Real;

/// A device's engine as the thread that starts it hands it over.
pub type Started<'d, F> = Result<Box<dyn MarginEngine<F> + Send + 'd>>;

/// The device's side of the pair.
enum Device<'d, F: Real> {
    Ready(Box<dyn MarginEngine<F> + 'd>),
    /// Starting on another thread, since the instant given.
    Starting(Receiver<Started<'d, F>>, Instant),
    /// Its start failed: the cores serve alone.
    Failed,
}

/// The device's engine and the CPU engine, one of them serving.
pub struct EnginePair<'d, F: Real> {
    device: Device<'d, F>,
    /// The device's engine's name (known before it is ready).
    device_name: String,
    cores: Box<dyn MarginEngine<F> + 'd>,
    /// Whether the CPU engine serves now (else the device's).
    on_cores: bool,
    /// Seconds the device took to start beside the cores, once it has
    /// (none when its start failed).
    start_seconds: f64,
    notice: Option<String>,
    /// Set when the pair is dropped (the run over, or the pair replaced by
    /// the fallback): a device still starting is then of no use.
    cancel: Option<&'d AtomicBool>,
}

impl<'d, F: Real> EnginePair<'d, F> {
    /// The pair, the device serving first.
    pub fn new(
        device: Box<dyn MarginEngine<F> + 'd>,
        cores: Box<dyn MarginEngine<F> + 'd>,
    ) -> Self {
        EnginePair {
            device_name: device.name(),
            device: Device::Ready(device),
            cores,
            on_cores: false,
            start_seconds: 0.0,
            notice: None,
            cancel: None,
        }
    }

    /// The pair, the cores serving while the device named `device_name`
    /// starts: it arrives through `started`, unless the start sees
    /// `cancel`, which dropping the pair sets.
    pub fn starting(
        device_name: String,
        started: Receiver<Started<'d, F>>,
        cores: Box<dyn MarginEngine<F> + 'd>,
        cancel: &'d AtomicBool,
    ) -> Self {
        EnginePair {
            device: Device::Starting(started, Instant::now()),
            device_name,
            cores,
            on_cores: true,
            start_seconds: 0.0,
            notice: None,
            cancel: Some(cancel),
        }
    }

    /// Takes the device if it has arrived; a failed start leaves the cores
    /// alone, and says why once.
    fn poll(&mut self) {
        let Device::Starting(started, since) = &self.device else {
            return;
        };
        let arrived = match started.try_recv() {
            Err(TryRecvError::Empty) => return,
            Ok(Ok(engine)) => Ok(engine),
            Ok(Err(e)) => Err(e.to_string()),
            Err(TryRecvError::Disconnected) => Err("its start ended without an engine".into()),
        };
        let seconds = since.elapsed().as_secs_f64();
        self.device = match arrived {
            Ok(engine) => {
                self.start_seconds = seconds;
                Device::Ready(engine)
            }
            Err(why) => {
                self.notice = Some(format!(
                    "{} could not be started beside the CPU engine ({why}); the CPU engine \
                     trains alone (the result is the same)",
                    self.device_name
                ));
                Device::Failed
            }
        };
    }

    fn serving(&self) -> &dyn MarginEngine<F> {
        match &self.device {
            Device::Ready(device) if !self.on_cores => device.as_ref(),
            _ => self.cores.as_ref(),
        }
    }

    fn serving_mut(&mut self) -> &mut dyn MarginEngine<F> {
        match &mut self.device {
            Device::Ready(device) if !self.on_cores => device.as_mut(),
            _ => self.cores.as_mut(),
        }
    }
}

impl<F: Real> Drop for EnginePair<'_, F> {
    fn drop(&mut self) {
        if let Some(cancel) = self.cancel {
            cancel.store(true, Ordering::Relaxed);
        }
    }
}

impl<F: Real> MarginEngine<F> for EnginePair<'_, F> {
    /// Both names, the device's first (`gpu: ADAPTER + cpu (N threads)`);
    /// the CPU engine's alone once the device's start has failed.
    fn name(&self) -> String {
        match self.device {
            Device::Failed => self.cores.name(),
            _ => format!("{} + {}", self.device_name, self.cores.name()),
        }
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

    /// Both sides' counters, summed, and the device's start beside the
    /// cores.
    fn stats(&self) -> EngineStats {
        let mut total = self.cores.stats();
        if let Device::Ready(device) = &self.device {
            total.add(&device.stats());
        }
        total.start_beside_seconds += self.start_seconds;
        total
    }

    fn walker(&mut self) -> Option<&mut dyn Walker<F>> {
        self.serving_mut().walker()
    }

    fn walks_like_the_host_ahead(&self) -> bool {
        self.serving().walks_like_the_host_ahead()
    }

    fn take_notice(&mut self) -> Option<String> {
        self.poll();
        if let Some(notice) = self.notice.take() {
            return Some(notice);
        }
        match &mut self.device {
            Device::Ready(device) => device.take_notice(),
            _ => None,
        }
        .or_else(|| self.cores.take_notice())
    }

    fn has_cores_beside(&self) -> bool {
        true
    }

    fn device_ready(&mut self) -> bool {
        self.poll();
        matches!(self.device, Device::Ready(_))
    }

    /// The cores serve whatever is asked until the device is ready.
    fn serve_cores(&mut self, cores: bool) {
        self.on_cores = cores || !matches!(self.device, Device::Ready(_));
    }

    fn serves_cores(&self) -> bool {
        self.on_cores
    }
}
