//! The GPU walk: the device decides row after row with its own copy of the
//! weights, in batches of iterations that need no host between them.
//!
//! The kernels (shaders/walk_*.wgsl, their twins in [`super::twin`])
//! make many decisions per iteration: a scan computes the certified slacks
//! of a window of rows at memory speed, then one workgroup walks the window,
//! skipping the rows the slacks settle under its drift. A batch records
//! `iterations` such iterations in one compute pass of one command buffer
//! (a pass boundary costs several times a dispatch), then copies the walk
//! state and the batch's entries to a readback buffer; two batches are in
//! flight, so the device walks on while the host replays the previous
//! batch. [`BatchPlan`] sizes each batch from the last ones, and under a
//! trial's deadline to the time left: batches are submitted when the loop
//! asks for the first one, so the first ones too know the deadline, and
//! none is submitted that would start past it. A batch is
//! confined to one data chunk (one storage binding): when the device
//! reaches a chunk's end, the host points the walk at the next chunk.
//!
//! The host replays every decision with its own arithmetic (see
//! `train::sweep::walks`), so nothing here needs to be trusted beyond the
//! certificate: wrong speculative decisions and updates that differ from
//! the host's are caught there.

use std::collections::VecDeque;
use std::sync::{Arc, Mutex};
use std::time::Instant;

use super::chunks::{ChunkBuffers, aligned_buffer, bind};
use super::context::{self, MapResult};
use super::layout::{self, BatchParams, ChunkPlan, WalkParams, WalkState};
use super::shaders::{self, Kernel};
use super::twin::{self as walk_twin, Entries};
use super::walk_plan::{self, BatchDone, BatchPlan, MAX_WINDOW, seconds_until};
use crate::data::{Dataset, RowFacts};
use crate::engine::certify::Bound;
use crate::engine::{EngineError, WalkBatch, WalkCounts, WalkStart};
use crate::float::Real;

/// Batches in flight at once.
const DEPTH: usize = 2;

struct ChunkWalk {
    rows: std::ops::Range<usize>,
    params: wgpu::Buffer,
    /// One bind group per readback slot.
    bind_groups: Vec<wgpu::BindGroup>,
}

struct Slot {
    batch: wgpu::Buffer,
    entry_rows: wgpu::Buffer,
    entry_values: wgpu::Buffer,
    readback: wgpu::Buffer,
}

struct InFlight {
    slot: usize,
    chunk: usize,
    params: BatchParams,
    iterations: usize,
    index: wgpu::SubmissionIndex,
    mapped: MapResult,
    /// When it was submitted (just before), and when it is expected to be
    /// done (at the plan's rate, after the batches before it).
    submitted: Instant,
    expected_done: Instant,
}

/// A batch read back: its chunk, parameters and iterations, its time, its
/// state and its entries.
struct Received<F> {
    chunk: usize,
    params: BatchParams,
    iterations: usize,
    seconds: f64,
    state: WalkState,
    entries: Entries<F>,
}

/// The walk on one device, over the chunks of one dataset.
pub struct GpuWalk<F: Real> {
    device: wgpu::Device,
    queue: wgpu::Queue,
    failure: Arc<Mutex<Option<String>>>,
    scan: wgpu::ComputePipeline,
    step: wgpu::ComputePipeline,
    weights: wgpu::Buffer,
    state: wgpu::Buffer,
    chunks: Vec<ChunkWalk>,
    slots: Vec<Slot>,
    free: Vec<usize>,
    pending: VecDeque<InFlight>,
    /// Values per entry, rows per scan workgroup.
    stride: usize,
    rows_per_group: usize,
    max_groups: u32,
    /// The next batch's size, from the last ones.
    plan: BatchPlan,
    /// The state's counters when the last batch was read (they grow over a
    /// run), and the totals, with the dispatches recorded.
    seen: WalkState,
    pub counts: WalkCounts,
    pub dispatches: u64,
    cols: usize,
    bias: bool,
    l1_max: f64,
    /// The walk in progress: its chunk, the row the next batch starts at,
    /// the end of the epoch, the bound, and whether it stopped.
    chunk: usize,
    next_start: usize,
    epoch_end: usize,
    bound: Option<Bound<F>>,
    stopped: bool,
    /// When the last batch was read: the next one's device time starts
    /// there or at its submission, whichever is later.
    last_read: Option<Instant>,
    /// Seconds spent waiting for batches.
    pub seconds: f64,
}

/// The walk state's bytes, first in a readback.
const STATE_BYTES: u64 = std::mem::size_of::<WalkState>() as u64;

/// Readback layout: the state, the entry rows (padded to 8 bytes), values.
fn rows_bytes(capacity: usize) -> u64 {
    (4 * (1 + 2 * capacity) as u64).next_multiple_of(8)
}

/// Storage a walk's buffers are: bound to kernels, written and read back.
const STORAGE: wgpu::BufferUsages = wgpu::BufferUsages::STORAGE
    .union(wgpu::BufferUsages::COPY_DST)
    .union(wgpu::BufferUsages::COPY_SRC);

/// A walk buffer: a multiple of 8 bytes, so the readback's parts (state,
/// entry rows, values) start at 8-byte offsets.
fn buffer(
    device: &wgpu::Device,
    label: &str,
    size: u64,
    usage: wgpu::BufferUsages,
) -> wgpu::Buffer {
    aligned_buffer(device, label, size, 8, usage)
}

/// The walk's two kernels (the scan and the step) and their one layout.
struct WalkPipelines {
    layout: wgpu::BindGroupLayout,
    scan: wgpu::ComputePipeline,
    step: wgpu::ComputePipeline,
}

impl WalkPipelines {
    fn new<F: Real>(device: &wgpu::Device, kernel: Kernel, lanes: u32) -> Result<Self, String> {
        let module = device.create_shader_module(wgpu::ShaderModuleDescriptor {
            label: Some("walk"),
            source: wgpu::ShaderSource::Wgsl(shaders::source(kernel, F::PRECISION).into()),
        });
        // One explicit layout for both entry points: the scan does not touch
        // the entries, so layouts inferred per entry point would differ.
        let sparse = kernel == Kernel::WalkSparse;
        let entry = |binding: u32, ty: wgpu::BufferBindingType| wgpu::BindGroupLayoutEntry {
            binding,
            visibility: wgpu::ShaderStages::COMPUTE,
            ty: wgpu::BindingType::Buffer {
                ty,
                has_dynamic_offset: false,
                min_binding_size: None,
            },
            count: None,
        };
        let storage = |binding: u32, read_only: bool| {
            entry(binding, wgpu::BufferBindingType::Storage { read_only })
        };
        let uniform = |binding: u32| entry(binding, wgpu::BufferBindingType::Uniform);
        // The chunk's parameters, rows, bits, weights, state, the slot's
        // entries, the norms, slacks and tiles, and the batch's parameters.
        let mut layout_entries = vec![
            uniform(0),
            storage(1, true),
            storage(2, true),
            storage(3, false),
            storage(4, false),
            storage(5, false),
            storage(6, false),
            storage(10, true),
            storage(11, false),
            storage(13, false),
            uniform(12),
        ];
        if sparse {
            layout_entries.push(storage(7, true));
            layout_entries.push(storage(8, true));
        }
        let layout = device.create_bind_group_layout(&wgpu::BindGroupLayoutDescriptor {
            label: Some("walk"),
            entries: &layout_entries,
        });
        let pipeline_layout = device.create_pipeline_layout(&wgpu::PipelineLayoutDescriptor {
            label: Some("walk"),
            bind_group_layouts: &[Some(&layout)],
            immediate_size: 0,
        });
        let constants = [("LANES", lanes as f64)];
        let pipeline = |entry: &str| {
            device.create_compute_pipeline(&wgpu::ComputePipelineDescriptor {
                label: Some(entry),
                layout: Some(&pipeline_layout),
                module: &module,
                entry_point: Some(entry),
                compilation_options: wgpu::PipelineCompilationOptions {
                    constants: &constants,
                    zero_initialize_workgroup_memory: true,
                },
                cache: None,
            })
        };
        let [scan_name, step_name] = kernel.entry_points() else {
            return Err("walk kernel entry points".into());
        };
        Ok(WalkPipelines {
            scan: pipeline(scan_name),
            step: pipeline(step_name),
            layout,
        })
    }
}

/// The buffers every chunk's walk shares: the weights, the walk's state,
/// the scan's slacks and its tiles.
struct WalkBuffers {
    weights: wgpu::Buffer,
    state: wgpu::Buffer,
    slack: wgpu::Buffer,
    tiles: wgpu::Buffer,
}

/// A slot's capacity (decisions per batch) and its entries' bytes: a
/// batch's entries hold `stride` values per decision, so wide rows get
/// fewer entries per batch, and no slot needs more than 64 MiB.
fn slot_capacity(
    capacity: usize,
    stride: usize,
    elem: u64,
    limits: &wgpu::Limits,
) -> Result<(usize, u64), String> {
    let capacity = capacity
        .min(((64u64 << 20) / (stride as u64 * elem).max(1)) as usize)
        .max(1);
    let values_bytes = (capacity * stride) as u64 * elem;
    if values_bytes > limits.max_storage_buffer_binding_size {
        return Err(format!(
            "a batch's entries need {values_bytes} bytes, more than a storage binding"
        ));
    }
    Ok((capacity, values_bytes))
}

impl WalkBuffers {
    /// The shared buffers for weights of `weights_bytes` and scan windows
    /// of up to `max_window` rows.
    fn new(device: &wgpu::Device, weights_bytes: u64, max_window: usize, lanes: u32) -> Self {
        // The smallest slack of each scan workgroup's rows (a tile).
        let tiles = max_window.div_ceil((256 / lanes.max(1)) as usize);
        WalkBuffers {
            weights: buffer(device, "walk weights", weights_bytes, STORAGE),
            state: buffer(device, "walk state", STATE_BYTES, STORAGE),
            slack: buffer(
                device,
                "walk slack",
                8 * max_window as u64,
                wgpu::BufferUsages::STORAGE,
            ),
            tiles: buffer(
                device,
                "walk tiles",
                4 * tiles as u64,
                wgpu::BufferUsages::STORAGE,
            ),
        }
    }
}

impl Slot {
    /// A slot for batches of up to `capacity` decisions, whose entries
    /// take `values_bytes`.
    fn new(device: &wgpu::Device, capacity: usize, values_bytes: u64) -> Self {
        let entry_rows = buffer(device, "walk entry rows", rows_bytes(capacity), STORAGE);
        let entry_values = buffer(device, "walk entry values", values_bytes, STORAGE);
        // Room for whatever the entry buffers hold (their sizes are
        // rounded up from the bytes asked for).
        let readback = buffer(
            device,
            "walk readback",
            STATE_BYTES + entry_rows.size() + entry_values.size(),
            wgpu::BufferUsages::MAP_READ | wgpu::BufferUsages::COPY_DST,
        );
        let batch = buffer(
            device,
            "walk batch",
            std::mem::size_of::<BatchParams>() as u64,
            wgpu::BufferUsages::UNIFORM | wgpu::BufferUsages::COPY_DST,
        );
        Slot {
            batch,
            entry_rows,
            entry_values,
            readback,
        }
    }
}

impl ChunkWalk {
    /// Every chunk's walk, its rows' label bits and norms from `facts`.
    fn all<F: Real>(
        device: &wgpu::Device,
        layout: &wgpu::BindGroupLayout,
        data: &Dataset<F>,
        facts: &RowFacts,
        chunks: &[(ChunkPlan, &ChunkBuffers)],
        shared: &WalkBuffers,
        slots: &[Slot],
    ) -> Vec<Self> {
        chunks
            .iter()
            .map(|(plan, rows)| {
                let bits = walk_twin::walk_bits(&data.labels, &facts.host_only, plan.rows.clone());
                let norms = &facts.norms[plan.rows.clone()];
                ChunkWalk::new::<F>(device, layout, plan, rows, &bits, norms, shared, slots)
            })
            .collect()
    }

    /// A chunk's parameters, its rows' label bits and norms, and one bind
    /// group per slot.
    #[allow(clippy::too_many_arguments)]
    fn new<F: Real>(
        device: &wgpu::Device,
        layout: &wgpu::BindGroupLayout,
        plan: &ChunkPlan,
        rows: &ChunkBuffers,
        bits: &[u32],
        norms: &[f32],
        shared: &WalkBuffers,
        slots: &[Slot],
    ) -> Self {
        let params = buffer(
            device,
            "walk params",
            std::mem::size_of::<WalkParams<F>>() as u64,
            wgpu::BufferUsages::UNIFORM | wgpu::BufferUsages::COPY_DST,
        );
        let init = |label: &str, contents: &[u8]| {
            use wgpu::util::DeviceExt;
            device.create_buffer_init(&wgpu::util::BufferInitDescriptor {
                label: Some(label),
                contents: &super::chunks::padded(contents),
                usage: wgpu::BufferUsages::STORAGE,
            })
        };
        let bits = init("walk bits", bytemuck::cast_slice(bits));
        let norms = init("walk norms", bytemuck::cast_slice(norms));
        let bind_groups = slots
            .iter()
            .map(|slot| {
                let mut entries = vec![
                    bind(0, &params),
                    bind(2, &bits),
                    bind(3, &shared.weights),
                    bind(4, &shared.state),
                    bind(5, &slot.entry_rows),
                    bind(6, &slot.entry_values),
                    bind(10, &norms),
                    bind(11, &shared.slack),
                    bind(12, &slot.batch),
                    bind(13, &shared.tiles),
                ];
                entries.extend(rows.bind_entries());
                device.create_bind_group(&wgpu::BindGroupDescriptor {
                    label: Some("walk"),
                    layout,
                    entries: &entries,
                })
            })
            .collect();
        ChunkWalk {
            rows: plan.rows.clone(),
            params,
            bind_groups,
        }
    }
}

impl<F: Real> GpuWalk<F> {
    /// Sets up a walk over `chunks` (every chunk resident, in row order).
    #[allow(clippy::too_many_arguments)]
    pub(super) fn new(
        device: &wgpu::Device,
        queue: &wgpu::Queue,
        failure: Arc<Mutex<Option<String>>>,
        limits: &wgpu::Limits,
        data: &Dataset<F>,
        bias: bool,
        lanes: u32,
        capacity: usize,
        waste: u32,
        chunks: &[(ChunkPlan, &ChunkBuffers)],
    ) -> Result<Self, String> {
        let kernel = match chunks.first().map(|c| c.1) {
            Some(ChunkBuffers::Dense { .. }) | None => Kernel::walk_dense(data.cols()),
            Some(ChunkBuffers::Sparse { .. }) => Kernel::WalkSparse,
        };
        let scope = device.push_error_scope(wgpu::ErrorFilter::Validation);
        let oom = device.push_error_scope(wgpu::ErrorFilter::OutOfMemory);
        let pipelines = WalkPipelines::new::<F>(device, kernel, lanes)?;

        let elem = std::mem::size_of::<F>() as u64;
        let dim = data.cols() + bias as usize;
        let stride = walk_twin::entry_stride(&data.features, bias);
        let (capacity, values_bytes) = slot_capacity(capacity, stride, elem, limits)?;
        // The scan's slacks: one window, at most a chunk's rows.
        let longest_chunk = chunks.iter().map(|c| c.0.rows.len()).max().unwrap_or(1);
        let max_window = longest_chunk.clamp(1, MAX_WINDOW);
        let shared = WalkBuffers::new(device, dim as u64 * elem, max_window, lanes);
        let slots: Vec<Slot> = (0..DEPTH + 1)
            .map(|_| Slot::new(device, capacity, values_bytes))
            .collect();
        let facts = data.facts(bias);
        let walks = ChunkWalk::all(
            device,
            &pipelines.layout,
            data,
            &facts,
            chunks,
            &shared,
            &slots,
        );
        if let Some(e) = pollster::block_on(oom.pop()) {
            return Err(format!("out of memory setting up the walk: {e}"));
        }
        if let Some(e) = pollster::block_on(scope.pop()) {
            return Err(format!("setting up the walk failed: {e:?}"));
        }
        Ok(GpuWalk {
            device: device.clone(),
            queue: queue.clone(),
            failure,
            scan: pipelines.scan,
            step: pipelines.step,
            weights: shared.weights,
            state: shared.state,
            chunks: walks,
            free: (0..slots.len()).collect(),
            slots,
            pending: VecDeque::new(),
            stride,
            rows_per_group: (256 / lanes.max(1)) as usize,
            max_groups: limits.max_compute_workgroups_per_dimension,
            plan: BatchPlan::new(capacity, max_window, waste),
            seen: WalkState::default(),
            counts: WalkCounts::default(),
            dispatches: 0,
            cols: data.cols(),
            bias,
            l1_max: facts.l1_max,
            chunk: 0,
            next_start: 0,
            epoch_end: 0,
            bound: None,
            stopped: true,
            last_read: None,
            seconds: 0.0,
        })
    }

    fn check_failure(&self) -> Result<(), EngineError> {
        match context::take_failure(&self.failure) {
            Some(e) => Err(EngineError(e)),
            None => Ok(()),
        }
    }

    /// Writes the chunk's parameters and a fresh walk state, from chunk-local
    /// row `p` to the chunk's end (or the epoch's), with weights of norm at
    /// most `wnorm`.
    fn point_at(&mut self, chunk: usize, global_p: usize, updates_left: u64, wnorm: f32) {
        let Some(bound) = self.bound else { return };
        let c = &self.chunks[chunk];
        let limit = c.rows.end.min(self.epoch_end) - c.rows.start;
        let params = WalkParams::new(&bound, self.cols, self.bias, c.rows.len(), self.stride);
        self.queue
            .write_buffer(&c.params, 0, bytemuck::bytes_of(&params));
        let state = WalkState::start(global_p - c.rows.start, limit, updates_left, wnorm);
        self.queue
            .write_buffer(&self.state, 0, bytemuck::bytes_of(&state));
        self.seen = state;
        self.chunk = chunk;
        self.next_start = global_p;
        self.stopped = false;
    }

    /// Fills the batches in flight up to [`DEPTH`], the next starting at
    /// row `from` as far as the host knows. Under a `deadline` each batch is
    /// sized to the time left when the ones before it are expected to be
    /// done, and one that would start past the deadline is not submitted
    /// (one at least is in flight, so the loop's next batch comes).
    fn fill(&mut self, from: usize, deadline: Option<Instant>) -> Result<(), EngineError> {
        while self.pending.len() < DEPTH {
            let now = Instant::now();
            let starts = self
                .pending
                .back()
                .map_or(now, |p| p.expected_done.max(now));
            let left = deadline.map(|d| seconds_until(d, starts));
            if !self.pending.is_empty() && left.is_some_and(|l| l <= 0.0) {
                break;
            }
            self.submit(from, left, starts)?;
            if deadline.is_some() && !self.plan.timed() {
                // No batch timed yet: nothing to fit a second one by.
                break;
            }
        }
        Ok(())
    }

    /// Records and submits one batch on the current chunk, sized by the plan
    /// for the rows left from `from` and the seconds `left` before a
    /// deadline, expected to start at `starts`.
    fn submit(
        &mut self,
        from: usize,
        left: Option<f64>,
        starts: Instant,
    ) -> Result<(), EngineError> {
        let c = &self.chunks[self.chunk];
        let rows_left = c.rows.end.min(self.epoch_end).saturating_sub(from);
        let (params, iterations) = self.plan.next_within(rows_left, left);
        let expected = self.plan.seconds_for(&params, iterations).unwrap_or(0.0);
        // Before the submission: a software adapter may do the work in it.
        let submitted = Instant::now();
        let slot = self
            .free
            .pop()
            .ok_or_else(|| EngineError("no free walk slot".into()))?;
        let s = &self.slots[slot];
        self.queue
            .write_buffer(&s.entry_rows, 0, bytemuck::bytes_of(&0u32));
        self.queue
            .write_buffer(&s.batch, 0, bytemuck::bytes_of(&params));
        let mut encoder = self.device.create_command_encoder(&Default::default());
        let groups = ((params.window as usize).div_ceil(self.rows_per_group) as u32)
            .min(self.max_groups)
            .max(1);
        {
            let mut pass = encoder.begin_compute_pass(&Default::default());
            pass.set_bind_group(0, &self.chunks[self.chunk].bind_groups[slot], &[]);
            for _ in 0..iterations {
                pass.set_pipeline(&self.scan);
                pass.dispatch_workgroups(groups, 1, 1);
                pass.set_pipeline(&self.step);
                pass.dispatch_workgroups(1, 1, 1);
            }
        }
        // Only what this batch's entries can hold comes back: a batch of 16
        // decisions on wide rows copies 16 rows of values, not the slot's
        // 64 MiB.
        let (rows_at, values_at) = (STATE_BYTES, STATE_BYTES + s.entry_rows.size());
        let (rows, values) = self.entry_bytes(s, params.capacity as usize);
        encoder.copy_buffer_to_buffer(&self.state, 0, &s.readback, 0, STATE_BYTES);
        encoder.copy_buffer_to_buffer(&s.entry_rows, 0, &s.readback, rows_at, rows);
        if values > 0 {
            encoder.copy_buffer_to_buffer(&s.entry_values, 0, &s.readback, values_at, values);
        }
        let index = self.queue.submit([encoder.finish()]);
        let mapped = context::map_for_reading(s.readback.slice(..));
        self.counts.batches += 1;
        self.dispatches += 2 * iterations as u64;
        self.pending.push_back(InFlight {
            slot,
            chunk: self.chunk,
            params,
            iterations,
            index,
            mapped,
            submitted,
            expected_done: starts + std::time::Duration::from_secs_f64(expected.min(1e6)),
        });
        Ok(())
    }

    /// The bytes of entry rows and of entry values that a batch of
    /// `capacity` entries may write, rounded up to whole copy units and
    /// within the slot's buffers.
    fn entry_bytes(&self, s: &Slot, capacity: usize) -> (u64, u64) {
        let elem = std::mem::size_of::<F>() as u64;
        let rows = rows_bytes(capacity).min(s.entry_rows.size());
        let values = ((capacity * self.stride) as u64 * elem)
            .next_multiple_of(wgpu::COPY_BUFFER_ALIGNMENT)
            .min(s.entry_values.size());
        (rows, values)
    }

    /// Waits for the oldest batch and reads its state and entries.
    fn receive(&mut self) -> Result<Received<F>, EngineError> {
        let t0 = Instant::now();
        let p = self
            .pending
            .pop_front()
            .ok_or_else(|| EngineError("no walk batch in flight".into()))?;
        context::wait_mapped(&self.device, &self.failure, p.index, &p.mapped, "the walk")
            .map_err(EngineError)?;
        let done = Instant::now();
        let s = &self.slots[p.slot];
        let (rows, values) = self.entry_bytes(s, p.params.capacity as usize);
        let values_at = (STATE_BYTES + s.entry_rows.size()) as usize;
        let elem = std::mem::size_of::<F>();
        let values = values as usize / elem * elem;
        let (state, entries) = {
            let view = s
                .readback
                .slice(..)
                .get_mapped_range()
                .map_err(|e| EngineError(format!("reading the walk back failed: {e}")))?;
            let at = STATE_BYTES as usize;
            let state: WalkState = bytemuck::pod_read_unaligned(&view[..at]);
            let entry_rows: Vec<u32> = bytemuck::pod_collect_to_vec(&view[at..at + rows as usize]);
            let values: Vec<F> = bytemuck::pod_collect_to_vec(&view[values_at..values_at + values]);
            (
                state,
                Entries {
                    rows: entry_rows,
                    values,
                },
            )
        };
        s.readback.unmap();
        self.free.push(p.slot);
        let read = Instant::now();
        self.seconds += read.duration_since(t0).as_secs_f64();
        // The batch's time: from its submission, or from the batch before it
        // if that was read later (it queued behind it), to the end of the
        // wait for it. One found done took less: the host's time replaying
        // the batch before it counts too, which prices rows high and keeps
        // a trial's batches short rather than long.
        let began = self.last_read.map_or(p.submitted, |r| r.max(p.submitted));
        self.last_read = Some(read);
        Ok(Received {
            chunk: p.chunk,
            params: p.params,
            iterations: p.iterations,
            seconds: done.duration_since(began).as_secs_f64(),
            state,
            entries,
        })
    }

    /// Waits for every batch in flight and drops its results.
    fn drain(&mut self) -> Result<(), EngineError> {
        while !self.pending.is_empty() {
            self.receive()?;
        }
        Ok(())
    }

    /// The chunk holding row `row`.
    fn chunk_of(&self, row: usize) -> Option<usize> {
        self.chunks.iter().position(|c| c.rows.contains(&row))
    }

    pub fn begin(&mut self, start: &WalkStart<'_, F>) -> Result<(), EngineError> {
        self.drain()?;
        if start.resync {
            self.queue
                .write_buffer(&self.weights, 0, bytemuck::cast_slice(start.weights));
        }
        self.bound =
            Some(Bound::<F>::for_weights(start.weights, self.l1_max).with_margin(start.tau));
        self.epoch_end = start.end;
        let chunk = self
            .chunk_of(start.position)
            .ok_or_else(|| EngineError(format!("no data chunk holds row {}", start.position)))?;
        let wnorm = layout::norm_bound(start.weights);
        self.point_at(chunk, start.position, start.max_updates, wnorm);
        self.plan.restart();
        // The first batches are submitted by the first `next_batch`, which
        // knows whether a deadline bounds them.
        self.check_failure()
    }

    /// The next batch, the batches in flight filled up behind it, sized to
    /// the time left before `deadline` (a trial's), if any.
    pub fn next_batch(&mut self, deadline: Option<Instant>) -> Result<WalkBatch<F>, EngineError> {
        if self.stopped {
            return Err(EngineError("the walk stopped: begin it again".into()));
        }
        if self.pending.is_empty() {
            self.fill(self.next_start, deadline)?;
        }
        let Received {
            chunk,
            params,
            iterations,
            seconds,
            state,
            entries,
        } = self.receive()?;
        let offset = self.chunks[chunk].rows.start;
        let start = self.next_start;
        let batch =
            walk_twin::to_batch(&state, entries, self.stride, offset, start, self.epoch_end)?;
        self.next_start = batch.end;
        let steps = state.iterations.wrapping_sub(self.seen.iterations) as u64;
        let decisions = batch.decisions.len();
        self.counts.decisions += decisions as u64;
        self.counts.steps += steps;
        self.counts.dots += state.dots.wrapping_sub(self.seen.dots) as u64;
        self.counts.searches += state.searches.wrapping_sub(self.seen.searches) as u64;
        self.seen = state;
        self.plan.observe(BatchDone {
            rows: batch.end - start,
            decisions,
            steps: steps as usize,
            full: decisions >= params.capacity as usize,
            scanned: walk_plan::scanned(&params, iterations, steps as usize),
            seconds: Some(seconds),
        });
        if state.stop == 0 {
            // The batch behind this one starts where that one will end: the
            // plan's rows left are counted from this batch's end.
            self.fill(batch.end, deadline)?;
        } else if state.stop == walk_twin::STOP_LIMIT && batch.end < self.epoch_end {
            // The chunk is done: the batches behind this one did nothing.
            self.drain()?;
            let next = self
                .chunk_of(batch.end)
                .ok_or_else(|| EngineError(format!("no data chunk holds row {}", batch.end)))?;
            self.point_at(next, batch.end, state.updates_left as u64, state.wnorm);
            self.fill(batch.end, deadline)?;
        } else {
            self.stopped = true;
        }
        Ok(batch)
    }

    pub fn cancel(&mut self) -> Result<(), EngineError> {
        self.stopped = true;
        self.drain()
    }
}
