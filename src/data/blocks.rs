//! Parsing text on all cores: lines read in file order, parsed in blocks
//! in parallel, and merged back in file order.
//!
//! Reading lines stays sequential (it is a few percent of the work: a
//! newline search, a copy and the UTF-8 check); turning fields into numbers
//! is what the blocks share out. A block whose parse fails is not trusted
//! to say why: the caller parses it again the sequential way, so every
//! error names the same line, column and value as a one-line-at-a-time
//! reader would.

use std::io::BufRead;

use rayon::prelude::*;

use crate::error::Result;

use super::lines::LineReader;

/// Bytes of text per block: large enough that a block's bookkeeping is
/// noise, small enough that every core gets several per file.
const BLOCK_BYTES: usize = 1 << 20;
/// Blocks read ahead per core, and in all at most: bounds the text (and the
/// parsed values) held besides the growing matrix.
const BLOCKS_PER_THREAD: usize = 2;
const MAX_BLOCKS: usize = 64;

/// Consecutive lines of a file, with their 1-based numbers.
#[derive(Default)]
pub(crate) struct Block {
    text: String,
    /// Each line's number and the end of its text.
    ends: Vec<(u64, usize)>,
}

impl Block {
    fn push(&mut self, no: u64, line: &str) {
        self.text.push_str(line);
        self.ends.push((no, self.text.len()));
    }

    /// The lines in file order, as `(number, text)`.
    pub fn lines(&self) -> impl Iterator<Item = (u64, &str)> {
        let mut start = 0;
        self.ends.iter().map(move |&(no, end)| {
            let line = &self.text[start..end];
            start = end;
            (no, line)
        })
    }

    /// Number of lines.
    pub fn len(&self) -> usize {
        self.ends.len()
    }

    /// How many times `byte` occurs in the lines.
    pub fn count_bytes(&self, byte: u8) -> usize {
        memchr::memchr_iter(byte, self.text.as_bytes()).count()
    }

    /// Bytes of text per line, on average (line endings excluded).
    pub fn mean_line_bytes(&self) -> usize {
        self.text.len() / self.ends.len().max(1)
    }
}

/// Reads the rest of `lines` in blocks, calls `parse` on every block on all
/// cores, and hands batches of consecutive blocks with their results to
/// `merge`, in file order.
///
/// A read error at line L (an I/O error, invalid UTF-8, a line over the
/// limit) is returned after every line before L was merged, and an error
/// from `merge` stops everything: the order of errors is a sequential
/// loop's.
fn parse_in_blocks<R: BufRead, T: Send>(
    lines: &mut LineReader<'_, R>,
    parse: impl Fn(&Block) -> T + Sync,
    mut merge: impl FnMut(&[Block], Vec<T>) -> Result<()>,
) -> Result<()> {
    let per_batch = (rayon::current_num_threads() * BLOCKS_PER_THREAD).clamp(1, MAX_BLOCKS);
    loop {
        let mut blocks: Vec<Block> = Vec::with_capacity(per_batch);
        let mut stop = None;
        while blocks.len() < per_batch && stop.is_none() {
            let mut block = Block::default();
            while block.text.len() < BLOCK_BYTES {
                match lines.next_line() {
                    Ok(Some((no, line))) => block.push(no, line),
                    Ok(None) => {
                        stop = Some(Ok(()));
                        break;
                    }
                    Err(e) => {
                        stop = Some(Err(e));
                        break;
                    }
                }
            }
            if !block.ends.is_empty() {
                blocks.push(block);
            }
        }
        if !blocks.is_empty() {
            // One block (every small file) is parsed right here: handing it
            // to the thread pool would only add the hand-over.
            let results: Vec<T> = match blocks.as_slice() {
                [one] => vec![parse(one)],
                _ => blocks.par_iter().map(&parse).collect(),
            };
            merge(&blocks, results)?;
        }
        if let Some(end) = stop {
            return end;
        }
    }
}

/// Rows parsed from text in file order: what a text parser gives
/// [`parse_rows`] to share its work out in blocks.
pub(crate) trait TextRows: Sized + Send + Sync {
    /// Empty rows of the same shape, for one block parsed on its own, with
    /// room for `block` reserved when the system grants it (the pushes
    /// reserve fallibly anyway, so nothing here aborts).
    fn for_block(&self, block: &Block) -> Self;
    /// Parses one line and appends its row (none for a line the format
    /// skips).
    fn push_line(&mut self, line: &str, no: u64) -> Result<()>;
    /// Stored values: what a block's [`TextRows::absorb`] makes room for.
    fn stored(&self) -> usize;
    /// Takes the labels and row bookkeeping of `block`, rows parsed on
    /// their own that follow these, and room for its values after
    /// `pending` more; the values come later, with [`TextRows::append`].
    /// False, with nothing taken, when its labels or values do not fit.
    fn absorb(&mut self, block: &Self, pending: usize) -> bool;
    /// Appends the values of absorbed blocks, in order, on all cores.
    fn append(&mut self, blocks: &[&Self]);
}

/// Parses the rest of `lines` into `rows` on all cores, in blocks joined
/// in file order. `reserve` is offered the rows parsed from each block,
/// with the block, until it returns true (it sizes `rows` once, from a
/// sample). A block that fails is parsed again one line at a time into
/// `rows`, which names the line, column and value at fault.
pub(crate) fn parse_rows<R: BufRead, T: TextRows>(
    lines: &mut LineReader<'_, R>,
    rows: &mut T,
    mut reserve: impl FnMut(&mut T, &Block, &T) -> bool,
) -> Result<()> {
    let mut reserved = false;
    let shape = rows.for_block(&Block::default());
    parse_in_blocks(
        lines,
        |block| {
            let mut local = shape.for_block(block);
            for (no, line) in block.lines() {
                local.push_line(line, no).ok()?;
            }
            Some(local)
        },
        |blocks, parsed| {
            // Blocks that parsed and fit are copied in together.
            let mut ready: Vec<&T> = Vec::new();
            for (block, local) in blocks.iter().zip(&parsed) {
                if let Some(local) = local {
                    if !reserved {
                        reserved = reserve(rows, block, local);
                    }
                    let pending = ready.iter().map(|r| r.stored()).sum();
                    if rows.absorb(local, pending) {
                        ready.push(local);
                        continue;
                    }
                }
                rows.append(&ready);
                ready.clear();
                for (no, line) in block.lines() {
                    rows.push_line(line, no)?;
                }
            }
            rows.append(&ready);
            Ok(())
        },
    )
}

/// Appends `parts` to `dst` in order, copying on all cores (the copy, and
/// the first touch of fresh pages, would otherwise be a sequential step as
/// long as the reading). Callers reserve the room first, fallibly.
pub(crate) fn extend_in_parallel<T: Copy + Send + Sync>(dst: &mut Vec<T>, parts: &[&[T]]) {
    let total: usize = parts.iter().map(|p| p.len()).sum();
    dst.reserve(total);
    let mut rest = &mut dst.spare_capacity_mut()[..total];
    let mut targets = Vec::with_capacity(parts.len());
    for part in parts {
        let (head, tail) = rest.split_at_mut(part.len());
        targets.push(head);
        rest = tail;
    }
    targets
        .into_par_iter()
        .zip(parts.par_iter())
        .for_each(|(target, part)| {
            target.write_copy_of_slice(part);
        });
    // SAFETY: the `total` elements after the old length were all written
    // just above (the targets tile them), and the capacity covers them.
    unsafe { dst.set_len(dst.len() + total) };
}

/// Gives back reserved memory when an estimate overshot by more than 1/8.
pub(crate) fn trim_excess<T>(v: &mut Vec<T>) {
    if v.capacity() > v.len().saturating_add(v.len() / 8) {
        v.shrink_to_fit();
    }
}

#[cfg(test)]
mod tests {
    use std::path::Path;

    use super::*;

    /// Merges see every line once, in file order, and a read error comes
    /// after the lines before it.
    #[test]
    fn blocks_cover_every_line_in_order() {
        let text: String = (1..=300_000).map(|i| format!("{i}\n")).collect();
        let mut reader = LineReader::new(text.as_bytes(), Path::new("t"));
        let mut seen = Vec::new();
        let mut blocks = 0;
        parse_in_blocks(
            &mut reader,
            |b| {
                b.lines()
                    .map(|(_, l)| l.parse::<u64>().unwrap())
                    .collect::<Vec<_>>()
            },
            |batch, parsed| {
                for (b, parsed) in batch.iter().zip(parsed) {
                    blocks += 1;
                    for ((no, _), v) in b.lines().zip(&parsed) {
                        assert_eq!(no, *v);
                    }
                    seen.extend(parsed);
                }
                Ok(())
            },
        )
        .unwrap();
        assert!(blocks > 1, "{blocks}");
        assert_eq!(seen, (1..=300_000).collect::<Vec<u64>>());

        let bad = b"1\n2\n\xff\n4\n";
        let mut reader = LineReader::new(&bad[..], Path::new("t"));
        let mut seen = Vec::new();
        let e = parse_in_blocks(
            &mut reader,
            |b| b.lines().map(|(no, _)| no).collect::<Vec<_>>(),
            |_, lines| {
                seen.extend(lines.into_iter().flatten());
                Ok(())
            },
        )
        .unwrap_err();
        assert_eq!(seen, [1, 2]);
        assert!(e.to_string().starts_with("t:3:1: invalid UTF-8"), "{e}");
    }

    #[test]
    fn parallel_extension_appends_in_order() {
        let mut v = vec![7u32];
        let parts: Vec<Vec<u32>> = (0..50).map(|k| (0..k * 1000).collect()).collect();
        let slices: Vec<&[u32]> = parts.iter().map(|p| p.as_slice()).collect();
        extend_in_parallel(&mut v, &slices);
        let mut want = vec![7u32];
        parts.iter().for_each(|p| want.extend_from_slice(p));
        assert_eq!(v, want);
        extend_in_parallel(&mut v, &[]);
        assert_eq!(v.len(), want.len());
    }
}
