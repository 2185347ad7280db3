//! The bytes of the messages ranks exchange: little-endian integers, floats
//! as their exact bits, and length-prefixed strings and vectors. The
//! reader refuses a message that ends early, since a rank that misread its
//! peer must not go on with a different state.

use crate::error::{Error, Result};
use crate::float::Real;

/// Builds a message.
#[derive(Default)]
pub struct Writer(pub Vec<u8>);

impl Writer {
    pub fn u8(&mut self, v: u8) -> &mut Self {
        self.0.push(v);
        self
    }

    pub fn u64(&mut self, v: u64) -> &mut Self {
        self.0.extend_from_slice(&v.to_le_bytes());
        self
    }

    pub fn bool(&mut self, v: bool) -> &mut Self {
        self.u8(v as u8)
    }

    pub fn str(&mut self, s: &str) -> &mut Self {
        self.u64(s.len() as u64);
        self.0.extend_from_slice(s.as_bytes());
        self
    }

    /// Values of `F` as their exact bits.
    pub fn reals<F: Real>(&mut self, v: &[F]) -> &mut Self {
        self.u64(v.len() as u64);
        for x in v {
            self.0.extend_from_slice(bytemuck::bytes_of(x));
        }
        self
    }

    pub fn u64s(&mut self, v: &[u64]) -> &mut Self {
        self.u64(v.len() as u64);
        for &x in v {
            self.u64(x);
        }
        self
    }

    pub fn u32s(&mut self, v: &[u32]) -> &mut Self {
        self.u64(v.len() as u64);
        for x in v {
            self.0.extend_from_slice(&x.to_le_bytes());
        }
        self
    }

    pub fn finish(&mut self) -> Vec<u8> {
        std::mem::take(&mut self.0)
    }
}

/// Reads a message in the order it was written.
pub struct Reader<'a> {
    bytes: &'a [u8],
    at: usize,
}

impl<'a> Reader<'a> {
    pub fn new(bytes: &'a [u8]) -> Self {
        Reader { bytes, at: 0 }
    }

    fn take(&mut self, n: usize) -> Result<&'a [u8]> {
        let end = self.at.checked_add(n).filter(|&e| e <= self.bytes.len());
        let Some(end) = end else {
            return Err(Error::Train(format!(
                "a message from another rank ended early ({} bytes, {} more wanted at {})",
                self.bytes.len(),
                n,
                self.at
            )));
        };
        let s = &self.bytes[self.at..end];
        self.at = end;
        Ok(s)
    }

    pub fn u8(&mut self) -> Result<u8> {
        Ok(self.take(1)?[0])
    }

    pub fn u64(&mut self) -> Result<u64> {
        let b = self.take(8)?;
        let mut a = [0u8; 8];
        a.copy_from_slice(b);
        Ok(u64::from_le_bytes(a))
    }

    pub fn usize(&mut self) -> Result<usize> {
        let v = self.u64()?;
        usize::try_from(v).map_err(|_| Error::Train(format!("{v} does not fit this platform")))
    }

    pub fn bool(&mut self) -> Result<bool> {
        Ok(self.u8()? != 0)
    }

    pub fn str(&mut self) -> Result<String> {
        let n = self.usize()?;
        Ok(String::from_utf8_lossy(self.take(n)?).into_owned())
    }

    pub fn reals<F: Real>(&mut self) -> Result<Vec<F>> {
        let n = self.usize()?;
        let size = std::mem::size_of::<F>();
        let b = self.take(n.saturating_mul(size))?;
        Ok(b.chunks_exact(size)
            .map(bytemuck::pod_read_unaligned::<F>)
            .collect())
    }

    pub fn u64s(&mut self) -> Result<Vec<u64>> {
        let n = self.usize()?;
        (0..n).map(|_| self.u64()).collect()
    }

    pub fn u32s(&mut self) -> Result<Vec<u32>> {
        let n = self.usize()?;
        let b = self.take(n.saturating_mul(4))?;
        Ok(b.chunks_exact(4)
            .map(|c| u32::from_le_bytes([c[0], c[1], c[2], c[3]]))
            .collect())
    }

    /// Whether every byte was read.
    pub fn done(&self) -> bool {
        self.at == self.bytes.len()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn what_is_written_reads_back_and_short_messages_are_refused() {
        let mut w = Writer::default();
        w.u8(7)
            .u64(1 << 40)
            .bool(true)
            .str("é,x")
            .reals(&[1.5f32, -0.0, f32::MIN_POSITIVE / 2.0])
            .u64s(&[3, 4])
            .u32s(&[9]);
        let b = w.finish();
        let mut r = Reader::new(&b);
        assert_eq!(r.u8().unwrap(), 7);
        assert_eq!(r.u64().unwrap(), 1 << 40);
        assert!(r.bool().unwrap());
        assert_eq!(r.str().unwrap(), "é,x");
        let f = r.reals::<f32>().unwrap();
        assert_eq!(f[1].to_bits(), (-0.0f32).to_bits());
        assert_eq!(f[2], f32::MIN_POSITIVE / 2.0);
        assert_eq!(r.u64s().unwrap(), [3, 4]);
        assert_eq!(r.u32s().unwrap(), [9]);
        assert!(r.done());
        assert!(Reader::new(&b[..5]).u64().is_err());
    }
}
