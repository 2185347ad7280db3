//! Measurements anyone can rerun: the same data trained by every backend in
//! one process, checked bit-identical, with the hardware ceilings measured
//! alongside (host memory-read bandwidth, device copy bandwidth).

use std::time::Instant;

use rayon::prelude::*;
use serde::Serialize;

use crate::data::Dataset;
#[cfg(feature = "gpu")]
use crate::engine::Pass;
use crate::engine::backend::Backend;
#[cfg(feature = "gpu")]
use crate::engine::gpu::GpuEngine;
use crate::engine::gpu::GpuOptions;
use crate::error::{Error, Result};
use crate::float::Real;
use crate::train::{
    CheckedParams, MarginEngine, PassPolicy, ReferenceEngine, Silent, State, Trainer,
};

/// One backend's run.
#[derive(Clone, Debug, Serialize)]
pub struct Run {
    pub backend: String,
    pub engine: String,
    pub passes_policy: PassPolicy,
    pub seconds: f64,
    pub epochs: usize,
    pub seconds_per_epoch: f64,
    pub rows_per_second: f64,
    /// Feature bytes of one epoch over the time per epoch.
    pub gb_per_second: f64,
    /// Engine passes and walk batches: for a GPU, round trips.
    pub passes: u64,
    pub rows_uncertain: u64,
    pub host_dots: u64,
    pub host_certified: u64,
    /// Of `seconds`, the time the loop spent inside the engine's submit and
    /// collect: for the GPU, mostly waiting for the device. The rest is the
    /// host's own work (updates, certified walks, reference dots).
    pub engine_seconds: f64,
    /// A device's kernel dispatches and compute passes, and what its walk
    /// did (decisions, steps, fresh dots, searches).
    pub dispatches: u64,
    pub compute_passes: u64,
    pub walk: crate::engine::WalkCounts,
    /// The walk's decisions per dispatch, and the host's own time (wall time
    /// less the time spent waiting for the engine) per device decision, in
    /// microseconds; 0 without a device walk.
    pub decisions_per_dispatch: f64,
    pub host_us_per_device_decision: f64,
    /// Seconds of each epoch, and how its rows were walked.
    pub epoch_seconds: Vec<f64>,
    pub epoch_modes: Vec<crate::train::EpochModes>,
    /// Bit-identical to the reference (weights, bias, mistakes per epoch).
    pub identical: bool,
    /// How the loop decided its rows (certified, by the host, by the walk).
    pub loop_stats: crate::train::LoopStats,
    pub speedup_vs_reference: f64,
}

/// Device-only measurements: one margin pass over all rows, and the
/// device's own buffer copy, both counting bytes read plus bytes written.
#[derive(Clone, Debug, Serialize)]
pub struct DeviceCeiling {
    pub adapter: String,
    pub copy_gb_per_second: f64,
    pub pass_seconds: f64,
    pub pass_gb_per_second: f64,
    /// The same pass timed on the device alone, without the round trip
    /// (several passes in one submission), if every chunk is resident.
    pub kernel_seconds: Option<f64>,
    pub kernel_gb_per_second: Option<f64>,
    /// Threads per row in the margin kernel.
    pub lanes: u32,
    /// The pass's bandwidth as a percentage of the copy's.
    pub pass_percent_of_copy: f64,
}

/// The most a walk that shares the rows' dots among the host's cores can
/// gain over the textbook loop: one pass of every row's reference dot (no
/// decisions, no updates) on one thread and on every thread, best of three
/// each. On sparse rows the dots wait on memory (each gathers its weights
/// from all over a vector larger than a core's cache), and the cores share
/// that memory, so the pass on every thread may gain far less than the
/// thread count: an epoch of the walk ahead can gain no more than this.
#[derive(Clone, Debug, Serialize)]
pub struct HostDotPass {
    pub one_thread_seconds: f64,
    pub all_threads_seconds: f64,
    /// `one_thread_seconds / all_threads_seconds`.
    pub speedup: f64,
}

/// Everything `perceptron bench` reports.
#[derive(Clone, Debug, Serialize)]
pub struct Report {
    pub data: String,
    pub rows: usize,
    pub features: usize,
    pub sparse: bool,
    pub precision: String,
    pub feature_bytes: usize,
    pub max_epochs: usize,
    pub threads: usize,
    /// Host memory-read bandwidth, all threads, GB/s.
    pub host_read_gb_per_second: f64,
    pub host_dot_pass: HostDotPass,
    pub runs: Vec<Run>,
    pub device: Option<DeviceCeiling>,
    pub all_identical: bool,
}

/// Host memory-read bandwidth: the best of three parallel sums over a
/// buffer far larger than any cache (1 GiB: some virtual machines report
/// last-level caches of 256 MiB and more).
pub fn host_read_bandwidth() -> f64 {
    let n = 256 << 20; // u32s = 1 GiB
    let buf: Vec<u32> = (0..n as u32).collect();
    let mut best = f64::INFINITY;
    let mut sink = 0u64;
    for _ in 0..3 {
        let t0 = Instant::now();
        let s: u64 = buf
            .par_chunks(1 << 16)
            .map(|c| c.iter().fold(0u64, |a, &v| a.wrapping_add(v as u64)))
            .reduce(|| 0, u64::wrapping_add);
        best = best.min(t0.elapsed().as_secs_f64());
        sink = sink.wrapping_add(s);
    }
    std::hint::black_box(sink);
    (n * 4) as f64 / best / 1e9
}

/// Times [`HostDotPass`] on `data`, with weights that are not all zero (a
/// pattern of small values, as the device's ceiling uses).
pub fn host_dot_pass<F: Real>(data: &Dataset<F>, bias: bool) -> HostDotPass {
    let weights: Vec<F> = (0..data.cols() + bias as usize)
        .map(|k| F::from_f64(((k % 7) as f64 - 3.0) * 0.01))
        .collect();
    let dot = |i: usize| crate::engine::reference::dot(&weights, data.features.row(i), bias);
    let best = |pass: &dyn Fn() -> F| {
        let mut best = f64::INFINITY;
        for _ in 0..3 {
            let t0 = Instant::now();
            std::hint::black_box(pass());
            best = best.min(t0.elapsed().as_secs_f64());
        }
        best
    };
    let one = best(&|| {
        let mut s = F::ZERO;
        for i in 0..data.rows() {
            s = s + dot(i);
        }
        s
    });
    let all = best(&|| {
        (0..data.rows())
            .into_par_iter()
            .with_min_len(256)
            .map(dot)
            .reduce(|| F::ZERO, |a, b| a + b)
    });
    HostDotPass {
        one_thread_seconds: one,
        all_threads_seconds: all,
        speedup: one / all.max(1e-12),
    }
}

fn bits<F: Real>(v: &[F]) -> Vec<u64> {
    v.iter().map(|x| x.to_f64().to_bits()).collect()
}

/// Trains `data` with each backend and measures; the reference loop runs
/// first, whether listed or not (`auto` counts as the CPU engine).
pub fn run<F: Real>(
    data: &Dataset<F>,
    params: &CheckedParams,
    which: &[Backend],
    gpu: &GpuOptions,
    data_name: &str,
) -> Result<Report> {
    let dim = data.cols() + params.bias as usize;
    let feature_bytes = data.features.storage_bytes();
    let mut runs: Vec<Run> = Vec::new();
    let mut reference: Option<Baseline> = None;
    let mut device = None;
    let trainer = Trainer::new(params.clone());
    for w in backend_order(which) {
        let mut before = crate::train::EngineStats::default();
        let engine = engine_for(w, data, params, gpu, &mut device, &mut before)?;
        let fit = trainer.fit_on(data, State::initial(dim), engine, &mut Silent)?;
        let versus = compare(&mut reference, &fit);
        runs.push(measure(w, &fit, &before, data, params, versus));
    }
    let all_identical = runs.iter().all(|r| r.identical);
    Ok(Report {
        data: data_name.to_owned(),
        rows: data.rows(),
        features: data.cols(),
        sparse: data.features.is_sparse(),
        precision: F::PRECISION.to_string(),
        feature_bytes,
        max_epochs: params.max_epochs,
        threads: rayon::current_num_threads(),
        host_read_gb_per_second: host_read_bandwidth(),
        host_dot_pass: host_dot_pass(data, params.bias),
        runs,
        device,
        all_identical,
    })
}

/// The backends to run: the reference first, then those asked for once
/// each (`auto` is the CPU's).
fn backend_order(which: &[Backend]) -> Vec<Backend> {
    let mut order: Vec<Backend> = vec![Backend::Reference];
    for w in which {
        let w = if *w == Backend::Auto {
            Backend::Cpu
        } else {
            *w
        };
        if !order.contains(&w) {
            order.push(w);
        }
    }
    order
}

/// The engine of backend `w`. A GPU's ceiling is measured into `device`
/// first, and `before` keeps its counters then, so that the ceiling's
/// passes are not counted as training's.
fn engine_for<'d, F: Real>(
    w: Backend,
    data: &'d Dataset<F>,
    params: &CheckedParams,
    gpu: &GpuOptions,
    device: &mut Option<DeviceCeiling>,
    before: &mut crate::train::EngineStats,
) -> Result<Box<dyn MarginEngine<F> + 'd>> {
    Ok(match w {
        Backend::Reference | Backend::Auto => Box::new(ReferenceEngine),
        Backend::Cpu => Box::new(crate::engine::cpu::CpuEngine::new(data, params.bias)),
        #[cfg(feature = "gpu")]
        Backend::Gpu => {
            let mut opts = gpu.clone();
            opts.adapter.allow_software = true;
            let mut e = GpuEngine::new(data, params.bias, &opts)?;
            *device = Some(device_ceiling(&mut e, data, params.bias)?);
            // The ceiling's passes are not training's.
            *before = e.stats();
            Box::new(e)
        }
        #[cfg(not(feature = "gpu"))]
        Backend::Gpu => {
            let _ = (gpu, device, before);
            return Err(Error::Gpu(crate::engine::gpu::NOT_BUILT.into()));
        }
    })
}

/// The reference run's model (weight bits, mistakes per epoch) and time,
/// which every other run is compared with.
struct Baseline {
    weights: Vec<u64>,
    mistakes: Vec<u64>,
    seconds: f64,
}

/// How a run compares with the reference's.
struct Versus {
    /// The same weights, bit for bit, and mistakes per epoch.
    identical: bool,
    /// The reference's time.
    ref_seconds: f64,
}

/// Compares `fit` with the reference, which the first run (the
/// reference's own) sets.
fn compare<F: Real>(reference: &mut Option<Baseline>, fit: &crate::train::Fit<F>) -> Versus {
    let key = (bits(&fit.weights), fit.mistakes_per_epoch.clone());
    let identical = match reference {
        None => {
            *reference = Some(Baseline {
                weights: key.0.clone(),
                mistakes: key.1.clone(),
                seconds: fit.seconds,
            });
            true
        }
        Some(b) => b.weights == key.0 && b.mistakes == key.1,
    };
    let ref_seconds = reference.as_ref().map(|r| r.seconds).unwrap_or(fit.seconds);
    Versus {
        identical,
        ref_seconds,
    }
}

/// The figures of backend `w`'s run `fit`, less the engine's counters
/// `before` training.
fn measure<F: Real>(
    w: Backend,
    fit: &crate::train::Fit<F>,
    before: &crate::train::EngineStats,
    data: &Dataset<F>,
    params: &CheckedParams,
    versus: Versus,
) -> Run {
    let feature_bytes = data.features.storage_bytes();
    let epochs = fit.epochs().max(1);
    let per_epoch = fit.seconds / epochs as f64;
    let stats = &fit.engine_stats;
    let walk = stats.walk.since(&before.walk);
    let dispatches = stats.dispatches.saturating_sub(before.dispatches);
    let engine_seconds = (stats.seconds - before.seconds).max(0.0);
    let (per_dispatch, host_us) = if walk.decisions > 0 {
        (
            walk.decisions as f64 / dispatches.max(1) as f64,
            1e6 * (fit.seconds - engine_seconds).max(0.0) / walk.decisions as f64,
        )
    } else {
        (0.0, 0.0)
    };
    Run {
        backend: format!("{w:?}").to_lowercase(),
        engine: fit.engines.join(", then "),
        passes_policy: params.passes,
        seconds: fit.seconds,
        epochs: fit.epochs(),
        seconds_per_epoch: per_epoch,
        rows_per_second: data.rows() as f64 / per_epoch,
        gb_per_second: feature_bytes as f64 / per_epoch / 1e9,
        passes: fit.engine_stats.passes.saturating_sub(before.passes),
        rows_uncertain: fit
            .engine_stats
            .rows_uncertain
            .saturating_sub(before.rows_uncertain),
        host_dots: fit.loop_stats.host_dots,
        host_certified: fit.loop_stats.host_certified,
        engine_seconds,
        dispatches,
        compute_passes: stats.compute_passes.saturating_sub(before.compute_passes),
        walk,
        decisions_per_dispatch: per_dispatch,
        host_us_per_device_decision: host_us,
        epoch_seconds: fit.epoch_seconds.clone(),
        epoch_modes: fit.epoch_modes.clone(),
        identical: versus.identical,
        loop_stats: fit.loop_stats.clone(),
        speedup_vs_reference: versus.ref_seconds / fit.seconds.max(1e-12),
    }
}

/// Times one full margin pass and the device's own copy bandwidth.
#[cfg(feature = "gpu")]
fn device_ceiling<F: Real>(
    e: &mut GpuEngine<'_, F>,
    data: &Dataset<F>,
    bias: bool,
) -> Result<DeviceCeiling> {
    let fail = |err: crate::engine::EngineError| Error::Gpu(err.0);
    let weights: Vec<F> = (0..data.cols() + bias as usize)
        .map(|k| F::from_f64(((k % 7) as f64 - 3.0) * 0.01))
        .collect();
    let rows = data.rows().min(e.max_pass());
    let pass = Pass {
        heads: 1,
        start: 0,
        end: rows,
        weights: &weights,
        tau: F::ZERO,
    };
    let mut out = vec![0f32; rows];
    // Warm up, then best of five.
    e.submit(&pass).map_err(fail)?;
    e.collect(&mut out).map_err(fail)?;
    let mut best = f64::INFINITY;
    for _ in 0..5 {
        let t0 = Instant::now();
        e.submit(&pass).map_err(fail)?;
        e.collect(&mut out).map_err(fail)?;
        best = best.min(t0.elapsed().as_secs_f64());
    }
    let bytes = data.features.storage_bytes() as f64 * rows as f64 / data.rows().max(1) as f64
        + rows as f64 * 8.0;
    let copy = e.copy_bandwidth().map_err(Error::Gpu)?;
    let pass_gbs = bytes / best / 1e9;
    // Only the features and norms are read; the slacks are written.
    let kernel = e.pass_kernel_seconds(&weights, rows, 10).ok();
    Ok(DeviceCeiling {
        adapter: e.name(),
        copy_gb_per_second: copy,
        pass_seconds: best,
        pass_gb_per_second: pass_gbs,
        kernel_seconds: kernel,
        kernel_gb_per_second: kernel.map(|k| bytes / k / 1e9),
        lanes: e.lanes(),
        pass_percent_of_copy: 100.0 * pass_gbs / copy,
    })
}

/// The report as a table.
pub fn render(r: &Report) -> String {
    let mut s = format!(
        "data: {} ({} rows x {} features, {}, {}, {} of features), up to {} epochs, {} threads\n",
        r.data,
        r.rows,
        r.features,
        if r.sparse { "sparse" } else { "dense" },
        r.precision,
        crate::text::bytes(r.feature_bytes as u64),
        r.max_epochs,
        r.threads
    );
    s += &ceilings(r);
    s += &runs_table(&r.runs);
    s += "  trips: engine passes and walk batches (for a GPU, round trips); uncertain: rows the engine could not certify; ref dots: reference dot products on the host\n";
    s += "  engine: share of the wall time inside the engine's submit and collect (GPU: waiting); the rest is the host's loop\n";
    s
}

/// The ceilings measured alongside: the host's memory-read bandwidth, its
/// pass of every row's dot, and a device's copy and margin pass.
fn ceilings(r: &Report) -> String {
    let mut s = String::new();
    s += &format!(
        "host memory-read bandwidth: {:.2} GB/s\n",
        r.host_read_gb_per_second
    );
    let p = &r.host_dot_pass;
    s += &format!(
        "every row's reference dot, one pass: {:.3} ms on one thread, {:.3} ms on {} threads ({:.2}x: the most a walk sharing the dots among the cores can gain)\n",
        1e3 * p.one_thread_seconds,
        1e3 * p.all_threads_seconds,
        r.threads,
        p.speedup
    );
    if let Some(d) = &r.device {
        s += &format!(
            "device {}: copy {:.1} GB/s; one full margin pass {:.3} ms = {:.1} GB/s = {:.0}% of copy\n",
            d.adapter,
            d.copy_gb_per_second,
            1e3 * d.pass_seconds,
            d.pass_gb_per_second,
            d.pass_percent_of_copy
        );
        if let (Some(k), Some(g)) = (d.kernel_seconds, d.kernel_gb_per_second) {
            s += &format!(
                "  the pass on the device alone: {:.3} ms = {:.1} GB/s ({} threads a row)\n",
                1e3 * k,
                g,
                d.lanes
            );
        }
    }
    s
}

/// The table of the runs, one line each, then each run's account of how
/// its rows were settled.
fn runs_table(runs: &[Run]) -> String {
    let mut s = String::new();
    s += &format!(
        "\n{:<10} {:>9} {:>7} {:>7} {:>11} {:>12} {:>7} {:>8} {:>9} {:>9} {:>8} {:>9}\n",
        "backend",
        "wall s",
        "engine",
        "epochs",
        "ms/epoch",
        "rows/s",
        "GB/s",
        "trips",
        "uncertain",
        "ref dots",
        "speedup",
        "identical"
    );
    for run in runs {
        s += &format!(
            "{:<10} {:>9.3} {:>6.0}% {:>7} {:>11.3} {:>12.3e} {:>7.2} {:>8} {:>9} {:>9} {:>7.2}x {:>9}\n",
            run.backend,
            run.seconds,
            100.0 * run.engine_seconds / run.seconds.max(1e-12),
            run.epochs,
            1e3 * run.seconds_per_epoch,
            run.rows_per_second,
            run.gb_per_second,
            run.passes,
            run.rows_uncertain,
            run.host_dots,
            run.speedup_vs_reference,
            if run.identical { "yes" } else { "NO" }
        );
    }
    for run in runs {
        let l = &run.loop_stats;
        s += &format!(
            "  {}: {}; rows settled by the engine {} (mistakes {}), by the host's certificate {}, speculative {} (rolled back {})\n",
            run.backend,
            run.engine,
            l.certified_correct + l.certified_mistakes,
            l.certified_mistakes,
            l.host_certified,
            l.walk_speculative,
            l.walk_rollbacks
        );
    }
    s
}
