//! The shape of a CSV file, fixed by its first data line, and the reading
//! of one line under it.

use std::fmt;
use std::path::Path;

use crate::data::message::{column_at, quote};
use crate::data::number::parse_value;
use crate::data::options::{HeaderMode, LabelColumn, LoadOptions};
use crate::data::raw::CsvInfo;
use crate::error::{Error, Hint, Remedy, Result};
use crate::float::Real;

use super::fields::{Fields, delimiter_name};
use super::sniff::{detect_delimiter, header_by_content};

/// The shape of a CSV file, fixed by its first line that is not blank or a
/// comment: the delimiter, the number of fields, the label column and the
/// header names. Shared by the batch parser and the row stream
/// ([`super::stream`]), so both read a line the same way and say the same
/// thing about a bad one.
#[derive(Clone, Debug)]
pub(crate) struct Layout {
    delim: u8,
    /// Fields every line must have.
    expected: usize,
    /// 0-based label field; `None` for unlabeled data.
    pub(crate) label: Option<usize>,
    /// Per field, whether it is left out (`--ignore-columns`): skipped
    /// unread, neither label nor feature.
    pub(crate) skip: Vec<bool>,
    /// The line that fixed `expected`, for messages.
    shape_line: u64,
    /// Header names, empty without a header.
    names: Vec<String>,
    /// Line `shape_line` was judged data by its content (not by
    /// `--no-header`): a text field there may be a header name that looks
    /// like a number elsewhere, which the message for it says.
    guessed_data: bool,
    /// The delimiter was detected, not given: a field holding another
    /// delimiter may mean the detection was wrong, which the message says.
    detected_delim: bool,
    /// The label column is the first by default, not given: a feature
    /// column holding text may be the label, which the message says.
    default_label: bool,
}

impl Layout {
    /// Reads the layout from `first`, line `first_no`, the first line that is
    /// not blank or a comment; also says whether that line is a header
    /// (otherwise it is the first data row).
    pub(crate) fn detect(
        first: &str,
        first_no: u64,
        path: &Path,
        opts: &LoadOptions,
    ) -> Result<(Layout, bool)> {
        let delim = match opts.delimiter {
            Some(d) if !d.is_ascii() || matches!(d, b'"' | b'\n' | b'\r' | b'#') => {
                return Err(Error::Usage(format!(
                    "cannot use {:?} as the CSV delimiter; use `,`, `;` or tab",
                    char::from(d)
                )));
            }
            Some(d) => d,
            None => detect_delimiter(first),
        };
        let at = |line: &str, no: u64, (byte, msg): (usize, String)| {
            Error::parse(path, no, Some(column_at(line, byte)), msg)
        };
        let mut fields = Vec::new();
        for f in Fields::new(first, delim) {
            fields.push(f.map_err(|e| at(first, first_no, e))?);
        }
        let n = fields.len();
        if n < 2 && !opts.unlabeled {
            return Err(Error::parse(
                path,
                first_no,
                Some(1),
                format!(
                    "no feature columns: found the single field {}; expected the label and at \
                     least one feature separated by {}",
                    quote(fields.first().map(|f| f.text.as_ref()).unwrap_or("")),
                    match opts.delimiter {
                        Some(d) => delimiter_name(d),
                        None => "`,`, `;` or tab".to_owned(),
                    }
                ),
            ));
        }
        // A label column the model chose, not the user: say so, and how to
        // read the file otherwise.
        let from_model = |what: String| match &opts.label_column_from {
            Some(model) => format!(
                "{what} (the label column is the one the model {} was trained with); pass \
                 --label-column N, or --unlabeled if the file has no label column",
                model.display()
            ),
            None => what,
        };
        let mut has_header;
        let label = match &opts.label_column {
            _ if opts.unlabeled => {
                has_header = header_by_content(opts.header, &fields, None);
                None
            }
            None => {
                has_header = header_by_content(opts.header, &fields, Some(0));
                Some(0)
            }
            Some(c @ (LabelColumn::Index(_) | LabelColumn::FromEnd(_))) => {
                let Some(k) = c.position(n) else {
                    let given = match c {
                        LabelColumn::FromEnd(k) => format!("-{k}"),
                        LabelColumn::Index(k) => k.to_string(),
                        LabelColumn::Name(_) => String::new(),
                    };
                    return Err(Error::parse(
                        path,
                        first_no,
                        Some(1),
                        from_model(format!(
                            "label column {given} is out of range: the file has {n} columns \
                             (numbered from 1, or from -1 for the last)"
                        )),
                    ));
                };
                has_header = header_by_content(opts.header, &fields, Some(k));
                Some(k)
            }
            Some(LabelColumn::Name(name)) => {
                if opts.header == HeaderMode::Absent {
                    return Err(Error::parse(
                        path,
                        first_no,
                        Some(1),
                        match &opts.label_column_from {
                            Some(_) => from_model(format!(
                                "the label column is named {} but the file is read without a \
                                 header line",
                                quote(name)
                            )),
                            None => format!(
                                "the label column is given by name ({}) but the file is read \
                                 without a header line; give its number instead",
                                quote(name)
                            ),
                        },
                    ));
                }
                has_header = true;
                let found: Vec<usize> = (0..n)
                    .filter(|&k| fields[k].text == name.as_str())
                    .collect();
                match found[..] {
                    [k] => Some(k),
                    [] => {
                        let names: Vec<String> = fields.iter().map(|f| quote(&f.text)).collect();
                        return Err(Error::parse(
                            path,
                            first_no,
                            Some(1),
                            from_model(format!(
                                "no column named {} in the header; its columns are {}",
                                quote(name),
                                names.join(", ")
                            )),
                        ));
                    }
                    [a, b, ..] => {
                        return Err(Error::parse(
                            path,
                            first_no,
                            Some(column_at(first, fields[b].start)),
                            format!(
                                "the header names columns {} and {} both {}; give the label \
                                 column's number instead",
                                a + 1,
                                b + 1,
                                quote(name)
                            ),
                        ));
                    }
                }
            }
        };
        let mut skip = vec![false; n];
        for c in &opts.ignore_columns {
            let Some(k) = ignored_column(c, &fields, first, first_no, path, opts)? else {
                continue;
            };
            // A name is found in the header: the first line is one.
            has_header |= matches!(c, LabelColumn::Name(_));
            if Some(k) == label {
                return Err(Error::parse(
                    path,
                    first_no,
                    Some(column_at(first, fields[k].start)),
                    if opts.label_column.is_none() {
                        // The first column is the label only by default: the
                        // user may well mean an id column before the label.
                        format!(
                            "--ignore-columns names column {} ({}), which is the label column \
                             when --label-column is not given; name the label with \
                             --label-column NAME (or N), or leave column {} out of \
                             --ignore-columns",
                            k + 1,
                            quote(&fields[k].text),
                            k + 1
                        )
                    } else {
                        format!(
                            "--ignore-columns names column {} ({}), the label column; the label \
                             is never a feature, so leave it out of --ignore-columns",
                            k + 1,
                            quote(&fields[k].text)
                        )
                    },
                ));
            }
            skip[k] = true;
        }
        let kept = n - usize::from(label.is_some()) - skip.iter().filter(|&&s| s).count();
        if kept == 0 && !opts.ignore_columns.is_empty() {
            return Err(Error::parse(
                path,
                first_no,
                Some(1),
                format!(
                    "no feature columns left: the file has {n} columns, and --ignore-columns \
                     leaves out every one that is not the label"
                ),
            ));
        }

        let layout = Layout {
            delim,
            expected: n,
            label,
            skip,
            shape_line: first_no,
            names: if has_header {
                fields.iter().map(|f| f.text.clone().into_owned()).collect()
            } else {
                Vec::new()
            },
            guessed_data: !has_header && opts.header == HeaderMode::Auto,
            detected_delim: opts.delimiter.is_none(),
            default_label: opts.label_column.is_none() && !opts.unlabeled,
        };
        Ok((layout, has_header))
    }

    /// The delimiter.
    pub(crate) fn delimiter(&self) -> u8 {
        self.delim
    }

    /// Fields on every line, the label included.
    pub(crate) fn expected(&self) -> usize {
        self.expected
    }

    /// Feature columns per row (every field but the label and the ignored
    /// ones).
    pub(crate) fn cols(&self) -> usize {
        self.expected - usize::from(self.label.is_some()) - self.skip.iter().filter(|&&s| s).count()
    }

    /// Whether field `k` (0-based) is left out.
    #[inline]
    pub(crate) fn skipped(&self, k: usize) -> bool {
        self.skip.get(k).copied().unwrap_or(false)
    }

    /// What reports and the model file say about this layout.
    pub(crate) fn info(&self) -> CsvInfo {
        CsvInfo {
            header_line: (!self.names.is_empty()).then_some(self.shape_line),
            label_column: self.label.map(|k| k + 1),
            label_name: self.label.and_then(|k| self.names.get(k).cloned()),
            delimiter: self.delim,
            columns: self.expected,
            names: self.names.clone(),
            ignored: (0..self.expected)
                .filter(|&k| self.skipped(k))
                .map(|k| k + 1)
                .collect(),
        }
    }

    /// Parses data line `no` of `path`: appends its feature values to
    /// `values`, in column order, and calls `on_label(text, byte offset)`
    /// with its label when the label field is reached (so an error there is
    /// reported before errors in later fields; never for unlabeled data).
    /// On an error `values` may hold part of the row.
    pub(crate) fn parse_row<F: Real>(
        &self,
        path: &Path,
        line: &str,
        no: u64,
        values: &mut Vec<F>,
        mut on_label: impl FnMut(&str, usize) -> Result<()>,
    ) -> Result<()> {
        let err =
            |byte: usize, msg: String| Error::parse(path, no, Some(column_at(line, byte)), msg);
        let mut fields = Fields::new(line, self.delim);
        let mut count = 0usize;
        for field in fields.by_ref() {
            let field = field.map_err(|(b, m)| err(b, m))?;
            let k = count;
            count += 1;
            if k >= self.expected {
                // Count the rest, then say how many there were.
                let extra = fields.by_ref().take_while(|f| f.is_ok()).count();
                return Err(err(
                    field.start,
                    format!(
                        "expected {} {}, found {} (the first extra field is {})",
                        crate::text::count(self.expected, "field"),
                        self.shape_hint(),
                        count + extra,
                        quote(&field.text)
                    ),
                ));
            }
            let name = ColumnName(k, self.names.get(k).map(String::as_str));
            if self.skipped(k) {
                // Not a feature: whatever it holds (ids, dates) is not read.
            } else if Some(k) == self.label {
                if field.text.is_empty() {
                    return Err(err(field.start, format!("empty label {name}")));
                }
                on_label(&field.text, field.start)?;
            } else {
                let v = parse_value::<F>(&field.text, &name).map_err(|m| {
                    match self.hint(&field.text, no, k) {
                        Some((why, Some(remedy))) => {
                            err(field.start, m).with_hint(Some(Hint { why, remedy }))
                        }
                        Some((why, None)) => err(field.start, format!("{m} ({why})")),
                        None => err(field.start, m),
                    }
                })?;
                values.push(v);
            }
        }
        if count < self.expected {
            return Err(err(
                line.len(),
                format!(
                    "expected {} {}, found {}",
                    crate::text::count(self.expected, "field"),
                    self.shape_hint(),
                    count
                ),
            ));
        }
        Ok(())
    }

    /// Why a field of line `no` that is not a number may be so, and the
    /// option that would fix it: another delimiter inside it (the detection
    /// took the wrong one), a decimal comma (no option), or a header read
    /// as data.
    fn hint(&self, text: &str, no: u64, k: usize) -> Option<(String, Option<Remedy>)> {
        let other = [b';', b'\t', b',']
            .into_iter()
            .find(|&d| d != self.delim && text.as_bytes().contains(&d));
        if self.detected_delim
            && let Some(d) = other
            && !(d == b',' && decimal_comma(text))
        {
            return Some((
                format!(
                    "the delimiter was detected as {} from line {}; if fields are separated by \
                     {}, ",
                    delimiter_name(self.delim),
                    self.shape_line,
                    delimiter_name(d)
                ),
                Some(Remedy::Delimiter(d)),
            ));
        }
        if decimal_comma(text) {
            return Some((
                format!(
                    "a decimal comma: numbers are read with a decimal point, as in \"{}\"",
                    text.replacen(',', ".", 1)
                ),
                None,
            ));
        }
        let text_like = !text.is_empty() && text.parse::<f64>().is_err();
        if no == self.shape_line && self.guessed_data && text_like {
            return Some((
                format!(
                    "line {no} was read as data because other fields on it are numbers; if it is \
                     a header, "
                ),
                Some(Remedy::Header),
            ));
        }
        // A word where a feature is expected, with the label in the default
        // first column: most often the labels are in this other column. (A
        // mistyped number such as `18x` is no label.)
        let word = text
            .chars()
            .all(|c| c.is_alphabetic() || matches!(c, '_' | '-' | ' ' | '.'))
            && text.chars().any(char::is_alphabetic);
        (self.default_label && text_like && word).then(|| {
            let name = self.names.get(k).filter(|n| !n.trim().is_empty());
            let column = match name {
                Some(n) => n.clone(),
                None if k + 1 == self.expected => "last".to_owned(),
                None => (k + 1).to_string(),
            };
            (
                format!(
                    "the label is read from column 1 by default; if column {} holds the \
                     labels, ",
                    k + 1
                ),
                Some(Remedy::LabelColumn(column)),
            )
        })
    }

    fn shape_hint(&self) -> String {
        if self.names.is_empty() {
            format!(
                "separated by {} (as on line {})",
                delimiter_name(self.delim),
                self.shape_line
            )
        } else {
            format!(
                "separated by {} (as in the header on line {})",
                delimiter_name(self.delim),
                self.shape_line
            )
        }
    }
}

/// The 0-based field `--ignore-columns` names by `c` among `fields` (the
/// first line, `first_no`), or an error naming the columns there are.
/// `None` for a name the data lacks when the list came from a model: its
/// features are matched by name afterwards, so a column already dropped
/// from the data is no matter.
fn ignored_column(
    c: &LabelColumn,
    fields: &[super::fields::Field<'_>],
    first: &str,
    first_no: u64,
    path: &Path,
    opts: &LoadOptions,
) -> Result<Option<usize>> {
    let n = fields.len();
    let from_model = |what: String| match &opts.ignore_columns_from {
        Some(model) => format!(
            "{what} (the columns the model {} was trained without); pass --ignore-columns to \
             say which to leave out",
            model.display()
        ),
        None => what,
    };
    match c {
        LabelColumn::Index(_) | LabelColumn::FromEnd(_) => match c.position(n) {
            Some(k) => Ok(Some(k)),
            None => Err(Error::parse(
                path,
                first_no,
                Some(1),
                from_model(format!(
                    "--ignore-columns {}: out of range: the file has {n} columns (numbered \
                     from 1, or from -1 for the last)",
                    match c {
                        LabelColumn::FromEnd(k) => format!("-{k}"),
                        LabelColumn::Index(k) => k.to_string(),
                        LabelColumn::Name(_) => String::new(),
                    }
                )),
            )),
        },
        LabelColumn::Name(name) => {
            if opts.header == HeaderMode::Absent {
                return Err(Error::parse(
                    path,
                    first_no,
                    Some(1),
                    from_model(format!(
                        "--ignore-columns names the column {} but the file is read without a \
                         header line; give its number instead",
                        quote(name)
                    )),
                ));
            }
            let found: Vec<usize> = (0..n)
                .filter(|&k| fields[k].text == name.as_str())
                .collect();
            match found[..] {
                [k] => Ok(Some(k)),
                [] if opts.ignore_columns_from.is_some() => Ok(None),
                [] => {
                    let names: Vec<String> = fields.iter().map(|f| quote(&f.text)).collect();
                    Err(Error::parse(
                        path,
                        first_no,
                        Some(1),
                        format!(
                            "--ignore-columns: no column named {} in the header; its columns \
                             are {}",
                            quote(name),
                            names.join(", ")
                        ),
                    ))
                }
                [a, b, ..] => Err(Error::parse(
                    path,
                    first_no,
                    Some(column_at(first, fields[b].start)),
                    format!(
                        "the header names columns {} and {} both {}; give the number of the \
                         one to ignore instead",
                        a + 1,
                        b + 1,
                        quote(name)
                    ),
                )),
            }
        }
    }
}

/// Whether `text` is a number written with a decimal comma (`0,5`, `-1,25`).
fn decimal_comma(text: &str) -> bool {
    text.matches(',').count() == 1 && text.replacen(',', ".", 1).parse::<f64>().is_ok()
}

/// "column 3" or `column 3 ("petal length")`, for messages.
struct ColumnName<'a>(usize, Option<&'a str>);

impl fmt::Display for ColumnName<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "in column {}", self.0 + 1)?;
        if let Some(name) = self.1 {
            write!(f, " ({})", quote(name))?;
        }
        Ok(())
    }
}
