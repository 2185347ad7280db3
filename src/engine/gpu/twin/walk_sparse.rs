//! Twin of shaders/walk_sparse.wgsl: the walk's scan and step over CSR
//! rows.

use super::lanes::RowDot;
use super::row_dot_sparse::row_dot_sparse;
use super::walk_common::*;
use crate::float::Real;

/// walk_sparse.wgsl `walk_scan_sparse` (chunk-local CSR arrays).
pub fn scan_sparse<F: Real>(b: &mut Bindings<F>, lanes: u32, csr: (&[usize], &[u32], &[F])) {
    let w = walk_open(b);
    if !w.go {
        return;
    }
    let (row_ptr, col_index, values) = csr;
    for row in w.p..w.end {
        let (begin, end) = (row_ptr[row as usize], row_ptr[row as usize + 1]);
        let d = row_dot_sparse(
            lanes,
            &b.weights,
            &col_index[begin..end],
            &values[begin..end],
            b.params.cols as usize,
            b.params.bias != 0,
        );
        b.slack[(row - w.p) as usize] = scanned(b, row, d);
    }
}

/// walk_sparse.wgsl `block_dot_sparse`: lane `lane`'s share of row `row`.
fn block_dot_sparse<F: Real>(
    weights: &[F],
    csr: (&[usize], &[u32], &[F]),
    row: u32,
    lane: u32,
) -> RowDot<F> {
    let (row_ptr, col_index, values) = csr;
    let (begin, end) = (row_ptr[row as usize], row_ptr[row as usize + 1]);
    let (mut s, mut t) = (F::ZERO, F::ZERO);
    let mut e = begin + lane as usize;
    while e < end {
        let p = weights[col_index[e] as usize] * values[e];
        s = s + p;
        t = t + p.abs();
        e += BLOCK_LANES as usize;
    }
    RowDot {
        s,
        t,
        terms: (end - begin) as u32,
    }
}

/// walk_sparse.wgsl `walk_step_sparse`.
pub fn step_sparse<F: Real>(b: &mut Bindings<F>, csr: (&[usize], &[u32], &[F])) {
    let mut s = walk_open(b);
    if !s.go {
        return;
    }
    let (row_ptr, col_index, values) = csr;
    loop {
        step_search(b, &mut s);
        if !s.go {
            break;
        }
        let q = s.row;
        if s.verdict == 2 && !s.fresh {
            refresh(b, &mut s, q, |w, row, lane| {
                block_dot_sparse(w, csr, row, lane)
            });
            if !s.go {
                break;
            }
            if s.verdict == 0 {
                continue;
            }
        }
        let (begin, end) = (row_ptr[q as usize], row_ptr[q as usize + 1]);
        let plus = positive(&b.bits, q);
        let mut mistake = s.verdict == 1;
        let mut flags = ENTRY_MISTAKE;
        if s.verdict == 2 {
            flags = ENTRY_SPECULATIVE;
            let products = (begin..end).map(|e| b.weights[col_index[e] as usize] * values[e]);
            mistake = reference_decision(&b.params, &b.weights, products, plus);
            if mistake {
                flags |= ENTRY_MISTAKE;
            }
        }
        let mut subnormal = false;
        if mistake {
            let out = (s.n * b.params.stride) as usize;
            for e in begin..end {
                let k = col_index[e] as usize;
                subnormal |= update_coordinate(b, k, values[e], plus, out + (e - begin));
            }
            if b.params.bias != 0 {
                let cols = b.params.cols as usize;
                subnormal |= update_coordinate(b, cols, F::ONE, plus, out + (end - begin));
            }
        }
        step_decided(b, &mut s, q, flags, mistake, subnormal);
        if !s.go {
            break;
        }
    }
    step_close(b, &s);
}
