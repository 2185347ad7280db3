//! The model file's weight arrays written on all cores, byte for byte as
//! serde_json's pretty printer writes them: a model of 10^6 features is 25
//! MB of JSON (a one-vs-rest model that much a class), and formatting it
//! number by number on one core took about as long as the pass that judges
//! the training accuracy after the last epoch.

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
    write_pretty_around(w, file, key, |w| write_array(w, numbers, 1))
}

/// [`write_pretty_with`] for a field that is an array of arrays (the
/// weights of a one-vs-rest model, one array a class).
pub(super) fn write_pretty_with_arrays<F: Real>(
    w: &mut dyn Write,
    file: &impl Serialize,
    key: &str,
    arrays: &[&[F]],
) -> io::Result<()> {
    write_pretty_around(w, file, key, |w| {
        if arrays.is_empty() {
            return w.write_all(b"[]");
        }
        let line = new_line(2);
        for (i, numbers) in arrays.iter().enumerate() {
            w.write_all(if i == 0 { b"[" } else { b"," })?;
            w.write_all(&line)?;
            write_array(w, numbers, 2)?;
        }
        w.write_all(&new_line(1))?;
        w.write_all(b"]")
    })
}

/// A line break and the pretty printer's indent at `depth`: two spaces a
/// level.
fn new_line(depth: usize) -> Vec<u8> {
    let mut line = vec![b' '; 1 + 2 * depth];
    line[0] = b'\n';
    line
}

/// Writes `file` pretty, with `array` writing the top-level field `key`,
/// which `file` holds empty.
fn write_pretty_around(
    w: &mut dyn Write,
    file: &impl Serialize,
    key: &str,
    array: impl FnOnce(&mut dyn Write) -> io::Result<()>,
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
    array(w)?;
    w.write_all(&text[at + 2..])
}

/// The array as the pretty printer writes one at `depth` (1 for a top-level
/// field): one number a line, indented by two spaces a level, the closing
/// bracket one level less.
fn write_array<F: Real>(w: &mut dyn Write, numbers: &[F], depth: usize) -> io::Result<()> {
    if numbers.is_empty() {
        return w.write_all(b"[]");
    }
    let separator = [&b","[..], &new_line(depth + 1)].concat();
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
                    text.extend_from_slice(&separator);
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
    w.write_all(&new_line(depth))?;
    w.write_all(b"]")
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

    /// The same for an array of arrays, in the field `nested`.
    fn both_nested(arrays: Vec<Vec<f64>>) -> (Vec<u8>, Vec<u8>) {
        let full = Shape {
            name: "y".into(),
            weights: vec![2.0],
            nested: arrays.clone(),
            bias: -1.0,
        };
        let mut want = Vec::new();
        serde_json::to_writer_pretty(&mut want, &full).unwrap();
        let empty = Shape {
            nested: Vec::new(),
            ..full
        };
        let views: Vec<&[f64]> = arrays.iter().map(Vec::as_slice).collect();
        let mut got = Vec::new();
        write_pretty_with_arrays(&mut got, &empty, "nested", &views).unwrap();
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
            let (got, want) = both("x\n  \"weights\": []", weights.clone());
            assert!(got == want, "length {n}");
            // One to three arrays of lengths around the edges, this one last.
            for k in 0..3 {
                let mut arrays: Vec<Vec<f64>> = lengths[..k]
                    .iter()
                    .map(|&m| (0..m).map(|i| kinds[(i + k) % kinds.len()]).collect())
                    .collect();
                arrays.push(weights.clone());
                let (got, want) = both_nested(arrays);
                assert!(
                    got == want,
                    "{k} arrays before one of length {n}:\n{}\n{}",
                    String::from_utf8_lossy(&got[..got.len().min(400)]),
                    String::from_utf8_lossy(&want[..want.len().min(400)])
                );
            }
        }
        let (got, want) = both_nested(Vec::new());
        assert!(got == want, "no arrays");
    }

    #[test]
    fn a_file_without_the_field_is_an_error_not_a_panic() {
        let mut out = Vec::new();
        let err = write_pretty_with(&mut out, &vec![1.0], "weights", &[1.0]).unwrap_err();
        assert!(err.to_string().contains("\"weights\""), "{err}");
    }
}
