//! The model file's weight array written on all cores, byte for byte as
//! serde_json's pretty printer writes it: a model of 10^6 features is 25 MB
//! of JSON, and formatting it number by number on one core took about as
//! long as the pass that judges the training accuracy after the last epoch.
//! (One-vs-rest files are still written by serde_json alone.)

use std::io::{self, Write};

use rayon::prelude::*;
use serde::Serialize;

use crate::float::Real;

/// Numbers formatted per task: large enough that a task's hand-over is
/// noise, small enough that every core gets many.
const CHUNK: usize = 1 << 14;
/// Chunks formatted before they are written: bounds the text held at once
/// (about 3 MB).
const CHUNKS_PER_BATCH: usize = 8;

/// Writes `file` as `serde_json::to_writer_pretty` would, with `numbers` as
/// the array of its top-level field `key`, which `file` holds empty. The
/// numbers are written as their f64 values, as serde_json writes a
/// `Vec<f64>` of them.
pub(super) fn write_pretty_with<F: Real>(
    w: &mut dyn Write,
    file: &impl Serialize,
    key: &str,
    numbers: &[F],
) -> io::Result<()> {
    let mut text = Vec::new();
    serde_json::to_writer_pretty(&mut text, file).map_err(io::Error::other)?;
    // A top-level field starts a line indented by two spaces; no string in
    // the file can hold a raw newline, so this is that field.
    let field = format!("\n  \"{key}\": []");
    let at = memchr::memmem::find(&text, field.as_bytes())
        .map(|k| k + field.len() - 2)
        .ok_or_else(|| io::Error::other(format!("the model's JSON has no empty \"{key}\"")))?;
    w.write_all(&text[..at])?;
    write_array(w, numbers)?;
    w.write_all(&text[at + 2..])
}

/// The array as the pretty printer writes one at depth 1: one number a
/// line, indented by four spaces, the closing bracket by two.
fn write_array<F: Real>(w: &mut dyn Write, numbers: &[F]) -> io::Result<()> {
    if numbers.is_empty() {
        return w.write_all(b"[]");
    }
    w.write_all(b"[")?;
    // The same buffers for every batch: fresh ones would be fresh pages,
    // faulted in and cleared for every batch.
    let mut texts: Vec<Vec<u8>> = vec![Vec::new(); CHUNKS_PER_BATCH];
    let mut first = true;
    for batch in numbers.chunks(CHUNK * CHUNKS_PER_BATCH) {
        let used = batch.len().div_ceil(CHUNK);
        texts
            .par_iter_mut()
            .zip(batch.par_chunks(CHUNK))
            .for_each(|(text, chunk)| {
                text.clear();
                text.reserve(chunk.len() * 26);
                let mut buffer = zmij::Buffer::new();
                for &x in chunk {
                    let x = x.to_f64();
                    text.extend_from_slice(b",\n    ");
                    // serde_json writes what JSON cannot hold as null.
                    if x.is_finite() {
                        text.extend_from_slice(buffer.format_finite(x).as_bytes());
                    } else {
                        text.extend_from_slice(b"null");
                    }
                }
            });
        for text in &texts[..used] {
            // The first number follows the bracket without a comma.
            let skip = if first { 1 } else { 0 };
            first = false;
            w.write_all(&text[skip..])?;
        }
    }
    w.write_all(b"\n  ]")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[derive(Serialize)]
    struct Shape {
        name: String,
        weights: Vec<f64>,
        nested: Vec<Vec<f64>>,
        bias: f64,
    }

    fn both(name: &str, weights: Vec<f64>) -> (Vec<u8>, Vec<u8>) {
        let full = Shape {
            name: name.into(),
            weights: weights.clone(),
            nested: vec![vec![1.5, -0.0], vec![]],
            bias: 0.25,
        };
        let mut want = Vec::new();
        serde_json::to_writer_pretty(&mut want, &full).unwrap();
        let empty = Shape {
            weights: Vec::new(),
            ..full
        };
        let mut got = Vec::new();
        write_pretty_with(&mut got, &empty, "weights", &weights).unwrap();
        (got, want)
    }

    /// Every length around the chunk and batch edges, every kind of number
    /// (and a name that holds the field's own text), byte for byte.
    #[test]
    fn the_same_bytes_as_serde_json() {
        let kinds = [
            0.0,
            -0.0,
            1.0,
            -3.5,
            0.1f32 as f64,
            1e-45f32 as f64,
            f32::MAX as f64,
            1e300,
            5e-324,
            f64::INFINITY,
            f64::NAN,
            123456789.0,
        ];
        let lengths = [
            0,
            1,
            2,
            13,
            CHUNK - 1,
            CHUNK,
            CHUNK + 1,
            CHUNK * CHUNKS_PER_BATCH + 3,
        ];
        for n in lengths {
            let weights: Vec<f64> = (0..n)
                .map(|i| kinds[i % kinds.len()] * if i % 7 == 0 { -1.0 } else { 1.0 })
                .collect();
            let (got, want) = both("x\n  \"weights\": []", weights);
            assert!(got == want, "length {n}");
        }
    }

    #[test]
    fn a_file_without_the_field_is_an_error_not_a_panic() {
        let mut out = Vec::new();
        let err = write_pretty_with(&mut out, &vec![1.0], "weights", &[1.0]).unwrap_err();
        assert!(err.to_string().contains("\"weights\""), "{err}");
    }
}
