//! The dataset's fingerprint ([`crate::data::fingerprint`]) from blocks
//! held by different ranks: the hash state passes from rank to rank, each
//! feeding its part of each section in dataset order, so the result is the
//! one a single process computes over all the rows, and a checkpoint
//! written by a distributed run resumes on one process (and back).

use crate::data::Dataset;
use crate::data::fingerprint::Chain;
use crate::data::matrix::Features;
use crate::float::Real;

use super::load::Whole;
use super::transport::{Transport, exclusive_sums, sum};

/// The whole dataset's fingerprint, on every rank; `multiclass` as the
/// data was read (one-vs-rest hashes the classes).
pub fn fingerprint<F: Real>(
    t: &dyn Transport,
    block: &Dataset<F>,
    whole: &Whole,
    multiclass: bool,
) -> String {
    let (k, rank) = (t.size(), t.rank());
    // Stored values (every one for dense rows).
    let nnz = match &block.features {
        Features::Dense(m) => m.values.len(),
        Features::Sparse(m) => m.values.len(),
    } as u64;
    let total_nnz = sum(t, nnz);
    let before = exclusive_sums(t, &[nnz])[0] as usize;
    let sections = Sections {
        total_nnz,
        before,
        rows: whole.rows as u64,
        rank,
        multiclass,
    }
    .of(block);
    let mut chain = pass_along(t, block, whole, &sections);
    let mut done = if rank == k - 1 {
        if multiclass {
            for c in &block.classes {
                chain.bytes(c.text.as_bytes());
            }
        }
        chain.labels_map(&block.label_map);
        chain.finish().into_bytes()
    } else {
        Vec::new()
    };
    t.broadcast(k - 1, &mut done);
    String::from_utf8_lossy(&done).into_owned()
}

/// This rank's part of a section, fed to the chain in dataset order.
type Feed<'a> = Box<dyn Fn(&mut Chain) + 'a>;

/// What a rank needs to feed its part of each section: the stored values
/// in all and in the blocks before its own, and the rows in all.
struct Sections {
    total_nnz: u64,
    before: usize,
    rows: u64,
    rank: usize,
    multiclass: bool,
}

impl Sections {
    /// Each section: its total bytes (None: words only) and this rank's part.
    fn of<F: Real>(self, block: &Dataset<F>) -> Vec<(Option<u64>, Feed<'_>)> {
        let Sections {
            total_nnz,
            before,
            rows,
            rank,
            multiclass,
        } = self;
        let size = std::mem::size_of::<F>() as u64;
        let mut sections: Vec<(Option<u64>, Feed<'_>)> = Vec::new();
        match &block.features {
            Features::Dense(m) => {
                sections.push((
                    Some(total_nnz * size),
                    Box::new(|c: &mut Chain| c.feed(bytemuck::cast_slice(&m.values))),
                ));
            }
            Features::Sparse(m) => {
                sections.push((
                    Some(total_nnz * size),
                    Box::new(|c: &mut Chain| c.feed(bytemuck::cast_slice(&m.values))),
                ));
                sections.push((
                    Some(total_nnz * 4),
                    Box::new(|c: &mut Chain| c.feed(bytemuck::cast_slice(&m.indices))),
                ));
                sections.push((
                    None,
                    Box::new(move |c: &mut Chain| {
                        if rank == 0 {
                            c.word(0);
                        }
                        let base = m.row_ptr[0];
                        for &p in &m.row_ptr[1..] {
                            c.word((before + p - base) as u64);
                        }
                    }),
                ));
            }
        }
        let label_bytes = if multiclass { 0 } else { rows };
        sections.push((
            Some(label_bytes),
            Box::new(|c: &mut Chain| c.feed(bytemuck::cast_slice(&block.labels))),
        ));
        if multiclass {
            sections.push((
                Some(rows * 4),
                Box::new(|c: &mut Chain| c.feed(bytemuck::cast_slice(&block.class_ids))),
            ));
        }

        sections
    }
}

/// Feeds every section into the chain that passes from rank to rank: rank
/// 0 starts each section, the last rank ends it; returns this rank's chain
/// (the whole one on the last rank).
fn pass_along<F: Real>(
    t: &dyn Transport,
    block: &Dataset<F>,
    whole: &Whole,
    sections: &[(Option<u64>, Feed<'_>)],
) -> Chain {
    let (k, rank) = (t.size(), t.rank());
    let prev = (rank + k - 1) % k;
    let next = (rank + 1) % k;
    let mut chain = Chain::new();
    if rank == 0 {
        chain.shape(&block.features, whole.rows);
    }
    let last = sections.len() - 1;
    for (s, (total, feed)) in sections.iter().enumerate() {
        if k > 1 && (rank > 0 || s > 0) {
            chain = Chain::from_bytes(&t.receive(prev)).unwrap_or_default();
        }
        if rank == 0
            && let Some(n) = total
        {
            chain.begin(*n);
        }
        feed(&mut chain);
        if rank == k - 1 && total.is_some() {
            chain.end();
        }
        if k > 1 && !(s == last && rank == k - 1) {
            t.send(next, &chain.to_bytes());
        }
    }
    chain
}
