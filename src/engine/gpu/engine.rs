//! The GPU engine: certified slacks for a window of rows in one round trip.
//!
//! Per pass the host uploads the weights and the bound constants; each data
//! chunk gets one dispatch; the slacks (one f32 per row) come back through a
//! ring of readback buffers, so a pass can be in flight while the host
//! walks the previous one.
//!
//! Data lives on the device in chunks that each fit one storage binding.
//! Chunks that do not fit the memory budget, or whose allocation fails, are
//! streamed: uploaded into a shared staging chunk right before their
//! dispatch, every pass. So any dataset that fits in host memory trains; the
//! resident part runs at device bandwidth, the streamed part at bus speed.

use std::collections::VecDeque;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::{Duration, Instant};

use wgpu::util::DeviceExt;

use super::chunks::{
    self, ChunkBuffers, aligned_buffer, allocate_staging, bind, bytes_of, padded, stream_into,
    try_upload,
};
use super::context::{self, Gpu, MapResult};
use super::layout::{self, ChunkPlan, Params};
use super::options::GpuOptions;
use super::shaders::{self, Kernel};
use super::walk::GpuWalk;
use super::walk_plan;
use crate::data::{Dataset, Features};
use crate::engine::certify::Bound;
use crate::engine::{
    BatchLimits, EngineError, EngineStats, MarginEngine, Pass, WalkBatch, WalkStart, Walker,
};
use crate::error::{Error, Result};
use crate::float::{Precision, Real};

struct Chunk {
    plan: ChunkPlan,
    params: wgpu::Buffer,
    bind_group: wgpu::BindGroup,
    /// False when the chunk's data is uploaded into the staging chunk each pass.
    resident: bool,
    /// The chunk's rows on the device, when resident (for the walk).
    rows: Option<ChunkBuffers>,
}

/// Whether the walk has been set up.
enum WalkSetup<F: Real> {
    NotTried,
    Ready(Box<GpuWalk<F>>),
    /// Not possible here (streamed data, or setting it up failed).
    Unavailable,
}

/// A readback buffer and the pass it is receiving, if any.
struct Readback {
    buffer: wgpu::Buffer,
    busy: bool,
}

/// A submitted pass: which readback holds it, how long, and its submission.
struct Pending {
    slot: usize,
    rows: usize,
    index: wgpu::SubmissionIndex,
    mapped: MapResult,
}

/// Readback buffers: passes in flight at once.
const RING: usize = 3;

/// Entries a walk batch may record at most, unless set
/// (`GpuOptions::walk_iterations`).
const DEFAULT_WALK_CAPACITY: usize = 2048;

/// Certified slacks on a GPU adapter.
pub struct GpuEngine<'d, F: Real> {
    gpu: Gpu,
    data: &'d Dataset<F>,
    bias: bool,
    l1_max: f64,
    lanes: u32,
    pipeline: wgpu::ComputePipeline,
    chunks: Vec<Chunk>,
    staging: Option<ChunkBuffers>,
    weights: wgpu::Buffer,
    bound: wgpu::Buffer,
    slack: wgpu::Buffer,
    ring: Vec<Readback>,
    pending: VecDeque<Pending>,
    max_pass: usize,
    max_heads: usize,
    fail_at_pass: Option<u64>,
    stats: EngineStats,
    name: String,
    walk: WalkSetup<F>,
    /// A note for the user not yet handed over.
    notice: Option<String>,
    no_walk: bool,
    walk_capacity: usize,
    walk_waste: u32,
}

impl<'d, F: Real> GpuEngine<'d, F> {
    /// Opens an adapter and uploads `data`.
    pub fn new(data: &'d Dataset<F>, bias: bool, options: &GpuOptions) -> Result<Self> {
        let never = AtomicBool::new(false);
        Self::upload(Self::open(options)?, data, bias, options, &never)
    }

    /// Opens the adapter `options` ask for, with the features `F` needs.
    pub fn open(options: &GpuOptions) -> Result<Gpu> {
        let features = if F::PRECISION == Precision::F64 {
            wgpu::Features::SHADER_F64
        } else {
            wgpu::Features::empty()
        };
        context::open_nth(&options.adapter, options.spread, features)
    }

    /// [`GpuEngine::new`] on a device already opened, on a thread of its
    /// own while the CPU engine trains ([`crate::engine::pair`]): the
    /// data's upload, then the walk's pipelines, which a first walk would
    /// otherwise compile in the loop's time (355 ms on lavapipe). Gives up
    /// between chunks once `cancel` is set: a run that ends first has no
    /// use for the device.
    pub fn start_beside(
        gpu: Gpu,
        data: &'d Dataset<F>,
        bias: bool,
        options: &GpuOptions,
        cancel: &AtomicBool,
    ) -> Result<Self> {
        let mut engine = Self::upload(gpu, data, bias, options, cancel)?;
        if !engine.no_walk && !cancel.load(Ordering::Relaxed) {
            engine.setup_walk();
        }
        Ok(engine)
    }

    /// Uploads `data` to an opened device, giving up between chunks once
    /// `cancel` is set.
    fn upload(
        gpu: Gpu,
        data: &'d Dataset<F>,
        bias: bool,
        options: &GpuOptions,
        cancel: &AtomicBool,
    ) -> Result<Self> {
        let name = format!("gpu: {}", gpu.describe());
        let (binding, chunk_limit) = storage_limits(&gpu, options);
        let max_heads = check_fits(data, bias, binding)?;
        let plans = layout::plan(&data.features, chunk_limit).map_err(|bytes| {
            Error::Gpu(format!(
                "one row needs {bytes} bytes, more than the adapter's largest storage binding ({binding} bytes)"
            ))
        })?;
        let (kernel, lanes) = kernel_and_lanes(data, &gpu, options)?;
        let pipeline = margin_pipeline::<F>(&gpu.device, kernel, lanes);
        let max_pass = data
            .rows()
            .clamp(1, ((binding / 4) as usize / max_heads).clamp(1, 1 << 24));
        let shared = PassBuffers::new::<F>(
            &gpu.device,
            data.cols() + bias as usize,
            max_heads,
            max_pass,
        );
        let facts = data.facts(bias);
        let layout = pipeline.get_bind_group_layout(0);
        let mut residency = Residency {
            budget: options.memory_budget.unwrap_or(u64::MAX),
            staging: None,
            chunk_limit,
        };
        let mut chunks = Vec::with_capacity(plans.len());
        for plan in plans {
            if cancel.load(Ordering::Relaxed) {
                return Err(Error::Gpu(format!("{name}: the start was cancelled")));
            }
            chunks.push(residency.chunk(&gpu, data, &facts.norms, &layout, &shared, plan)?);
        }
        if let Some(e) = gpu.take_failure() {
            return Err(Error::Gpu(format!("setting up {name} failed: {e}")));
        }
        Ok(GpuEngine {
            name,
            gpu,
            data,
            bias,
            l1_max: facts.l1_max,
            lanes,
            pipeline,
            chunks,
            staging: residency.staging,
            weights: shared.weights,
            bound: shared.bound,
            slack: shared.slack,
            ring: shared.ring,
            pending: VecDeque::new(),
            max_pass,
            max_heads,
            fail_at_pass: options.fail_at_pass,
            stats: EngineStats::default(),
            walk: WalkSetup::NotTried,
            notice: None,
            no_walk: options.no_walk,
            walk_capacity: options
                .walk_iterations
                .unwrap_or(DEFAULT_WALK_CAPACITY)
                .max(1),
            walk_waste: options.walk_waste.unwrap_or(walk_plan::DEFAULT_WASTE),
        })
    }

    /// The device's buffer-to-buffer copy bandwidth in GB/s, counting bytes
    /// read plus bytes written: the best of five submissions of eight
    /// copies of 256 MiB each (or the largest buffer the adapter allows, if
    /// smaller), back and forth, so the submission's latency is spread over
    /// 4 GiB of traffic. On an H100 this read 802 GB/s where one copy a
    /// submission read 747.
    pub fn copy_bandwidth(&self) -> std::result::Result<f64, String> {
        const COPIES: u64 = 8;
        let device = &self.gpu.device;
        let size = (256u64 << 20)
            .min(self.gpu.limits.max_buffer_size / 2)
            .next_multiple_of(4);
        let make = |label| {
            device.create_buffer(&wgpu::BufferDescriptor {
                label: Some(label),
                size,
                usage: wgpu::BufferUsages::COPY_SRC | wgpu::BufferUsages::COPY_DST,
                mapped_at_creation: false,
            })
        };
        let (a, b) = (make("copy a"), make("copy b"));
        let mut best = f64::INFINITY;
        for round in 0..6 {
            let mut enc = device.create_command_encoder(&Default::default());
            for k in 0..COPIES {
                let (from, to) = if k % 2 == 0 { (&a, &b) } else { (&b, &a) };
                enc.copy_buffer_to_buffer(from, 0, to, 0, size);
            }
            let t0 = Instant::now();
            let index = self.gpu.queue.submit([enc.finish()]);
            device
                .poll(wgpu::PollType::Wait {
                    submission_index: Some(index),
                    timeout: Some(Duration::from_secs(60)),
                })
                .map_err(|e| format!("waiting for the GPU failed: {e}"))?;
            if round > 0 {
                best = best.min(t0.elapsed().as_secs_f64());
            }
        }
        if let Some(e) = self.gpu.take_failure() {
            return Err(e);
        }
        Ok(2.0 * (COPIES * size) as f64 / best / 1e9)
    }

    /// Seconds the device spends on one margin pass over rows `0..rows`,
    /// apart from the round trip: `repeats` passes recorded in one
    /// submission, timed together (the best of three submissions). Every
    /// chunk must be resident.
    pub fn pass_kernel_seconds(
        &mut self,
        weights: &[F],
        rows: usize,
        repeats: usize,
    ) -> std::result::Result<f64, String> {
        if self.streamed_chunks() > 0 {
            return Err("some data is streamed".into());
        }
        let queue = &self.gpu.queue;
        let device = &self.gpu.device;
        let bound = Bound::<F>::for_weights(weights, self.l1_max);
        queue.write_buffer(&self.weights, 0, &padded(bytes_of(weights)));
        queue.write_buffer(
            &self.bound,
            0,
            bytes_of(&[bound.rel, bound.abs, bound.flush, bound.tau]),
        );
        let max_groups = self.gpu.limits.max_compute_workgroups_per_dimension;
        let rows_per_group = (256 / self.lanes) as usize;
        let mut dispatches = Vec::new();
        for chunk in &self.chunks {
            let (c0, c1) = (chunk.plan.rows.start, chunk.plan.rows.end.min(rows));
            if c0 >= c1 {
                continue;
            }
            let params = Params {
                row_begin: 0,
                row_count: (c1 - c0) as u32,
                pos_offset: c0 as u32,
                cols: self.data.cols() as u32,
                bias: self.bias as u32,
                heads: 1,
                _pad: [0; 2],
            };
            queue.write_buffer(&chunk.params, 0, bytemuck::bytes_of(&params));
            let groups = ((c1 - c0).div_ceil(rows_per_group) as u32).min(max_groups);
            dispatches.push((&chunk.bind_group, groups));
        }
        let mut best = f64::INFINITY;
        for _ in 0..3 {
            let mut encoder = device.create_command_encoder(&Default::default());
            for _ in 0..repeats {
                let mut cp = encoder.begin_compute_pass(&Default::default());
                cp.set_pipeline(&self.pipeline);
                for (bind_group, groups) in &dispatches {
                    cp.set_bind_group(0, *bind_group, &[]);
                    cp.dispatch_workgroups(*groups, 1, 1);
                }
            }
            let t0 = Instant::now();
            let index = queue.submit([encoder.finish()]);
            device
                .poll(wgpu::PollType::Wait {
                    submission_index: Some(index),
                    timeout: Some(Duration::from_secs(60)),
                })
                .map_err(|e| format!("waiting for the GPU failed: {e}"))?;
            best = best.min(t0.elapsed().as_secs_f64() / repeats.max(1) as f64);
        }
        if let Some(e) = self.gpu.take_failure() {
            return Err(e);
        }
        Ok(best)
    }

    /// Threads that share a row in the kernels (1 on CPU-type adapters).
    pub fn lanes(&self) -> u32 {
        self.lanes
    }

    /// Chunks that are streamed every pass (0 when all data is resident).
    pub fn streamed_chunks(&self) -> usize {
        self.chunks.iter().filter(|c| !c.resident).count()
    }

    pub fn chunk_count(&self) -> usize {
        self.chunks.len()
    }

    /// Records and submits the dispatches of `pass`.
    fn dispatch(&mut self, pass: &Pass<'_, F>) -> std::result::Result<Pending, String> {
        let slot = self
            .ring
            .iter()
            .position(|r| !r.busy)
            .ok_or("too many passes in flight")?;
        let queue = &self.gpu.queue;
        let device = &self.gpu.device;
        let bound = Bound::<F>::for_weights(pass.weights, self.l1_max).with_margin(pass.tau);
        queue.write_buffer(&self.weights, 0, &padded(bytes_of(pass.weights)));
        queue.write_buffer(
            &self.bound,
            0,
            bytes_of(&[bound.rel, bound.abs, bound.flush, bound.tau]),
        );
        let rows = pass.slots();
        let mut encoder = device.create_command_encoder(&Default::default());
        let max_groups = self.gpu.limits.max_compute_workgroups_per_dimension;
        let rows_per_group = (256 / self.lanes) as usize;
        for chunk in &self.chunks {
            let (c0, c1) = (chunk.plan.rows.start, chunk.plan.rows.end);
            let (lo, hi) = (pass.start.max(c0), pass.end.min(c1));
            if lo >= hi {
                continue;
            }
            let params = Params {
                row_begin: (lo - c0) as u32,
                row_count: (hi - lo) as u32,
                pos_offset: (lo - pass.start) as u32,
                cols: self.data.cols() as u32,
                bias: self.bias as u32,
                heads: pass.heads as u32,
                _pad: [0; 2],
            };
            queue.write_buffer(&chunk.params, 0, bytemuck::bytes_of(&params));
            if !chunk.resident {
                // Submit what precedes, then replace the staging contents.
                let done = std::mem::replace(
                    &mut encoder,
                    device.create_command_encoder(&Default::default()),
                );
                queue.submit([done.finish()]);
                if let Some(staging) = &self.staging {
                    stream_into(queue, staging, &self.data.features, &chunk.plan);
                }
            }
            let groups = ((hi - lo) * pass.heads).div_ceil(rows_per_group) as u32;
            self.stats.dispatches += 1;
            self.stats.compute_passes += 1;
            {
                let mut cp = encoder.begin_compute_pass(&Default::default());
                cp.set_pipeline(&self.pipeline);
                cp.set_bind_group(0, &chunk.bind_group, &[]);
                cp.dispatch_workgroups(groups.min(max_groups), 1, 1);
            }
            if !chunk.resident {
                let done = std::mem::replace(
                    &mut encoder,
                    device.create_command_encoder(&Default::default()),
                );
                queue.submit([done.finish()]);
            }
        }
        let bytes = (rows as u64 * 4).max(4);
        let readback = &self.ring[slot].buffer;
        encoder.copy_buffer_to_buffer(&self.slack, 0, readback, 0, bytes);
        let index = queue.submit([encoder.finish()]);
        let mapped = context::map_for_reading(readback.slice(0..bytes));
        self.ring[slot].busy = true;
        Ok(Pending {
            slot,
            rows,
            index,
            mapped,
        })
    }

    /// Waits for `p` and copies its slacks out.
    fn receive(&mut self, p: Pending, out: &mut [f32]) -> std::result::Result<u64, String> {
        if out.len() != p.rows {
            return Err(format!(
                "pass of {} rows collected into {}",
                p.rows,
                out.len()
            ));
        }
        context::wait_mapped(
            &self.gpu.device,
            &self.gpu.failure,
            p.index,
            &p.mapped,
            "results",
        )?;
        let readback = &self.ring[p.slot];
        let bytes = (p.rows as u64 * 4).max(4);
        let uncertain = {
            let view = readback
                .buffer
                .slice(0..bytes)
                .get_mapped_range()
                .map_err(|e| format!("reading results back failed: {e}"))?;
            let got: &[f32] = bytemuck::cast_slice(&view);
            out.copy_from_slice(&got[..p.rows]);
            out.iter().filter(|r| **r == 0.0).count() as u64
        };
        readback.buffer.unmap();
        self.ring[p.slot].busy = false;
        Ok(uncertain)
    }
}

impl<F: Real> GpuEngine<'_, F> {
    /// Sets up the walk the first time it is asked for: every chunk must be
    /// resident (streamed chunks change between passes).
    fn setup_walk(&mut self) {
        if !matches!(self.walk, WalkSetup::NotTried) {
            return;
        }
        let rows: Option<Vec<_>> = self
            .chunks
            .iter()
            .map(|c| Some((c.plan.clone(), c.rows.as_ref()?)))
            .collect();
        let Some(rows) = rows else {
            self.walk = WalkSetup::Unavailable;
            return;
        };
        self.walk = match GpuWalk::new(
            &self.gpu.device,
            &self.gpu.queue,
            self.gpu.failure.clone(),
            &self.gpu.limits,
            self.data,
            self.bias,
            self.lanes,
            self.walk_capacity,
            self.walk_waste,
            &rows,
        ) {
            Ok(w) => WalkSetup::Ready(Box::new(w)),
            Err(e) => {
                self.notice = Some(format!(
                    "{}: the GPU walk could not be set up ({e}); passes over windows are used instead (the result is unaffected)",
                    self.name
                ));
                WalkSetup::Unavailable
            }
        };
    }

    fn walk_mut(&mut self) -> Result<&mut GpuWalk<F>, EngineError> {
        match &mut self.walk {
            WalkSetup::Ready(w) => Ok(w),
            _ => Err(EngineError(format!(
                "{}: the walk is not set up",
                self.name
            ))),
        }
    }

    /// The fault-injection hook, counted in round trips (passes and walk
    /// batches alike).
    fn injected_failure(&self) -> Result<(), EngineError> {
        if self.fail_at_pass == Some(self.stats.passes) {
            return Err(EngineError(format!(
                "{}: injected device failure at pass {} (PERCEPTRON_GPU_FAIL_AT_PASS)",
                self.name, self.stats.passes
            )));
        }
        Ok(())
    }
}

impl<F: Real> Walker<F> for GpuEngine<'_, F> {
    fn begin(&mut self, start: &WalkStart<'_, F>) -> Result<(), EngineError> {
        self.injected_failure()?;
        let name = self.name.clone();
        self.walk_mut()?
            .begin(start)
            .map_err(|e| EngineError(format!("{name}: {e}")))
    }

    fn next(&mut self, limits: BatchLimits) -> Result<WalkBatch<F>, EngineError> {
        self.injected_failure()?;
        let name = self.name.clone();
        let walk = self.walk_mut()?;
        let before = walk.seconds;
        // The horizon is left alone: outside a trial the walk goes on
        // between the loop's stretches, and batches cut at each stretch's
        // end would empty the pipeline there.
        let batch = walk
            .next_batch(limits.deadline)
            .map_err(|e| EngineError(format!("{name}: {e}")))?;
        let waited = walk.seconds - before;
        self.stats.passes += 1;
        self.stats.rows_evaluated += (batch.end - batch.start) as u64;
        self.stats.rows_uncertain +=
            batch.decisions.iter().filter(|d| d.speculative).count() as u64;
        self.stats.seconds += waited;
        Ok(batch)
    }

    /// A trial's batches are sized to its deadline (see
    /// [`super::walk_plan::BatchPlan::next_within`]).
    fn keeps_deadlines(&self) -> bool {
        true
    }

    fn cancel(&mut self) -> Result<(), EngineError> {
        let name = self.name.clone();
        match &mut self.walk {
            WalkSetup::Ready(w) => w.cancel().map_err(|e| EngineError(format!("{name}: {e}"))),
            _ => Ok(()),
        }
    }
}

impl<F: Real> MarginEngine<F> for GpuEngine<'_, F> {
    fn name(&self) -> String {
        self.name.clone()
    }

    fn preferred_window(&self, mistake_rate: f64) -> usize {
        // Enough rows per round trip to hide its latency, few enough updates
        // per window that drift leaves most rows settled.
        ((256.0 / mistake_rate.max(1e-9)) as usize)
            .max(1 << 14)
            .min(self.max_pass)
    }

    fn max_pass(&self) -> usize {
        self.max_pass
    }

    fn submit(&mut self, pass: &Pass<'_, F>) -> std::result::Result<(), EngineError> {
        let t0 = Instant::now();
        self.injected_failure()?;
        if pass.heads > self.max_heads {
            return Err(EngineError(format!(
                "{}: {} heads requested; the engine was set up for {}",
                self.name, pass.heads, self.max_heads
            )));
        }
        if pass.len() > self.max_pass {
            return Err(EngineError(format!(
                "{}: pass of {} rows exceeds {}",
                self.name,
                pass.len(),
                self.max_pass
            )));
        }
        let p = self
            .dispatch(pass)
            .map_err(|e| EngineError(format!("{}: {e}", self.name)))?;
        self.pending.push_back(p);
        self.stats.passes += 1;
        self.stats.rows_evaluated += pass.len() as u64;
        self.stats.seconds += t0.elapsed().as_secs_f64();
        Ok(())
    }

    fn collect(&mut self, slack: &mut [f32]) -> std::result::Result<(), EngineError> {
        let t0 = Instant::now();
        let p = self
            .pending
            .pop_front()
            .ok_or_else(|| EngineError("collect without a submitted pass".into()))?;
        let uncertain = self
            .receive(p, slack)
            .map_err(|e| EngineError(format!("{}: {e}", self.name)))?;
        self.stats.rows_uncertain += uncertain;
        self.stats.seconds += t0.elapsed().as_secs_f64();
        Ok(())
    }

    fn stats(&self) -> EngineStats {
        let mut stats = self.stats.clone();
        if let WalkSetup::Ready(w) = &self.walk {
            stats.walk = w.counts;
            stats.dispatches += w.dispatches;
            stats.compute_passes += w.counts.batches;
        }
        stats
    }

    fn walker(&mut self) -> Option<&mut dyn Walker<F>> {
        if self.no_walk {
            return None;
        }
        self.setup_walk();
        match self.walk {
            WalkSetup::Ready(_) => Some(self),
            _ => None,
        }
    }

    fn take_notice(&mut self) -> Option<String> {
        self.notice.take()
    }
}

/// The rows and the weights fit the GPU backend and the adapter's largest
/// storage binding (`binding` bytes); returns the most heads a pass may
/// carry: one per class for one-vs-rest, which binds every class's
/// weights at once.
/// The adapter's largest storage binding, and the size of a data chunk
/// under it (at most 1 GiB, or [`GpuOptions::chunk_bytes`]).
fn storage_limits(gpu: &Gpu, options: &GpuOptions) -> (u64, u64) {
    let binding = gpu
        .limits
        .max_storage_buffer_binding_size
        .min(gpu.limits.max_buffer_size);
    let chunk_limit = binding
        .min(1 << 30)
        .min(options.chunk_bytes.unwrap_or(u64::MAX))
        .max(64);
    (binding, chunk_limit)
}

/// Where the data chunks' rows go: the device memory left to keep chunks
/// resident, and the one staging buffer (of `chunk_limit` bytes) that
/// every streamed chunk shares.
struct Residency {
    budget: u64,
    staging: Option<ChunkBuffers>,
    chunk_limit: u64,
}

impl Residency {
    /// The chunk of `plan`: its rows placed, and bound with the shared
    /// buffers.
    fn chunk<F: Real>(
        &mut self,
        gpu: &Gpu,
        data: &Dataset<F>,
        norms: &[f32],
        layout: &wgpu::BindGroupLayout,
        shared: &PassBuffers,
        plan: ChunkPlan,
    ) -> Result<Chunk> {
        let resident = self.place(gpu, &data.features, &plan)?;
        let Some(rows) = resident.as_ref().or(self.staging.as_ref()) else {
            return Err(Error::Gpu("no buffer for a data chunk".into()));
        };
        let bind_group = chunk_bind_group(&gpu.device, layout, data, norms, &plan, shared, rows);
        Ok(Chunk {
            params: bind_group.1,
            bind_group: bind_group.0,
            plan,
            resident: resident.is_some(),
            rows: resident,
        })
    }

    /// Uploads the chunk's rows while the budget lasts (and the device has
    /// room), else readies the staging buffer; returns the resident rows.
    fn place<F: Real>(
        &mut self,
        gpu: &Gpu,
        features: &Features<F>,
        plan: &ChunkPlan,
    ) -> Result<Option<ChunkBuffers>> {
        let bytes = chunks::chunk_bytes(features, plan);
        let resident = if bytes <= self.budget {
            try_upload(gpu, features, plan)
        } else {
            None
        };
        if resident.is_some() {
            self.budget -= bytes;
        } else {
            // Once one chunk is streamed, the later ones are too: the
            // budget is spent.
            self.budget = 0;
            if self.staging.is_none() {
                self.staging = Some(allocate_staging(gpu, features, self.chunk_limit)?);
            }
        }
        Ok(resident)
    }
}

fn check_fits<F: Real>(data: &Dataset<F>, bias: bool, binding: u64) -> Result<usize> {
    let elem = std::mem::size_of::<F>() as u64;
    let dim = data.cols() + bias as usize;
    if data.rows() > (u32::MAX / 2) as usize {
        return Err(Error::Gpu(format!(
            "{} rows is more than the GPU backend supports (2^31)",
            data.rows()
        )));
    }
    let max_heads = if data.class_ids.is_empty() {
        1
    } else {
        data.classes.len().max(1)
    };
    if (dim * max_heads) as u64 * elem > binding {
        return Err(Error::Gpu(format!(
            "the model has {} weights ({dim} per class for {max_heads} classes), more than fit the adapter's largest storage binding of {binding} bytes",
            dim * max_heads
        )));
    }
    Ok(max_heads)
}

/// The margin kernel for the rows' layout, and the lanes that share a row.
fn kernel_and_lanes<F: Real>(
    data: &Dataset<F>,
    gpu: &Gpu,
    options: &GpuOptions,
) -> Result<(Kernel, u32)> {
    // Terms a lane group reads per row: vectors of four, where the rows
    // are read so.
    let (kernel, terms) = match &data.features {
        Features::Dense(m) if shaders::reads_vectors(m.cols) => (Kernel::Dense4, m.cols / 4),
        Features::Dense(m) => (Kernel::Dense, m.cols),
        Features::Sparse(m) => (Kernel::Sparse, m.values.len() / m.rows().max(1)),
    };
    // CPU-type adapters (lavapipe) gain nothing from lanes sharing a row
    // and pay dearly for the barriers of their reduction.
    let lanes = match options.lanes {
        Some(l) if l.is_power_of_two() && l <= 32 => l,
        Some(l) => {
            return Err(Error::Usage(format!(
                "lanes must be a power of two from 1 to 32, got {l}"
            )));
        }
        None if gpu.info.device_type == wgpu::DeviceType::Cpu => 1,
        None => shaders::lanes_for(terms),
    };
    Ok((kernel, lanes))
}

fn margin_pipeline<F: Real>(
    device: &wgpu::Device,
    kernel: Kernel,
    lanes: u32,
) -> wgpu::ComputePipeline {
    let module = device.create_shader_module(wgpu::ShaderModuleDescriptor {
        label: Some(kernel.entry_point()),
        source: wgpu::ShaderSource::Wgsl(shaders::source(kernel, F::PRECISION).into()),
    });
    let constants = [("LANES", lanes as f64)];
    device.create_compute_pipeline(&wgpu::ComputePipelineDescriptor {
        label: Some(kernel.entry_point()),
        layout: None,
        module: &module,
        entry_point: Some(kernel.entry_point()),
        compilation_options: wgpu::PipelineCompilationOptions {
            constants: &constants,
            zero_initialize_workgroup_memory: false,
        },
        cache: None,
    })
}

/// An engine buffer: a multiple of 4 bytes, as copies need.
fn buffer(
    device: &wgpu::Device,
    label: &str,
    size: u64,
    usage: wgpu::BufferUsages,
) -> wgpu::Buffer {
    aligned_buffer(device, label, size, 4, usage)
}

/// The buffers every chunk's pass shares: the weights of every head, the
/// certificate's bound, the slacks, and the ring they are read back
/// through.
struct PassBuffers {
    weights: wgpu::Buffer,
    bound: wgpu::Buffer,
    slack: wgpu::Buffer,
    ring: Vec<Readback>,
}

impl PassBuffers {
    fn new<F: Real>(device: &wgpu::Device, dim: usize, max_heads: usize, max_pass: usize) -> Self {
        let elem = std::mem::size_of::<F>() as u64;
        let storage = wgpu::BufferUsages::STORAGE | wgpu::BufferUsages::COPY_DST;
        let slack_bytes = (max_pass * max_heads) as u64 * 4;
        PassBuffers {
            weights: buffer(device, "weights", (dim * max_heads) as u64 * elem, storage),
            bound: buffer(device, "bound", 4 * elem, storage),
            slack: buffer(
                device,
                "slack",
                slack_bytes,
                storage | wgpu::BufferUsages::COPY_SRC,
            ),
            ring: (0..RING)
                .map(|_| Readback {
                    buffer: buffer(
                        device,
                        "readback",
                        slack_bytes,
                        wgpu::BufferUsages::MAP_READ | wgpu::BufferUsages::COPY_DST,
                    ),
                    busy: false,
                })
                .collect(),
        }
    }
}

/// A chunk's bind group (its labels, norms and class ids uploaded, the
/// shared buffers and its rows' buffers bound) and its parameters' buffer.
fn chunk_bind_group<F: Real>(
    device: &wgpu::Device,
    layout: &wgpu::BindGroupLayout,
    data: &Dataset<F>,
    norms: &[f32],
    plan: &ChunkPlan,
    shared: &PassBuffers,
    rows: &ChunkBuffers,
) -> (wgpu::BindGroup, wgpu::Buffer) {
    let init = |label: &str, contents: &[u8]| {
        device.create_buffer_init(&wgpu::util::BufferInitDescriptor {
            label: Some(label),
            contents: &padded(contents),
            usage: wgpu::BufferUsages::STORAGE,
        })
    };
    let labels = init(
        "labels",
        bytemuck::cast_slice(&layout::label_bits(&data.labels, plan.rows.clone())),
    );
    let chunk_norms = init("norms", bytemuck::cast_slice(&norms[plan.rows.clone()]));
    let class_ids = if data.class_ids.is_empty() {
        init("class_ids", &[])
    } else {
        init(
            "class_ids",
            bytemuck::cast_slice(&data.class_ids[plan.rows.clone()]),
        )
    };
    let params = buffer(
        device,
        "params",
        std::mem::size_of::<Params>() as u64,
        wgpu::BufferUsages::UNIFORM | wgpu::BufferUsages::COPY_DST,
    );
    let mut entries = vec![
        bind(0, &params),
        bind(2, &labels),
        bind(3, &shared.weights),
        bind(4, &chunk_norms),
        bind(5, &shared.bound),
        bind(6, &shared.slack),
        bind(9, &class_ids),
    ];
    entries.extend(rows.bind_entries());
    let group = device.create_bind_group(&wgpu::BindGroupDescriptor {
        label: Some("chunk"),
        layout,
        entries: &entries,
    });
    (group, params)
}
