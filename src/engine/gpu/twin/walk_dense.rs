//! Twin of shaders/walk_dense.wgsl: the walk's scan and step over dense
//! rows.

use super::dense_row_dot;
use super::lanes::RowDot;
use super::walk_common::*;
use crate::float::Real;

/// walk_dense.wgsl `walk_scan_dense` (`x` holds the chunk's rows).
pub fn scan_dense<F: Real>(b: &mut Bindings<F>, lanes: u32, x: &[F]) {
    let w = walk_open(b);
    if !w.go {
        return;
    }
    let cols = b.params.cols as usize;
    for row in w.p..w.end {
        let xr = &x[row as usize * cols..(row as usize + 1) * cols];
        let d = dense_row_dot(lanes, &b.weights, xr, b.params.bias != 0);
        b.slack[(row - w.p) as usize] = scanned(b, row, d);
    }
}

/// walk_dense.wgsl `block_dot_dense`: lane `lane`'s share of row `row`.
fn block_dot_dense<F: Real>(weights: &[F], x: &[F], cols: usize, row: u32, lane: u32) -> RowDot<F> {
    let (mut s, mut t) = (F::ZERO, F::ZERO);
    let xbase = row as usize * cols;
    let mut k = lane as usize;
    while k < cols {
        let p = weights[k] * x[xbase + k];
        s = s + p;
        t = t + p.abs();
        k += BLOCK_LANES as usize;
    }
    RowDot {
        s,
        t,
        terms: cols as u32,
    }
}

/// walk_dense.wgsl `walk_step_dense`.
pub fn step_dense<F: Real>(b: &mut Bindings<F>, x: &[F]) {
    let mut s = walk_open(b);
    if !s.go {
        return;
    }
    let cols = b.params.cols as usize;
    loop {
        step_search(b, &mut s);
        if !s.go {
            break;
        }
        let q = s.row;
        if s.verdict == 2 && !s.fresh {
            refresh(b, &mut s, q, |w, row, lane| {
                block_dot_dense(w, x, cols, row, lane)
            });
            if !s.go {
                break;
            }
            if s.verdict == 0 {
                continue;
            }
        }
        let xbase = q as usize * cols;
        let plus = positive(&b.bits, q);
        let mut mistake = s.verdict == 1;
        let mut flags = ENTRY_MISTAKE;
        if s.verdict == 2 {
            flags = ENTRY_SPECULATIVE;
            let products = (0..cols).map(|k| b.weights[k] * x[xbase + k]);
            mistake = reference_decision(&b.params, &b.weights, products, plus);
            if mistake {
                flags |= ENTRY_MISTAKE;
            }
        }
        let mut subnormal = false;
        if mistake {
            let base = (s.n * b.params.stride) as usize;
            for k in 0..cols {
                subnormal |= update_coordinate(b, k, x[xbase + k], plus, base + k);
            }
            if b.params.bias != 0 {
                subnormal |= update_coordinate(b, cols, F::ONE, plus, base + cols);
            }
        }
        step_decided(b, &mut s, q, flags, mistake, subnormal);
        if !s.go {
            break;
        }
    }
    step_close(b, &s);
}
