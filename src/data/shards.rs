//! Several data files taken in order as one dataset ("shards"): a list of
//! paths, or a glob pattern expanded in sorted order.
//!
//! Each file is read as it would be alone (its own format, header and
//! comments); the rows follow one another in the order given. Rules: the
//! shards are all dense (CSV, dense `.pbin`) or all sparse (LIBSVM, CSR
//! `.pbin`); dense shards have the same number of features, sparse ones
//! together have as many as the largest index. The label values are those
//! of every shard, in order of first appearance (so the -1/+1 mapping is
//! the one a single file holding all the rows would get).

use std::path::{Path, PathBuf};

use crate::error::{Error, Result};
use crate::float::Real;

use super::labels::LabelTable;
use super::matrix::{CsrMatrix, DenseMatrix, Features};
use super::options::{IndexBase, LoadOptions};
use super::raw::{BaseWhy, LibsvmInfo, RawData};

/// The data a command names, read raw in precision `F`, and the name
/// messages give it. No path: piped standard input, else the bundled demo
/// (digits 3 vs 5). One (a pattern matching one file included): that file,
/// an error about an omitted one explained. Several: the shards in order,
/// named all together.
pub fn load_given<F: Real>(given: &[PathBuf], opts: &LoadOptions) -> Result<(RawData<F>, PathBuf)> {
    let omitted = given.is_empty();
    let given: Vec<PathBuf> = match omitted {
        true => super::source::omitted_data().into_iter().collect(),
        false => given.to_vec(),
    };
    let paths = expand(&given)?;
    Ok(match paths.as_slice() {
        [] => super::bundled::raw_digits_3v5::<F>(opts)?,
        [path] => (
            super::load_raw::<F>(path, opts).map_err(|e| match omitted {
                true => super::source::explain_omitted(e),
                false => e,
            })?,
            super::source::name(path).to_path_buf(),
        ),
        // Shards: messages about the whole name them all.
        many => (
            load_raw_all::<F>(many, opts)?,
            PathBuf::from(describe(many)),
        ),
    })
}

/// The paths DATA stands for: each argument as given, except that one
/// holding `*`, `?` or `[` that names no existing file is a pattern,
/// replaced by the files it matches in sorted order (none is an error).
pub fn expand(args: &[PathBuf]) -> Result<Vec<PathBuf>> {
    if args.len() > 1 && args.iter().any(|a| super::source::is_stdin(a)) {
        return Err(Error::Usage(
            "`-` (standard input) can only be the one DATA; several DATA files are \
             read one after another as shards"
                .into(),
        ));
    }
    let mut out = Vec::new();
    for a in args {
        let text = a.to_string_lossy();
        let pattern = text.contains(['*', '?', '[']) && !a.exists();
        if !pattern {
            out.push(a.clone());
            continue;
        }
        let matches = glob::glob(&text)
            .map_err(|e| Error::Usage(format!("{text}: not a valid file pattern: {e}")))?;
        let mut found = Vec::new();
        for m in matches {
            let p = m.map_err(|e| {
                let path = e.path().to_path_buf();
                Error::io(&path, "cannot list", e.into())
            })?;
            if p.is_file() {
                found.push(p);
            }
        }
        if found.is_empty() {
            return Err(Error::Usage(format!(
                "{text}: no file matches this pattern"
            )));
        }
        found.sort();
        out.extend(found);
    }
    Ok(out)
}

/// Reads every file of `paths` and joins their rows, in order.
///
/// LIBSVM shards are one dataset, so they are read with one index base:
/// when it is detected, an index 0 in any of them makes them all
/// zero-based (the ones read one-based are read again), as one file holding
/// all their rows would be.
pub fn load_raw_all<F: Real>(paths: &[PathBuf], opts: &LoadOptions) -> Result<RawData<F>> {
    let mut pieces = Vec::with_capacity(paths.len());
    for p in paths {
        pieces.push((p.clone(), super::load_raw::<F>(p, opts)?));
    }
    let zero_based = pieces
        .iter()
        .any(|(_, r)| r.libsvm.as_ref().is_some_and(|i| i.base == IndexBase::Zero));
    if opts.index_base.is_none() && zero_based {
        let zero = LoadOptions {
            index_base: Some(IndexBase::Zero),
            ..opts.clone()
        };
        for (p, r) in &mut pieces {
            if r.libsvm.as_ref().is_some_and(|i| i.base == IndexBase::One) {
                *r = super::load_raw::<F>(p, &zero)?;
            }
        }
    }
    concat(pieces)
}

/// How the LIBSVM pieces were read: one base for all (else an error naming
/// two files that differ), and why (the first index 0 when one was
/// detected).
fn joined_base<F>(all: &[(PathBuf, RawData<F>)]) -> Result<Option<LibsvmInfo>> {
    let mut read = all
        .iter()
        .filter_map(|(p, r)| r.libsvm.as_ref().map(|i| (p, i)));
    let Some((first_path, first)) = read.next() else {
        return Ok(None);
    };
    let mut why = first.why.clone();
    for (p, i) in read {
        if i.base != first.base {
            return Err(Error::data(
                p,
                format!(
                    "was read {} but {} was read {}; the shards of one dataset must count \
                     their feature indices alike (pass --zero-based or --one-based)",
                    i.base.words(),
                    first_path.display(),
                    first.base.words()
                ),
            ));
        }
        if !matches!(why, BaseWhy::ZeroAt { .. }) && matches!(i.why, BaseWhy::ZeroAt { .. }) {
            why = i.why.clone();
        }
    }
    Ok(Some(LibsvmInfo {
        base: first.base,
        why,
    }))
}

/// How a list of shards is named in reports: the one path, or the first
/// and how many more.
pub fn describe(paths: &[PathBuf]) -> String {
    match paths {
        [] => String::new(),
        [one] => one.display().to_string(),
        [first, rest @ ..] => format!(
            "{} and {} more shard{}",
            first.display(),
            rest.len(),
            if rest.len() == 1 { "" } else { "s" }
        ),
    }
}

/// Joins pieces of data (each named by its file, for messages) into one, in
/// order, following the rules of this module. The labels' first lines are
/// those of the file where each first appears.
pub fn concat<F: Real>(pieces: Vec<(PathBuf, RawData<F>)>) -> Result<RawData<F>> {
    let mut pieces = pieces.into_iter();
    let Some((first_path, first)) = pieces.next() else {
        return Err(Error::Usage("no data files".into()));
    };
    let rest: Vec<(PathBuf, RawData<F>)> = pieces.collect();
    if rest.is_empty() {
        return Ok(first);
    }
    let sparse = first.features.is_sparse();
    let mut cols = first.features.cols();
    for (p, r) in &rest {
        check_shape(
            &first_path,
            Shape::of(&first.features),
            p,
            Shape::of(&r.features),
        )?;
        check_names(&first_path, first.csv.as_ref(), p, r.csv.as_ref())?;
        cols = cols.max(r.features.cols());
    }
    let all: Vec<(PathBuf, RawData<F>)> =
        std::iter::once((first_path, first)).chain(rest).collect();
    let libsvm = joined_base(&all)?;
    let rows: usize = all.iter().map(|(_, r)| r.features.rows()).sum();
    let nnz: usize = all.iter().map(|(_, r)| r.features.stored()).sum();
    let (table, class_ids) = joined_labels(&all, rows)?;
    let features = if sparse {
        joined_sparse(&all, rows, cols, nnz)?
    } else {
        joined_dense(&all, rows, cols, nnz)?
    };
    let (_, first) = &all[0];
    Ok(RawData {
        features,
        class_ids,
        table,
        format: first.format,
        csv: all.iter().find_map(|(_, r)| r.csv.clone()),
        libsvm,
    })
}

/// The error for memory short of the joined shards' `what`, named after
/// the last shard's file `p`.
fn too_big(p: &Path, what: &str, s: crate::memory::Shortfall) -> Error {
    s.refusal(p, &format!("the {what} of the joined shards"), "")
}

/// The last shard's file: the one a shortfall of memory is named after.
fn last_path<F>(all: &[(PathBuf, RawData<F>)]) -> &Path {
    &all[all.len() - 1].0
}

/// The label table of all the shards and the class ids of their `rows`
/// rows in it.
fn joined_labels<F>(all: &[(PathBuf, RawData<F>)], rows: usize) -> Result<(LabelTable, Vec<u32>)> {
    let mut table = LabelTable::default();
    let mut class_ids = Vec::new();
    let last = last_path(all);
    crate::memory::reserve(&mut class_ids, rows).map_err(|s| too_big(last, "labels", s))?;
    for (p, r) in all {
        let ids = table.absorb(&r.table, 0).ok_or_else(|| {
            Error::data(
                p,
                format!(
                    "the shards have more than {} distinct label values together",
                    super::labels::MAX_DISTINCT_LABELS
                ),
            )
        })?;
        class_ids.extend(r.class_ids.iter().map(|&c| ids[c as usize]));
    }
    Ok((table, class_ids))
}

/// The sparse shards' rows, one after another: `rows` rows of `cols`
/// columns, `nnz` stored values.
fn joined_sparse<F: Real>(
    all: &[(PathBuf, RawData<F>)],
    rows: usize,
    cols: usize,
    nnz: usize,
) -> Result<Features<F>> {
    let last = last_path(all);
    let mut row_ptr: Vec<usize> = Vec::new();
    let mut indices: Vec<u32> = Vec::new();
    let mut values: Vec<F> = Vec::new();
    crate::memory::reserve(&mut row_ptr, rows + 1).map_err(|s| too_big(last, "rows", s))?;
    crate::memory::reserve(&mut indices, nnz).map_err(|s| too_big(last, "indices", s))?;
    crate::memory::reserve(&mut values, nnz).map_err(|s| too_big(last, "values", s))?;
    row_ptr.push(0);
    for (_, r) in all {
        if let Features::Sparse(m) = &r.features {
            let base = values.len() - m.row_ptr[0];
            row_ptr.extend(m.row_ptr[1..].iter().map(|&e| base + e));
            indices.extend_from_slice(&m.indices);
            values.extend_from_slice(&m.values);
        }
    }
    Ok(Features::Sparse(CsrMatrix {
        cols,
        row_ptr: row_ptr.into(),
        indices: indices.into(),
        values: values.into(),
    }))
}

/// The dense shards' rows, one after another: `rows` rows of `cols`
/// columns, `nnz` values.
fn joined_dense<F: Real>(
    all: &[(PathBuf, RawData<F>)],
    rows: usize,
    cols: usize,
    nnz: usize,
) -> Result<Features<F>> {
    let mut values: Vec<F> = Vec::new();
    crate::memory::reserve(&mut values, nnz).map_err(|s| too_big(last_path(all), "values", s))?;
    for (_, r) in all {
        if let Features::Dense(m) = &r.features {
            values.extend_from_slice(&m.values);
        }
    }
    Ok(Features::Dense(DenseMatrix {
        rows,
        cols,
        values: values.into(),
    }))
}

/// What must agree between shards: sparse or dense, and the columns.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Shape {
    pub sparse: bool,
    pub cols: usize,
}

impl Shape {
    pub fn of<F: Real>(f: &Features<F>) -> Self {
        Shape {
            sparse: f.is_sparse(),
            cols: f.cols(),
        }
    }
}

/// Refuses a shard whose layout or width does not join `first`'s.
pub fn check_shape(first_path: &Path, first: Shape, path: &Path, this: Shape) -> Result<()> {
    let kind = |s: Shape| if s.sparse { "sparse" } else { "dense" };
    if first.sparse != this.sparse {
        return Err(Error::data(
            path,
            format!(
                "is {} but the first shard {} is {}; shards must be all dense or all sparse \
                 (convert them with `perceptron convert --layout`)",
                kind(this),
                first_path.display(),
                kind(first)
            ),
        ));
    }
    if !first.sparse && first.cols != this.cols {
        return Err(Error::data(
            path,
            format!(
                "has {} feature columns but the first shard {} has {}; dense shards must have \
                 the same columns",
                this.cols,
                first_path.display(),
                first.cols
            ),
        ));
    }
    Ok(())
}

/// CSV shards that both have a header name the same columns in the same
/// order: rows are joined by position, so `y,a,b` and then `y,b,a` would
/// silently swap two features. (A shard without a header is taken by
/// position, as the rules say.)
pub fn check_names(
    first_path: &Path,
    first: Option<&super::raw::CsvInfo>,
    path: &Path,
    this: Option<&super::raw::CsvInfo>,
) -> Result<()> {
    let (Some(first), Some(this)) = (first, this) else {
        return Ok(());
    };
    if first.names.is_empty() || this.names.is_empty() || first.names == this.names {
        return Ok(());
    }
    let quoted =
        |n: Option<&String>| n.map_or("nothing".into(), |n| crate::text::Quoted(n).to_string());
    let k = (0..first.names.len().max(this.names.len()))
        .find(|&k| first.names.get(k) != this.names.get(k))
        .unwrap_or(0);
    Err(Error::data(
        path,
        format!(
            "line {}: column {} is named {} but the first shard {} names it {}; shards are \
             joined by position, so their headers must name the same columns in the same order \
             (reorder the columns, or drop the headers to join them by position)",
            this.header_line.unwrap_or(1),
            k + 1,
            quoted(this.names.get(k)),
            first_path.display(),
            quoted(first.names.get(k)),
        ),
    ))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::data::{Dataset, load_raw};

    fn data_file(name: &str) -> PathBuf {
        Path::new(env!("CARGO_MANIFEST_DIR"))
            .join("data")
            .join(name)
    }

    /// Lines 1..=k and the rest of `name`, as two files in `dir`.
    fn split_file(dir: &Path, name: &str, k: usize) -> Vec<PathBuf> {
        let text = std::fs::read_to_string(data_file(name)).unwrap();
        let lines: Vec<&str> = text.lines().collect();
        let ext = Path::new(name).extension().unwrap().to_str().unwrap();
        let a = dir.join(format!("part-0.{ext}"));
        let b = dir.join(format!("part-1.{ext}"));
        std::fs::write(&a, lines[..k].join("\n") + "\n").unwrap();
        std::fs::write(&b, lines[k..].join("\n") + "\n").unwrap();
        vec![a, b]
    }

    #[test]
    fn shards_join_to_the_whole_file() {
        let dir = tempfile::tempdir().unwrap();
        for (name, k) in [("heart_scale.svm", 100), ("digits_3v5.csv", 7)] {
            let whole = load_raw::<f32>(&data_file(name), &LoadOptions::default()).unwrap();
            let parts = split_file(dir.path(), name, k);
            let joined = load_raw_all::<f32>(&parts, &LoadOptions::default()).unwrap();
            assert_eq!(joined.features, whole.features, "{name}");
            assert_eq!(joined.class_ids, whole.class_ids);
            let texts = |r: &RawData<f32>| {
                r.table
                    .classes()
                    .iter()
                    .map(|c| (c.text.clone(), c.count))
                    .collect::<Vec<_>>()
            };
            assert_eq!(texts(&joined), texts(&whole));
            let a = Dataset::from_raw(joined, &parts[0], None).unwrap();
            let b = Dataset::from_raw(whole, &parts[0], None).unwrap();
            assert_eq!(a.label_map, b.label_map);
            assert_eq!(a.labels, b.labels);
        }
    }

    #[test]
    fn patterns_expand_in_sorted_order_and_mismatches_are_refused() {
        let dir = tempfile::tempdir().unwrap();
        let parts = split_file(dir.path(), "heart_scale.svm", 10);
        let pattern = dir.path().join("part-*.svm");
        assert_eq!(expand(std::slice::from_ref(&pattern)).unwrap(), parts);
        let none = dir.path().join("nothing-*.svm");
        let e = expand(&[none]).unwrap_err().to_string();
        assert!(e.ends_with("no file matches this pattern"), "{e}");
        // A dense shard after a sparse one.
        let mixed = vec![parts[0].clone(), data_file("iris_setosa.csv")];
        let e = load_raw_all::<f32>(&mixed, &LoadOptions::default())
            .unwrap_err()
            .to_string();
        assert!(e.contains("shards must be all dense or all sparse"), "{e}");
        let widths = vec![data_file("iris_setosa.csv"), data_file("digits_3v5.csv")];
        let e = load_raw_all::<f32>(&widths, &LoadOptions::default())
            .unwrap_err()
            .to_string();
        assert!(
            e.contains("has 64 feature columns but the first shard"),
            "{e}"
        );
        assert_eq!(
            describe(&widths),
            format!("{} and 1 more shard", widths[0].display())
        );
    }

    /// CSV shards whose headers name their columns in another order are
    /// refused, naming the column; the same names in the same order, or a
    /// shard without a header, join as before.
    #[test]
    fn shards_whose_headers_differ_are_refused() {
        let dir = tempfile::tempdir().unwrap();
        let write = |name: &str, text: &str| {
            let p = dir.path().join(name);
            std::fs::write(&p, text).unwrap();
            p
        };
        let a = write("a.csv", "y,a,b\n1,1,0\n-1,0,1\n");
        let swapped = write("b.csv", "y,b,a\n1,0,1\n-1,1,0\n");
        let same = write("c.csv", "y,a,b\n1,2,0\n");
        let opts = LoadOptions::default();
        let err = load_raw_all::<f64>(&[a.clone(), swapped], &opts)
            .unwrap_err()
            .to_string();
        assert!(
            err.contains("b.csv")
                && err.contains("column 2 is named \"b\" but the first shard")
                && err.contains("names it \"a\""),
            "{err}"
        );
        let raw = load_raw_all::<f64>(&[a, same], &opts).unwrap();
        assert_eq!(raw.features.rows(), 3);
    }
}
