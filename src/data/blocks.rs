//! Parsing text on all cores: the text cut into blocks of whole lines, the
//! blocks parsed in parallel, and merged back in file order.
//!
//! Each block is read first by its format's fast path, straight from the
//! bytes (`TextRows::push_block`); when that path is not sure of a line,
//! the block is read one line at a time (`TextRows::push_line` over a
//! `LineReader`), still in parallel; and a block that fails even so is not
//! trusted to say why: it is read again one line at a time into the merged
//! rows, in file order, so every error names the same line, column and
//! value as a one-line-at-a-time reader would. The fast path and the line
//! reader give the same values (the tests and the fuzz targets check it);
//! the line reader is the definition.
//!
//! Cutting the text is the only sequential step: a newline search per block
//! when the text is in memory (a mapped file: nothing is copied, and the
//! pages behind the parse are given back), a copy per block from a reader.

use std::borrow::Cow;
use std::io::{self, BufRead, ErrorKind};
use std::path::Path;

use memmap2::Mmap;
use rayon::prelude::*;

use crate::error::{Error, Result};

use super::lines::LineReader;
use super::message::after_lines;

/// Blocks of whole lines of text, each with whether it starts the text.
type Batch<'a> = Vec<(Cow<'a, [u8]>, bool)>;

/// Bytes of text per block: large enough that a block's bookkeeping is
/// noise, small enough that every core gets several per file.
const BLOCK_BYTES: usize = 1 << 20;
/// Blocks read ahead per core, and in all at most: bounds the text (and the
/// parsed values) held besides the growing matrix.
const BLOCKS_PER_THREAD: usize = 2;
const MAX_BLOCKS: usize = 64;
/// Mapped pages already parsed are given back in steps of this many bytes.
const RELEASE_BYTES: usize = 2 << 20;

/// How the text parsers read: the production settings by default; tests
/// and the fuzz targets turn the fast path off (the line reader alone is the
/// reference the fast path must agree with) or make blocks tiny (so that
/// small inputs cross block boundaries).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Reading {
    /// Use the formats' fast paths (else every line goes through the line
    /// reader).
    pub fast: bool,
    /// Bytes per block (at least 1).
    pub block_bytes: usize,
}

impl Default for Reading {
    fn default() -> Self {
        Reading {
            fast: true,
            block_bytes: BLOCK_BYTES,
        }
    }
}

impl Reading {
    /// Every line through the line reader, on one thread in blocks of the
    /// default size: the reference.
    pub fn line_by_line() -> Self {
        Reading {
            fast: false,
            ..Reading::default()
        }
    }
}

/// Text to parse: bytes in memory (a mapped file, or a string), or a
/// reader. Reads as a [`BufRead`] (the parsers read their first lines with
/// a [`LineReader`] over it), and is then cut into blocks.
pub(crate) enum Text<'a> {
    Bytes {
        bytes: &'a [u8],
        pos: usize,
        /// The mapping `bytes` is, whose pages behind the parse are given
        /// back (the page cache keeps them), so that resident memory does
        /// not grow with the text.
        map: Option<&'a Mmap>,
        /// Bytes before this were given back.
        released: usize,
    },
    Reader(Box<dyn BufRead + 'a>),
}

impl<'a> Text<'a> {
    /// Text in memory.
    pub fn bytes(bytes: &'a [u8]) -> Self {
        Text::Bytes {
            bytes,
            pos: 0,
            map: None,
            released: 0,
        }
    }

    /// A mapped file's text.
    pub fn mapped(map: &'a Mmap) -> Self {
        Text::Bytes {
            bytes: map,
            pos: 0,
            map: Some(map),
            released: 0,
        }
    }

    /// Text from a reader.
    pub fn reader(reader: impl BufRead + 'a) -> Self {
        Text::Reader(Box::new(reader))
    }

    /// Whether nothing was read yet.
    fn at_start(&self, consumed: u64) -> bool {
        match self {
            Text::Bytes { pos, .. } => *pos == 0,
            Text::Reader(_) => consumed == 0,
        }
    }

    /// The next block of whole lines: at least `size` bytes (unless the text
    /// ends first), then up to and with the next newline, but never more
    /// than `max_line` bytes past `size` (a line that long is an error the
    /// line reader reports). `Ok(None)` at the end. After a read error, the
    /// whole lines read before it come first, then the error.
    fn next_block(
        &mut self,
        size: usize,
        max_line: usize,
        pending: &mut Option<io::Error>,
    ) -> io::Result<Option<Cow<'a, [u8]>>> {
        if let Some(e) = pending.take() {
            return Err(e);
        }
        let limit = size.saturating_add(max_line).saturating_add(1);
        match self {
            Text::Bytes { bytes, pos, .. } => {
                let rest = &bytes[*pos..];
                if rest.is_empty() {
                    return Ok(None);
                }
                let end = if rest.len() <= size {
                    rest.len()
                } else {
                    let window = &rest[size..rest.len().min(limit)];
                    match memchr::memchr(b'\n', window) {
                        Some(k) => size + k + 1,
                        None => size + window.len(),
                    }
                };
                *pos += end;
                Ok(Some(Cow::Borrowed(&rest[..end])))
            }
            Text::Reader(reader) => {
                let mut block: Vec<u8> = Vec::new();
                loop {
                    let whole = block.last() == Some(&b'\n');
                    if block.len() >= size && (whole || block.len() >= limit) {
                        break;
                    }
                    let available = match reader.fill_buf() {
                        Ok(b) => b,
                        Err(e) if e.kind() == ErrorKind::Interrupted => continue,
                        Err(e) => {
                            // Whole lines first; the partial one is dropped,
                            // as a line reader drops it.
                            let whole = memchr::memrchr(b'\n', &block).map_or(0, |k| k + 1);
                            block.truncate(whole);
                            if block.is_empty() {
                                return Err(e);
                            }
                            *pending = Some(e);
                            return Ok(Some(Cow::Owned(block)));
                        }
                    };
                    if available.is_empty() {
                        break;
                    }
                    let take = if block.len() < size {
                        available.len().min(size - block.len())
                    } else {
                        let window = &available[..available.len().min(limit - block.len())];
                        memchr::memchr(b'\n', window).map_or(window.len(), |k| k + 1)
                    };
                    // The whole block's room at once.
                    let room = take.max(size.saturating_sub(block.len()));
                    if block.capacity() - block.len() < take
                        && (!crate::memory::fits_address_space(room as u64)
                            || block.try_reserve(room).is_err())
                    {
                        return Err(io::Error::new(
                            ErrorKind::OutOfMemory,
                            "no memory for the text being read",
                        ));
                    }
                    block.extend_from_slice(&available[..take]);
                    reader.consume(take);
                }
                Ok((!block.is_empty()).then_some(Cow::Owned(block)))
            }
        }
    }

    /// Up to `count` next blocks (see [`Text::next_block`]), each with
    /// whether it starts the text (`first`, cleared after the first); and,
    /// when the blocks stopped short, why: the end of the text or a read
    /// error.
    fn next_batch(
        &mut self,
        count: usize,
        size: usize,
        max_line: usize,
        pending: &mut Option<io::Error>,
        first: &mut bool,
    ) -> (Batch<'a>, Option<io::Result<()>>) {
        let mut blocks: Batch<'a> = Vec::with_capacity(count);
        let mut stop: Option<io::Result<()>> = None;
        while blocks.len() < count {
            match self.next_block(size, max_line, pending) {
                Ok(Some(b)) => {
                    blocks.push((b, *first));
                    *first = false;
                }
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
        (blocks, stop)
    }

    /// Gives back the mapped pages before the current position (in steps,
    /// page-aligned), so that the parse does not keep the text resident.
    fn release_behind(&mut self) {
        if let Text::Bytes {
            pos,
            map: Some(map),
            released,
            ..
        } = self
        {
            let upto = *pos / RELEASE_BYTES * RELEASE_BYTES;
            if upto > *released {
                // SAFETY: the mapping is a read-only map of a file: dropping
                // its pages only makes a later access read them from the file
                // again, and nothing reads these bytes again (every slice
                // into them, the blocks, was dropped after its parse).
                let _ = unsafe {
                    map.unchecked_advise_range(
                        memmap2::UncheckedAdvice::DontNeed,
                        *released,
                        upto - *released,
                    )
                };
                *released = upto;
            }
        }
    }
}

impl BufRead for Text<'_> {
    fn fill_buf(&mut self) -> io::Result<&[u8]> {
        match self {
            Text::Bytes { bytes, pos, .. } => Ok(&bytes[*pos..]),
            Text::Reader(r) => r.fill_buf(),
        }
    }

    fn consume(&mut self, amount: usize) {
        match self {
            Text::Bytes { bytes, pos, .. } => *pos = (*pos + amount).min(bytes.len()),
            Text::Reader(r) => r.consume(amount),
        }
    }
}

impl io::Read for Text<'_> {
    fn read(&mut self, out: &mut [u8]) -> io::Result<usize> {
        let available = self.fill_buf()?;
        let n = available.len().min(out.len());
        out[..n].copy_from_slice(&available[..n]);
        self.consume(n);
        Ok(n)
    }
}

/// Rows parsed from text in file order: what a text parser gives
/// [`parse_rows`] to share its work out in blocks. Rows parsed from a block
/// on their own number its lines from 1; [`TextRows::absorb`] is told how
/// many lines came before.
pub(crate) trait TextRows: Sized + Send + Sync {
    /// Empty rows of the same shape, for one block of `bytes` bytes parsed on
    /// its own, with room reserved when the system grants it (the pushes
    /// reserve fallibly anyway, so nothing here aborts).
    fn for_block(&self, bytes: usize) -> Self;
    /// Empties the rows, keeping their memory for the next block (fresh
    /// memory for every block would be page faults for every block).
    fn clear(&mut self);
    /// Parses a block's lines straight from bytes (`at_start`: the block
    /// starts the file); returns how many lines it holds, or `None` when
    /// some line is not one this path is sure of, or is longer than
    /// `max_line` bytes (the rows are then dropped).
    fn push_block(&mut self, block: &[u8], at_start: bool, max_line: usize) -> Option<u64>;
    /// Parses one line and appends its row (none for a line the format
    /// skips).
    fn push_line(&mut self, line: &str, no: u64) -> Result<()>;
    /// Stored values: what a block's [`TextRows::absorb`] makes room for.
    fn stored(&self) -> usize;
    /// Takes the labels and row bookkeeping of `block`, rows parsed on
    /// their own that follow these (after `lines_before` lines of the
    /// file), and room for its values after `pending` more; the values come
    /// later, with [`TextRows::append`]. False, with nothing taken, when its
    /// labels or values do not fit.
    fn absorb(&mut self, block: &Self, pending: usize, lines_before: u64) -> bool;
    /// Appends the values of absorbed blocks, in order, on all cores.
    fn append(&mut self, blocks: &[&Self]);
}

/// Parses one block on its own into `local` (by the fast path, else one
/// line at a time): its number of lines, or `None` when it must be read
/// again into the merged rows.
fn parse_block<T: TextRows>(
    local: &mut T,
    block: &[u8],
    at_start: bool,
    path: &Path,
    max_line: usize,
) -> Option<u64> {
    local.clear();
    if let Some(n) = local.push_block(block, at_start, max_line) {
        return Some(n);
    }
    local.clear();
    let mut reader = LineReader::resume(block, path, 0, max_line, at_start);
    while let Some((no, line)) = reader.next_line().ok()? {
        local.push_line(line, no).ok()?;
    }
    Some(reader.line())
}

/// Parses the rest of `lines` into `rows` on all cores, in blocks joined
/// in file order. `reserve` is offered the rows parsed from each block,
/// with the block's length in bytes and lines, until it returns true (it
/// sizes `rows` once, from a sample). A block that fails is parsed again
/// one line at a time into `rows`, which names the line, column and value
/// at fault.
///
/// A read error (an I/O error, a corrupt `.gz`) is returned after every
/// whole line before it was merged, and an error in a line stops
/// everything: the order of errors is a sequential loop's.
pub(crate) fn parse_rows<T: TextRows>(
    lines: LineReader<'_, Text<'_>>,
    rows: &mut T,
    reading: Reading,
    mut reserve: impl FnMut(&mut T, usize, u64, &T) -> bool,
) -> Result<()> {
    let path = lines.path();
    let max_line = lines.max_bytes();
    let mut line = lines.line();
    let size = reading.block_bytes.max(1);
    // The text after the lines already read.
    let mut text = lines.into_reader();
    let mut first = text.at_start(line);
    let per_batch = blocks_per_batch(reading, size);
    let mut pool: Vec<T> = Vec::new();
    let mut reserved = false;
    let mut pending_error = None;
    loop {
        let (blocks, stop) =
            text.next_batch(per_batch, size, max_line, &mut pending_error, &mut first);
        // Rows for each block, kept from batch to batch.
        while reading.fast && pool.len() < blocks.len() {
            pool.push(rows.for_block(size));
        }
        let parsed = parse_blocks(&blocks, &mut pool, reading, path, max_line);
        // Blocks that parsed and fit are copied in together.
        let mut ready: Vec<&T> = Vec::new();
        for (i, ((block, at_start), n)) in blocks.iter().zip(&parsed).enumerate() {
            if let (Some(n), Some(local)) = (n, pool.get(i)) {
                if !reserved {
                    reserved = reserve(rows, block.len(), *n, local);
                }
                let pending = ready.iter().map(|r| r.stored()).sum();
                if rows.absorb(local, pending, line) {
                    ready.push(local);
                    line += n;
                    continue;
                }
            }
            rows.append(&ready);
            ready.clear();
            let mut reader = LineReader::resume(&block[..], path, line, max_line, *at_start);
            while let Some((no, l)) = reader.next_line()? {
                rows.push_line(l, no)?;
            }
            line = reader.line();
        }
        rows.append(&ready);
        drop(parsed);
        drop(blocks);
        text.release_behind();
        match stop {
            None => {}
            Some(Ok(())) => return Ok(()),
            Some(Err(e)) => return Err(Error::io(path, "cannot read", after_lines(e, line))),
        }
    }
}

/// Blocks parsed at once: a few per thread on the fast path, one at a
/// time otherwise.
fn blocks_per_batch(reading: Reading, size: usize) -> usize {
    let per_batch = if reading.fast {
        (rayon::current_num_threads() * BLOCKS_PER_THREAD).clamp(1, MAX_BLOCKS)
    } else {
        1
    };
    // Under an address-space limit (`ulimit -v`), only as many blocks in
    // flight as a quarter of the space left holds, each with its text and
    // its rows: every thread holding blocks of its own would race the
    // others for the last of it, and a small allocation that loses aborts.
    match crate::memory::address_space_left() {
        Some(left) => per_batch.min(
            usize::try_from(left / (4 * size as u64))
                .unwrap_or(usize::MAX)
                .max(1),
        ),
        None => per_batch,
    }
}

/// Parses each of `blocks` (with whether it starts the text) into its rows
/// of `pool`, in parallel: the lines read, or `None` where a block must be
/// read again into the merged rows (every block when not `reading.fast`).
fn parse_blocks<T: TextRows>(
    blocks: &[(Cow<'_, [u8]>, bool)],
    pool: &mut [T],
    reading: Reading,
    path: &Path,
    max_line: usize,
) -> Vec<Option<u64>> {
    let parse = |((block, at_start), local): (&(Cow<'_, [u8]>, bool), &mut T)| {
        parse_block(local, block, *at_start, path, max_line)
    };
    // One block (every small file) is parsed right here: handing it to
    // the thread pool would only add the hand-over.
    if !reading.fast {
        vec![None; blocks.len()]
    } else if blocks.len() == 1 {
        vec![parse((&blocks[0], &mut pool[0]))]
    } else {
        blocks
            .par_iter()
            .zip(pool.par_iter_mut())
            .map(parse)
            .collect()
    }
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
    use super::*;

    /// Blocks of whole lines cover the text once, in order, from memory
    /// and from a reader alike; a line longer than the limit ends a block
    /// just past the limit.
    #[test]
    fn blocks_are_whole_lines_covering_the_text() {
        let text: Vec<u8> = (0..2000)
            .flat_map(|i| format!("{i}\n").into_bytes())
            .collect();
        for size in [1, 3, 100, 4096] {
            let mut pending = None;
            let mut from_memory = Text::bytes(&text);
            let mut from_reader = Text::reader(io::BufReader::with_capacity(7, &text[..]));
            for source in [&mut from_memory, &mut from_reader] {
                let mut seen = Vec::new();
                while let Some(block) = source.next_block(size, 1 << 20, &mut pending).unwrap() {
                    assert!(block.len() >= size.min(text.len() - seen.len()), "{size}");
                    assert_eq!(block.last(), Some(&b'\n'), "{size}");
                    seen.extend_from_slice(&block);
                }
                assert_eq!(seen, text, "{size}");
            }
        }
        let long = [b'7'; 50];
        let mut pending = None;
        let mut source = Text::bytes(&long);
        let block = source.next_block(4, 10, &mut pending).unwrap().unwrap();
        assert_eq!(block.len(), 15);
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
