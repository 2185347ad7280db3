//! The data's chunks on the device: their buffers, uploaded once when they
//! fit the memory budget (resident), else streamed through one staging chunk
//! before every dispatch that reads them. The margin passes bind them; the
//! walk binds the resident ones.

use wgpu::util::DeviceExt;

use super::context::Gpu;
use super::layout::{self, ChunkPlan};
use crate::data::Features;
use crate::error::{Error, Result};
use crate::float::Real;

/// Device buffers of one chunk's features.
pub(super) enum ChunkBuffers {
    Dense {
        x: wgpu::Buffer,
    },
    Sparse {
        row_ptr: wgpu::Buffer,
        col_index: wgpu::Buffer,
        values: wgpu::Buffer,
    },
}

fn entry(binding: u32, buffer: &wgpu::Buffer) -> wgpu::BindGroupEntry<'_> {
    wgpu::BindGroupEntry {
        binding,
        resource: buffer.as_entire_binding(),
    }
}

impl ChunkBuffers {
    /// Their bind group entries, at the bindings every kernel declares
    /// them (1: x or row_ptr; 7: col_index; 8: values).
    pub(super) fn bind_entries(&self) -> Vec<wgpu::BindGroupEntry<'_>> {
        match self {
            ChunkBuffers::Dense { x } => vec![entry(1, x)],
            ChunkBuffers::Sparse {
                row_ptr,
                col_index,
                values,
            } => vec![entry(1, row_ptr), entry(7, col_index), entry(8, values)],
        }
    }
}

/// The smallest buffer made: wgpu rejects empty bindings.
pub(super) const MIN_BUFFER: u64 = 16;

pub(super) fn bytes_of<F: Real>(v: &[F]) -> &[u8] {
    bytemuck::cast_slice(v)
}

/// A buffer of at least `size` bytes: at least [`MIN_BUFFER`], rounded up
/// to a multiple of `align`.
pub(super) fn aligned_buffer(
    device: &wgpu::Device,
    label: &str,
    size: u64,
    align: u64,
    usage: wgpu::BufferUsages,
) -> wgpu::Buffer {
    device.create_buffer(&wgpu::BufferDescriptor {
        label: Some(label),
        size: size.max(MIN_BUFFER).next_multiple_of(align),
        usage,
        mapped_at_creation: false,
    })
}

/// Binds all of `buffer` at `binding`.
pub(super) fn bind(binding: u32, buffer: &wgpu::Buffer) -> wgpu::BindGroupEntry<'_> {
    wgpu::BindGroupEntry {
        binding,
        resource: buffer.as_entire_binding(),
    }
}

/// Pads `bytes` to a multiple of 4 (and at least MIN_BUFFER) for upload.
pub(super) fn padded(bytes: &[u8]) -> std::borrow::Cow<'_, [u8]> {
    let len = (bytes.len() as u64).max(MIN_BUFFER).next_multiple_of(4) as usize;
    if len == bytes.len() {
        bytes.into()
    } else {
        let mut v = bytes.to_vec();
        v.resize(len, 0);
        v.into()
    }
}

/// Bytes a chunk's buffers take on the device.
pub(super) fn chunk_bytes<F: Real>(features: &Features<F>, plan: &ChunkPlan) -> u64 {
    let elem = std::mem::size_of::<F>() as u64;
    match features {
        Features::Dense(_) => plan.entries as u64 * elem,
        Features::Sparse(_) => plan.entries as u64 * (elem + 4) + (plan.rows.len() as u64 + 1) * 4,
    }
}

/// Uploads a chunk, or returns `None` if the device is out of memory.
pub(super) fn try_upload<F: Real>(
    gpu: &Gpu,
    features: &Features<F>,
    plan: &ChunkPlan,
) -> Option<ChunkBuffers> {
    let scope = gpu.device.push_error_scope(wgpu::ErrorFilter::OutOfMemory);
    let init = |label: &str, bytes: &[u8]| {
        gpu.device
            .create_buffer_init(&wgpu::util::BufferInitDescriptor {
                label: Some(label),
                contents: &padded(bytes),
                usage: wgpu::BufferUsages::STORAGE | wgpu::BufferUsages::COPY_DST,
            })
    };
    let buffers = match features {
        Features::Dense(m) => {
            let values = &m.values[plan.rows.start * m.cols..plan.rows.end * m.cols];
            ChunkBuffers::Dense {
                x: init("x", bytes_of(values)),
            }
        }
        Features::Sparse(m) => {
            let (a, b) = (m.row_ptr[plan.rows.start], m.row_ptr[plan.rows.end]);
            ChunkBuffers::Sparse {
                row_ptr: init(
                    "row_ptr",
                    bytemuck::cast_slice(&layout::local_row_ptr(&m.row_ptr, plan.rows.clone())),
                ),
                col_index: init("col_index", bytemuck::cast_slice(&m.indices[a..b])),
                values: init("values", bytes_of(&m.values[a..b])),
            }
        }
    };
    match pollster::block_on(scope.pop()) {
        None => Some(buffers),
        Some(_) => None,
    }
}

/// Buffers large enough for any chunk, for streaming.
pub(super) fn allocate_staging<F: Real>(
    gpu: &Gpu,
    features: &Features<F>,
    chunk_limit: u64,
) -> Result<ChunkBuffers> {
    let scope = gpu.device.push_error_scope(wgpu::ErrorFilter::OutOfMemory);
    let buffer = |label: &str, size: u64| {
        gpu.device.create_buffer(&wgpu::BufferDescriptor {
            label: Some(label),
            // Whole vectors of four (x_vec4.wgsl reads the rows so).
            size: size.max(MIN_BUFFER).next_multiple_of(16),
            usage: wgpu::BufferUsages::STORAGE | wgpu::BufferUsages::COPY_DST,
            mapped_at_creation: false,
        })
    };
    let staging = match features {
        Features::Dense(_) => ChunkBuffers::Dense {
            x: buffer("staging x", chunk_limit),
        },
        Features::Sparse(_) => ChunkBuffers::Sparse {
            row_ptr: buffer("staging row_ptr", chunk_limit),
            col_index: buffer("staging col_index", chunk_limit),
            values: buffer("staging values", chunk_limit),
        },
    };
    match pollster::block_on(scope.pop()) {
        None => Ok(staging),
        Some(e) => Err(Error::Gpu(format!(
            "not even one data chunk fits in GPU memory: {e}"
        ))),
    }
}

/// Replaces the staging chunk's contents with `plan`'s rows.
pub(super) fn stream_into<F: Real>(
    queue: &wgpu::Queue,
    staging: &ChunkBuffers,
    features: &Features<F>,
    plan: &ChunkPlan,
) {
    match (staging, features) {
        (ChunkBuffers::Dense { x }, Features::Dense(m)) => {
            let values = &m.values[plan.rows.start * m.cols..plan.rows.end * m.cols];
            queue.write_buffer(x, 0, &padded(bytes_of(values)));
        }
        (
            ChunkBuffers::Sparse {
                row_ptr,
                col_index,
                values,
            },
            Features::Sparse(m),
        ) => {
            let (a, b) = (m.row_ptr[plan.rows.start], m.row_ptr[plan.rows.end]);
            queue.write_buffer(
                row_ptr,
                0,
                &padded(bytemuck::cast_slice(&layout::local_row_ptr(
                    &m.row_ptr,
                    plan.rows.clone(),
                ))),
            );
            queue.write_buffer(
                col_index,
                0,
                &padded(bytemuck::cast_slice(&m.indices[a..b])),
            );
            queue.write_buffer(values, 0, &padded(bytes_of(&m.values[a..b])));
        }
        _ => {}
    }
}
