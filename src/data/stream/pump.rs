//! Reading a source on a helper thread, so that bytes are handed over as
//! soon as they arrive and a wait for them can be cut short.

use std::io::{self, ErrorKind, Read};
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::mpsc::{Receiver, RecvTimeoutError, sync_channel};
use std::time::Duration;

/// Bytes the reading thread asks for at a time.
pub(super) const CHUNK_BYTES: usize = 64 << 10;

/// How often a wait for input checks the stop flag.
const POLL: Duration = Duration::from_millis(50);

/// Reads a source on a helper thread, a chunk at a time, and hands the bytes
/// over as they arrive; a wait can be cut short by the stop flag.
pub(super) struct Pump {
    rx: Receiver<io::Result<Vec<u8>>>,
    chunk: Vec<u8>,
    pos: usize,
    done: bool,
    stop: Option<Arc<AtomicBool>>,
}

impl Pump {
    pub(super) fn spawn(
        mut src: Box<dyn Read + Send>,
        stop: Option<Arc<AtomicBool>>,
    ) -> io::Result<Self> {
        // A few chunks in flight at most: memory stays bounded however far
        // the reader runs ahead.
        let (tx, rx) = sync_channel::<io::Result<Vec<u8>>>(4);
        std::thread::Builder::new()
            .name("perceptron-input".into())
            .spawn(move || {
                loop {
                    let mut buf = vec![0u8; CHUNK_BYTES];
                    let n = match src.read(&mut buf) {
                        Ok(n) => n,
                        Err(e) if e.kind() == ErrorKind::Interrupted => continue,
                        Err(e) => {
                            let _ = tx.send(Err(e));
                            return;
                        }
                    };
                    buf.truncate(n);
                    if n < CHUNK_BYTES / 4 {
                        buf.shrink_to_fit();
                    }
                    // An empty chunk marks the end; a closed channel means
                    // nobody reads any more.
                    if tx.send(Ok(buf)).is_err() || n == 0 {
                        return;
                    }
                }
            })?;
        Ok(Pump {
            rx,
            chunk: Vec::new(),
            pos: 0,
            done: false,
            stop,
        })
    }

    /// Appends the next chunk to the unread bytes; false at the end of the
    /// input.
    fn fill(&mut self) -> io::Result<bool> {
        if self.done {
            return Ok(false);
        }
        loop {
            match self.rx.recv_timeout(POLL) {
                Ok(Ok(buf)) if buf.is_empty() => {
                    self.done = true;
                    return Ok(false);
                }
                Ok(Ok(buf)) => {
                    if self.pos >= self.chunk.len() {
                        self.chunk = buf;
                    } else {
                        self.chunk.drain(..self.pos);
                        self.chunk.extend_from_slice(&buf);
                    }
                    self.pos = 0;
                    return Ok(true);
                }
                Ok(Err(e)) => {
                    self.done = true;
                    return Err(e);
                }
                Err(RecvTimeoutError::Timeout) => {
                    if self
                        .stop
                        .as_ref()
                        .is_some_and(|s| s.load(Ordering::Relaxed))
                    {
                        return Err(io::Error::other("stopped while waiting for input"));
                    }
                }
                Err(RecvTimeoutError::Disconnected) => {
                    self.done = true;
                    return Ok(false);
                }
            }
        }
    }

    /// At least `n` unread bytes, or all that remain before the end.
    pub(super) fn peek(&mut self, n: usize) -> io::Result<&[u8]> {
        while self.chunk.len() - self.pos < n && self.fill()? {}
        Ok(&self.chunk[self.pos..])
    }
}

impl Read for Pump {
    fn read(&mut self, out: &mut [u8]) -> io::Result<usize> {
        if out.is_empty() {
            return Ok(0);
        }
        while self.pos >= self.chunk.len() {
            if !self.fill()? {
                return Ok(0);
            }
        }
        let n = out.len().min(self.chunk.len() - self.pos);
        out[..n].copy_from_slice(&self.chunk[self.pos..self.pos + n]);
        self.pos += n;
        Ok(n)
    }
}
