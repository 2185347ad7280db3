//! Turning the label values found in a file into the two classes -1 and +1.
//!
//! Rules, in order:
//! 1. `--positive L` makes `L` the +1 class and every other value -1
//!    (one-vs-rest when there are more than two values).
//! 2. {-1, +1} and {0, 1} map in the obvious way.
//! 3. Any other two values: the larger number, or the lexically later text
//!    when either is not a number, is +1.
//! 4. One value, or more than two without `--positive`, is an error that lists
//!    the values found.

pub use crate::error::LabelRuleError;
use std::collections::HashMap;

/// A distinct label value as it appeared in the file.
#[derive(Clone, Debug, PartialEq)]
pub struct ClassLabel {
    /// The text as first seen (for example `+1` or `setosa`).
    pub text: String,
    /// The value when the text is a number, so `1`, `+1` and `1.0` are one class.
    pub number: Option<f64>,
    pub count: u64,
    /// The 1-based line of the file where the value first appears (0 when
    /// the rows did not come from lines of a file).
    pub first_line: u64,
}

/// How many label values a message lists at most.
pub const LISTED: usize = 20;

/// Hard cap on distinct labels: more than this is almost surely a regression
/// target or the wrong label column, and would waste memory.
pub const MAX_DISTINCT_LABELS: usize = 1 << 16;

#[derive(Clone, Debug, PartialEq, Eq, Hash)]
enum Key {
    Number(u64),
    Text(String),
}

fn key_of(text: &str) -> (Key, Option<f64>) {
    match text.parse::<f64>() {
        Ok(v) if v.is_finite() => {
            // +0.0 and -0.0 are the same label.
            let v = if v == 0.0 { 0.0 } else { v };
            (Key::Number(v.to_bits()), Some(v))
        }
        _ => (Key::Text(text.to_owned()), None),
    }
}

/// Whether two label texts name the same class: equal as text, or as
/// numbers (`1`, `+1` and `1.0`).
pub fn same_label(a: &str, b: &str) -> bool {
    key_of(a).0 == key_of(b).0
}

/// The distinct labels of a file, in order of first appearance, with a class
/// id per row stored by the caller.
#[derive(Clone, Debug, Default)]
pub struct LabelTable {
    classes: Vec<ClassLabel>,
    index: HashMap<Key, u32>,
}

/// How many recent labels [`LabelTable::intern_recent`] remembers.
const RECENT: usize = 4;

/// The last few labels interned and their class ids.
#[derive(Clone, Debug, Default)]
pub(crate) struct Recent {
    seen: Vec<(Vec<u8>, u32)>,
}

impl Recent {
    /// Whether `text` is among the labels remembered.
    #[inline]
    pub(crate) fn contains(&self, text: &[u8]) -> bool {
        self.seen.iter().any(|(t, _)| t.as_slice() == text)
    }
}

impl LabelTable {
    /// Returns the class id of `text`, found on line `line`, adding it if
    /// new; `None` once more than [`MAX_DISTINCT_LABELS`] values have been seen.
    pub fn intern(&mut self, text: &str, line: u64) -> Option<u32> {
        let (key, number) = key_of(text);
        if let Some(&id) = self.index.get(&key) {
            self.classes[id as usize].count += 1;
            return Some(id);
        }
        if self.classes.len() >= MAX_DISTINCT_LABELS {
            return None;
        }
        let id = self.classes.len() as u32;
        self.classes.push(ClassLabel {
            text: text.to_owned(),
            number,
            count: 1,
            first_line: line,
        });
        self.index.insert(key, id);
        Some(id)
    }

    /// Adds the labels of `later`, a table of rows that follow this one's
    /// after `lines_before` lines of the file (`later` numbers its lines
    /// from 1): their counts, and the ones not seen yet in `later`'s order.
    /// Returns each of `later`'s class ids as an id of this table, or
    /// `None`, with nothing added, when the labels would exceed
    /// [`MAX_DISTINCT_LABELS`].
    pub fn absorb(&mut self, later: &LabelTable, lines_before: u64) -> Option<Vec<u32>> {
        let keys: Vec<Key> = later.classes.iter().map(|c| key_of(&c.text).0).collect();
        let new = keys.iter().filter(|k| !self.index.contains_key(k)).count();
        if self.classes.len() + new > MAX_DISTINCT_LABELS {
            return None;
        }
        let ids = keys
            .into_iter()
            .zip(&later.classes)
            .map(|(key, class)| match self.index.get(&key) {
                Some(&id) => {
                    self.classes[id as usize].count += class.count;
                    id
                }
                None => {
                    let id = self.classes.len() as u32;
                    self.classes.push(ClassLabel {
                        first_line: class.first_line + lines_before,
                        ..class.clone()
                    });
                    self.index.insert(key, id);
                    id
                }
            })
            .collect();
        Some(ids)
    }

    /// [`LabelTable::intern`] for a label given as bytes, through `recent`:
    /// a label among the last few seen costs a comparison. `None` when the
    /// bytes are not UTF-8 or the table is full (the caller then reads the
    /// line the slow way, which says so).
    #[inline]
    pub(crate) fn intern_recent(
        &mut self,
        text: &[u8],
        line: u64,
        recent: &mut Recent,
    ) -> Option<u32> {
        if let Some(&(_, id)) = recent.seen.iter().find(|(t, _)| t.as_slice() == text) {
            self.classes[id as usize].count += 1;
            return Some(id);
        }
        let id = self.intern(std::str::from_utf8(text).ok()?, line)?;
        if recent.seen.len() == RECENT {
            recent.seen.remove(0);
        }
        recent.seen.push((text.to_vec(), id));
        Some(id)
    }

    /// Rebuilds a table from its label texts in class-id order and the row
    /// count of each class (as a binary data file stores them; there are no
    /// lines, so `first_line` is 0). Fails with
    /// `(earlier, later)` class ids when two texts are the same label (say
    /// `1` and `1.0`).
    pub(crate) fn from_parts(texts: Vec<String>, counts: &[u64]) -> Result<Self, (usize, usize)> {
        let mut table = LabelTable::default();
        for (id, (text, &count)) in texts.into_iter().zip(counts).enumerate() {
            let (key, number) = key_of(&text);
            if let Some(&earlier) = table.index.get(&key) {
                return Err((earlier as usize, id));
            }
            table.index.insert(key, id as u32);
            table.classes.push(ClassLabel {
                text,
                number,
                count,
                first_line: 0,
            });
        }
        Ok(table)
    }

    pub fn classes(&self) -> &[ClassLabel] {
        &self.classes
    }

    /// A table of `classes` as they are (their counts and first lines), in
    /// that order, as another table's [`LabelTable::classes`] gave them; a
    /// text repeated as a label keeps its first entry's id.
    pub fn from_classes(classes: Vec<ClassLabel>) -> Self {
        let mut table = LabelTable::default();
        for c in classes {
            let key = key_of(&c.text).0;
            if table.index.contains_key(&key) {
                continue;
            }
            table.index.insert(key, table.classes.len() as u32);
            table.classes.push(c);
        }
        table
    }

    /// The class id of a label text, if it was seen.
    pub fn find(&self, text: &str) -> Option<u32> {
        self.index.get(&key_of(text).0).copied()
    }

    /// The classes in scikit-learn's order (`numpy.unique`'s): by value
    /// when every label is a number, else by text (byte order, which is
    /// Unicode's), and for each class id of this table its index in that
    /// order. One-vs-rest models list their classes so, whatever order the
    /// file shows them in.
    pub fn sorted(&self) -> (Vec<ClassLabel>, Vec<u32>) {
        let numeric = self.classes.iter().all(|c| c.number.is_some());
        let mut order: Vec<usize> = (0..self.classes.len()).collect();
        order.sort_by(|&a, &b| {
            let (x, y) = (&self.classes[a], &self.classes[b]);
            match (numeric, x.number, y.number) {
                (true, Some(u), Some(v)) => u.total_cmp(&v),
                _ => x.text.cmp(&y.text),
            }
        });
        let mut new_id = vec![0u32; order.len()];
        for (new, &old) in order.iter().enumerate() {
            new_id[old] = new as u32;
        }
        let classes = order.iter().map(|&k| self.classes[k].clone()).collect();
        (classes, new_id)
    }

    /// The line of the first row when its label looks like a header's name
    /// read as data: text seen only there, while every other label (two or
    /// more) is a number.
    pub fn suspect_header(&self) -> Option<u64> {
        let (first, rest) = self.classes.split_first()?;
        let lone_text = first.number.is_none() && first.count == 1 && first.first_line > 0;
        (lone_text && rest.len() >= 2 && rest.iter().all(|c| c.number.is_some()))
            .then_some(first.first_line)
    }

    /// A human list such as `"3" (182 rows), "5" (183 rows)`, of the first
    /// [`LISTED`] values only: a wrong label column can have thousands.
    pub fn describe(&self) -> String {
        let shown: Vec<String> = self
            .classes
            .iter()
            .take(LISTED)
            .map(|c| {
                let text = crate::text::Quoted(&c.text);
                format!("{text} ({})", crate::text::count(c.count, "row"))
            })
            .collect();
        let mut s = shown.join(", ");
        if self.classes.len() > LISTED {
            s.push_str(&format!(", and {} more", self.classes.len() - LISTED));
        }
        s
    }
}

/// How original label values map to -1/+1; saved in the model file.
#[derive(Clone, Debug, PartialEq, serde::Serialize, serde::Deserialize)]
pub struct LabelMap {
    pub positive: String,
    /// The -1 class; `None` in one-vs-rest, where every other value is -1.
    pub negative: Option<String>,
}

impl LabelMap {
    pub fn is_one_vs_rest(&self) -> bool {
        self.negative.is_none()
    }

    /// The text `predict` prints for the -1 class.
    pub fn negative_text(&self) -> &str {
        self.negative.as_deref().unwrap_or("rest")
    }

    /// The text `predict` prints for a decision.
    pub fn text_of(&self, y: i8) -> &str {
        if y > 0 {
            &self.positive
        } else {
            self.negative_text()
        }
    }

    /// Maps a label value found in a file to -1/+1 under this map; `None` for
    /// a value the map does not know (only possible when not one-vs-rest).
    pub fn sign_of(&self, text: &str) -> Option<i8> {
        let key = key_of(text).0;
        if key == key_of(&self.positive).0 {
            return Some(1);
        }
        match &self.negative {
            None => Some(-1),
            Some(neg) if key == key_of(neg).0 => Some(-1),
            Some(_) => None,
        }
    }
}

/// Decides the -1/+1 mapping and returns it with the sign of every class id.
pub fn decide(
    table: &LabelTable,
    positive: Option<&str>,
) -> Result<(LabelMap, Vec<i8>), LabelRuleError> {
    let classes = table.classes();
    if classes.is_empty() {
        return Err(LabelRuleError::NoRows);
    }
    if let Some(wanted) = positive {
        let Some(pos) = table.find(wanted) else {
            return Err(LabelRuleError::UnknownPositive {
                wanted: wanted.to_owned(),
                found: table.describe(),
            });
        };
        if classes.len() < 2 {
            return Err(LabelRuleError::SingleClass(table.describe()));
        }
        let signs = (0..classes.len() as u32)
            .map(|c| if c == pos { 1 } else { -1 })
            .collect();
        let negative = if classes.len() == 2 {
            Some(classes[1 - pos as usize].text.clone())
        } else {
            None
        };
        return Ok((
            LabelMap {
                positive: classes[pos as usize].text.clone(),
                negative,
            },
            signs,
        ));
    }
    match classes.len() {
        1 => Err(LabelRuleError::SingleClass(table.describe())),
        2 => {
            let (a, b) = (&classes[0], &classes[1]);
            let a_is_positive = match (a.number, b.number) {
                // Covers {-1,+1} and {0,1}: the larger number is +1.
                (Some(x), Some(y)) => x > y,
                _ => a.text > b.text,
            };
            let (pos, neg) = if a_is_positive { (0, 1) } else { (1, 0) };
            let mut signs = vec![0i8; 2];
            signs[pos] = 1;
            signs[neg] = -1;
            Ok((
                LabelMap {
                    positive: classes[pos].text.clone(),
                    negative: Some(classes[neg].text.clone()),
                },
                signs,
            ))
        }
        _ => Err(LabelRuleError::TooManyClasses {
            found: table.describe(),
            header_line: table.suspect_header(),
        }),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn table(labels: &[&str]) -> LabelTable {
        let mut t = LabelTable::default();
        for (k, l) in labels.iter().enumerate() {
            t.intern(l, k as u64 + 1).unwrap();
        }
        t
    }

    #[test]
    fn plus_minus_one_and_zero_one_map_obviously() {
        let (m, s) = decide(&table(&["+1", "-1", "1"]), None).unwrap();
        assert_eq!(
            (m.positive.as_str(), m.negative.as_deref()),
            ("+1", Some("-1"))
        );
        assert_eq!(s, vec![1, -1]);
        let (m, s) = decide(&table(&["1", "0"]), None).unwrap();
        assert_eq!((m.positive.as_str(), s), ("1", vec![1, -1]));
    }

    #[test]
    fn other_pairs_take_the_larger_or_later_as_positive() {
        let (m, _) = decide(&table(&["5", "3"]), None).unwrap();
        assert_eq!(m.positive, "5");
        let (m, _) = decide(&table(&["10", "9"]), None).unwrap();
        assert_eq!(m.positive, "10", "numbers compare as numbers, not text");
        let (m, _) = decide(&table(&["benign", "malignant"]), None).unwrap();
        assert_eq!(m.positive, "malignant");
    }

    #[test]
    fn numeric_spellings_are_one_class() {
        let t = table(&["1", "1.0", "+1", "2"]);
        assert_eq!(t.classes().len(), 2);
        assert_eq!(t.classes()[0].count, 3);
        let lines: Vec<u64> = t.classes().iter().map(|c| c.first_line).collect();
        assert_eq!(lines, vec![1, 4], "the line where each value first appears");
    }

    #[test]
    fn rule_errors_list_what_was_found() {
        assert_eq!(decide(&table(&[]), None), Err(LabelRuleError::NoRows));
        let e = decide(&table(&["a", "a"]), None).unwrap_err().to_string();
        assert!(e.contains("only one label value (\"a\" (2 rows))"), "{e}");
        let e = decide(&table(&["a", "b", "c"]), None)
            .unwrap_err()
            .to_string();
        assert!(
            e.contains("one-vs-rest") && e.contains("\"c\" (1 row)") && !e.contains("--"),
            "the library names no flag: {e}"
        );
        let e = decide(&table(&["a", "b"]), Some("z"))
            .unwrap_err()
            .to_string();
        assert!(e.contains("\"z\" is not a label"), "{e}");
    }

    #[test]
    fn long_lists_of_labels_are_cut() {
        let names: Vec<String> = (0..150).map(|k| format!("x{k}")).collect();
        let mut t = table(&names.iter().map(String::as_str).collect::<Vec<_>>());
        t.intern("x0", 151).unwrap();
        let listed: Vec<String> = (0..20)
            .map(|k| format!("\"x{k}\" ({})", if k == 0 { "2 rows" } else { "1 row" }))
            .collect();
        assert_eq!(t.describe(), format!("{}, and 130 more", listed.join(", ")));
        let e = decide(&t, None).unwrap_err().to_string();
        assert!(e.len() < 600, "{e}");
        assert_eq!(t.suspect_header(), None);
        assert_eq!(
            table(&["a", "b"]).describe(),
            "\"a\" (1 row), \"b\" (1 row)"
        );
    }

    #[test]
    fn classes_sort_as_scikit_learn_sorts_them() {
        let texts =
            |t: &LabelTable| -> Vec<String> { t.sorted().0.into_iter().map(|c| c.text).collect() };
        // Numbers by value (10 after 9, -1 first), whatever the spelling.
        let t = table(&["10", "9", "+1", "-1", "1.0"]);
        assert_eq!(texts(&t), ["-1", "+1", "9", "10"]);
        assert_eq!(t.sorted().1, [3, 2, 1, 0]);
        // Text by bytes: capitals first, then "10" < "9" as text.
        let t = table(&["b", "a", "B", "10", "9"]);
        assert_eq!(texts(&t), ["10", "9", "B", "a", "b"]);
    }

    #[test]
    fn a_lone_text_label_first_among_numbers_may_be_a_header() {
        let t = table(&["y", "1", "0", "-1", "1"]);
        assert_eq!(t.suspect_header(), Some(1));
        let e = decide(&t, None).unwrap_err().to_string();
        assert!(
            e.contains("; line 1 may be a header read as data; otherwise"),
            "{e}"
        );
        assert_eq!(table(&["y", "1", "0", "y"]).suspect_header(), None);
        assert_eq!(table(&["1", "y", "0"]).suspect_header(), None);
        assert_eq!(table(&["y", "a", "0"]).suspect_header(), None);
    }

    #[test]
    fn positive_selects_one_vs_rest() {
        let (m, s) = decide(&table(&["a", "b", "c"]), Some("b")).unwrap();
        assert!(m.is_one_vs_rest());
        assert_eq!(s, vec![-1, 1, -1]);
        assert_eq!(m.sign_of("c"), Some(-1));
        let (m, _) = decide(&table(&["a", "b"]), Some("a")).unwrap();
        assert_eq!(m.negative.as_deref(), Some("b"));
        assert_eq!(m.sign_of("q"), None);
    }
}
