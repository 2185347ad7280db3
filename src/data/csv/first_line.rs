//! The first line of a CSV file that is not blank or a comment, read for
//! the choices the layout takes from it: the label column, the ignored
//! columns and whether the line is a header.

use std::path::Path;

use crate::data::message::{column_at, quote};
use crate::data::options::{HeaderMode, LabelColumn, LoadOptions};
use crate::error::{Error, Result};

use super::fields::{Field, Fields, delimiter_name};
use super::sniff::header_by_content;

/// The first line, split into its fields, with where it is and the options
/// it is read under: what every check on it needs for its messages.
pub(super) struct FirstLine<'a> {
    /// The line's text.
    pub(super) text: &'a str,
    /// Its line number.
    pub(super) no: u64,
    pub(super) fields: Vec<Field<'a>>,
    path: &'a Path,
    opts: &'a LoadOptions,
}

impl<'a> FirstLine<'a> {
    /// Splits `text`, line `no`, at `delim`; an error for a field that
    /// cannot be read (an unterminated quote).
    pub(super) fn split(
        text: &'a str,
        no: u64,
        delim: u8,
        path: &'a Path,
        opts: &'a LoadOptions,
    ) -> Result<Self> {
        let mut fields = Vec::new();
        for f in Fields::new(text, delim) {
            fields.push(
                f.map_err(|(byte, msg)| Error::parse(path, no, Some(column_at(text, byte)), msg))?,
            );
        }
        Ok(FirstLine {
            text,
            no,
            fields,
            path,
            opts,
        })
    }

    /// An error at column `column` of this line.
    fn error(&self, column: u64, msg: String) -> Error {
        Error::parse(self.path, self.no, Some(column), msg)
    }

    /// A labeled file needs a feature beside its label: a single field most
    /// often means the delimiter is not the one the file uses.
    pub(super) fn check_has_features(&self) -> Result<()> {
        if self.fields.len() < 2 && !self.opts.unlabeled {
            return Err(self.error(
                1,
                format!(
                    "no feature columns: found the single field {}; expected the label and at \
                     least one feature separated by {}",
                    quote(self.fields.first().map(|f| f.text.as_ref()).unwrap_or("")),
                    match self.opts.delimiter {
                        Some(d) => delimiter_name(d),
                        None => "`,`, `;` or tab".to_owned(),
                    }
                ),
            ));
        }
        Ok(())
    }

    /// A label column the model chose, not the user: say so, and how to
    /// read the file otherwise.
    fn label_from_model(&self, what: String) -> String {
        match &self.opts.label_column_from {
            Some(model) => format!(
                "{what} (the label column is the one the model {} was trained with); pass \
                 --label-column N, or --unlabeled if the file has no label column",
                model.display()
            ),
            None => what,
        }
    }

    /// The 0-based label field (`None` for unlabeled data) and whether this
    /// line is a header, as far as the label column says.
    pub(super) fn label(&self) -> Result<(Option<usize>, bool)> {
        let (opts, fields) = (self.opts, &self.fields[..]);
        let n = fields.len();
        match &opts.label_column {
            _ if opts.unlabeled => Ok((None, header_by_content(opts.header, fields, None))),
            None => Ok((Some(0), header_by_content(opts.header, fields, Some(0)))),
            Some(c @ (LabelColumn::Index(_) | LabelColumn::FromEnd(_))) => {
                let Some(k) = c.position(n) else {
                    let given = position_given(c);
                    return Err(self.error(
                        1,
                        self.label_from_model(format!(
                            "label column {given} is out of range: the file has {n} columns \
                             (numbered from 1, or from -1 for the last)"
                        )),
                    ));
                };
                Ok((Some(k), header_by_content(opts.header, fields, Some(k))))
            }
            Some(LabelColumn::Name(name)) => Ok((Some(self.label_by_name(name)?), true)),
        }
    }

    /// The label field `--label-column NAME` names in this line, a header.
    fn label_by_name(&self, name: &str) -> Result<usize> {
        if self.opts.header == HeaderMode::Absent {
            return Err(self.error(
                1,
                match &self.opts.label_column_from {
                    Some(_) => self.label_from_model(format!(
                        "the label column is named {} but the file is read without a header \
                         line",
                        quote(name)
                    )),
                    None => format!(
                        "the label column is given by name ({}) but the file is read without \
                         a header line; give its number instead",
                        quote(name)
                    ),
                },
            ));
        }
        let fields = &self.fields;
        let found: Vec<usize> = (0..fields.len())
            .filter(|&k| fields[k].text == name)
            .collect();
        match found[..] {
            [k] => Ok(k),
            [] => {
                let names: Vec<String> = fields.iter().map(|f| quote(&f.text)).collect();
                // A first line of numbers is data: the file has no header
                // to find a name in, and its "columns" would mislead.
                let data = !header_by_content(HeaderMode::Auto, fields, None);
                let what = match data {
                    true => format!(
                        "no column named {}: line 1 ({}) reads as data, not a header, so \
                         the file's columns have no names{}",
                        quote(name),
                        names.join(", "),
                        match self.opts.label_column_from {
                            Some(_) => "",
                            None => "; give the label column by its number (--label-column N)",
                        }
                    ),
                    false => format!(
                        "no column named {} in the header; its columns are {}",
                        quote(name),
                        names.join(", ")
                    ),
                };
                Err(self.error(1, self.label_from_model(what)))
            }
            [a, b, ..] => Err(self.error(
                column_at(self.text, fields[b].start),
                format!(
                    "the header names columns {} and {} both {}; give the label column's \
                     number instead",
                    a + 1,
                    b + 1,
                    quote(name)
                ),
            )),
        }
    }

    /// Per field, whether `--ignore-columns` leaves it out; sets
    /// `has_header` when a column is named (a name is found in a header).
    /// An error for the label column or for a column there is not.
    pub(super) fn skipped(&self, label: Option<usize>, has_header: &mut bool) -> Result<Vec<bool>> {
        let opts = self.opts;
        let mut skip = vec![false; self.fields.len()];
        for c in &opts.ignore_columns {
            let Some(k) = self.ignored_column(c)? else {
                continue;
            };
            // A name is found in the header: the first line is one.
            *has_header |= matches!(c, LabelColumn::Name(_));
            if Some(k) == label {
                return Err(self.label_ignored(k));
            }
            skip[k] = true;
        }
        Ok(skip)
    }

    /// The error for `--ignore-columns` naming the label field `k`.
    fn label_ignored(&self, k: usize) -> Error {
        let field = &self.fields[k];
        self.error(
            column_at(self.text, field.start),
            if self.opts.label_column.is_none() {
                // The first column is the label only by default: the
                // user may well mean an id column before the label.
                format!(
                    "--ignore-columns names column {} ({}), which is the label column when \
                     --label-column is not given; name the label with --label-column NAME \
                     (or N), or leave column {} out of --ignore-columns",
                    k + 1,
                    quote(&field.text),
                    k + 1
                )
            } else {
                format!(
                    "--ignore-columns names column {} ({}), the label column; the label is \
                     never a feature, so leave it out of --ignore-columns",
                    k + 1,
                    quote(&field.text)
                )
            },
        )
    }

    /// `--ignore-columns` must leave a feature: an error when it leaves
    /// none beside the label (`skip` from [`FirstLine::skipped`]).
    pub(super) fn check_kept(&self, label: Option<usize>, skip: &[bool]) -> Result<()> {
        let n = self.fields.len();
        let kept = n - usize::from(label.is_some()) - skip.iter().filter(|&&s| s).count();
        if kept == 0 && !self.opts.ignore_columns.is_empty() {
            return Err(self.error(
                1,
                format!(
                    "no feature columns left: the file has {n} columns, and --ignore-columns \
                     leaves out every one that is not the label"
                ),
            ));
        }
        Ok(())
    }

    /// The columns `--ignore-columns` came from a model, not the user: say
    /// so, and how to choose them otherwise.
    fn ignore_from_model(&self, what: String) -> String {
        match &self.opts.ignore_columns_from {
            Some(model) => format!(
                "{what} (the columns the model {} was trained without); pass --ignore-columns to \
                 say which to leave out",
                model.display()
            ),
            None => what,
        }
    }

    /// The 0-based field `--ignore-columns` names by `c`, or an error naming
    /// the columns there are. `None` for a name the data lacks when the
    /// list came from a model: its features are matched by name afterwards,
    /// so a column already dropped from the data is no matter.
    fn ignored_column(&self, c: &LabelColumn) -> Result<Option<usize>> {
        match c {
            LabelColumn::Index(_) | LabelColumn::FromEnd(_) => {
                match c.position(self.fields.len()) {
                    Some(k) => Ok(Some(k)),
                    None => Err(self.error(
                        1,
                        self.ignore_from_model(format!(
                            "--ignore-columns {}: out of range: the file has {} columns (numbered \
                         from 1, or from -1 for the last)",
                            position_given(c),
                            self.fields.len()
                        )),
                    )),
                }
            }
            LabelColumn::Name(name) => self.ignored_by_name(name),
        }
    }

    /// The field `--ignore-columns` names by `name` in this line, a header.
    fn ignored_by_name(&self, name: &str) -> Result<Option<usize>> {
        if self.opts.header == HeaderMode::Absent {
            return Err(self.error(
                1,
                self.ignore_from_model(format!(
                    "--ignore-columns names the column {} but the file is read without a \
                     header line; give its number instead",
                    quote(name)
                )),
            ));
        }
        let fields = &self.fields;
        let found: Vec<usize> = (0..fields.len())
            .filter(|&k| fields[k].text == name)
            .collect();
        match found[..] {
            [k] => Ok(Some(k)),
            [] if self.opts.ignore_columns_from.is_some() => Ok(None),
            [] => {
                let names: Vec<String> = fields.iter().map(|f| quote(&f.text)).collect();
                Err(self.error(
                    1,
                    format!(
                        "--ignore-columns: no column named {} in the header; its columns \
                         are {}",
                        quote(name),
                        names.join(", ")
                    ),
                ))
            }
            [a, b, ..] => Err(self.error(
                column_at(self.text, fields[b].start),
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

/// A column position as it was given (`3`, `-1`), for messages.
fn position_given(c: &LabelColumn) -> String {
    match c {
        LabelColumn::FromEnd(k) => format!("-{k}"),
        LabelColumn::Index(k) => k.to_string(),
        LabelColumn::Name(_) => String::new(),
    }
}
