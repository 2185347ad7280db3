//! The text form of an evaluation's report: the summary lines, the
//! confusion matrix (or, beyond [`MATRIX_MAX_CLASSES`] classes, the most
//! frequent confusions) and the per-class figures, as `perceptron eval`
//! prints them. Defined next to the records so that every front end prints
//! the same report.

use super::{ConfusionCell, EvalReport, MATRIX_MAX_CLASSES, OvrConfusion, OvrEvalReport};
use crate::data::Format;
use crate::text::{Quoted, count, summary_line as line};

/// How many confusions the text report lists when it shows no matrix.
pub const LISTED_CONFUSIONS: usize = 20;

fn metric(v: Option<f64>, why: &str) -> String {
    match v {
        Some(v) => format!("{v:.4}"),
        None => format!("undefined ({why})"),
    }
}

/// The human-readable report.
pub fn render(r: &EvalReport) -> String {
    let mut s = String::new();
    line(
        &mut s,
        "model",
        format!(
            "{} ({}, +1 = {}, -1 = {})",
            r.model,
            r.precision,
            Quoted(&r.positive_label),
            Quoted(&r.negative_label)
        ),
    );
    data_and_accuracy(
        &mut s,
        &r.data,
        r.format,
        [r.rows, r.features],
        r.correct,
        r.accuracy,
    );
    s.push_str("\nconfusion matrix (rows: true label, columns: predicted label)\n");
    let head = quoted(&r.confusion.labels);
    confusion_table(
        &mut s,
        &head,
        &r.confusion.matrix,
        "true \\ predicted",
        0,
        6,
    );
    let p = &r.positive_class;
    s.push_str(&format!("\nclass {} (+1):\n", Quoted(&p.label)));
    line(
        &mut s,
        "precision",
        metric(p.precision, "no row was predicted +1"),
    );
    line(&mut s, "recall", metric(p.recall, "no row is truly +1"));
    line(
        &mut s,
        "F1",
        metric(p.f1, "no row is +1, truly or predicted"),
    );
    s
}

/// The human-readable one-vs-rest report.
pub fn render_ovr(r: &OvrEvalReport) -> String {
    let mut s = String::new();
    let k = match &r.confusion {
        OvrConfusion::Matrix(m) => m.labels.len(),
        OvrConfusion::Cells { classes, .. } => *classes,
    };
    ovr_summary(&mut s, r, k);
    let names = quoted(
        &r.classes
            .iter()
            .map(|c| c.label.clone())
            .collect::<Vec<_>>(),
    );
    let w0 = match &r.confusion {
        OvrConfusion::Matrix(m) => {
            s.push_str("\nconfusion matrix (rows: true class, columns: predicted class)\n");
            confusion_table(&mut s, &quoted(&m.labels), &m.matrix, "", 4, 5)
        }
        OvrConfusion::Cells { cells, .. } => {
            top_confusions(&mut s, cells, k);
            names
                .iter()
                .map(|n| n.chars().count())
                .chain([5])
                .max()
                .unwrap_or(5)
        }
    };
    s.push('\n');
    class_figures(&mut s, r, &names, w0);
    s
}

/// The `data` and `accuracy` lines of either report: the file, its
/// `[rows, features]`, and the rows predicted right.
fn data_and_accuracy(
    s: &mut String,
    data: &str,
    format: Format,
    [rows, features]: [usize; 2],
    correct: u64,
    accuracy: f64,
) {
    line(
        s,
        "data",
        format!(
            "{data} ({}, {} x {})",
            format.name(),
            count(rows, "row"),
            count(features, "feature")
        ),
    );
    line(
        s,
        "accuracy",
        format!(
            "{:.2}% ({correct} of {} correct)",
            100.0 * accuracy,
            count(rows, "row")
        ),
    );
}

/// The `model`, `data` and `accuracy` lines of a one-vs-rest report (`k`:
/// the model's classes).
fn ovr_summary(s: &mut String, r: &OvrEvalReport, k: usize) {
    line(
        s,
        "model",
        format!(
            "{} ({}, one-vs-rest over {})",
            r.model,
            r.precision,
            count(k, "class")
        ),
    );
    data_and_accuracy(
        s,
        &r.data,
        r.format,
        [r.rows, r.features],
        r.correct,
        r.accuracy,
    );
}

/// Appends the table of each class's support, precision, recall and F1,
/// and their macro averages (`names`: the classes quoted, `w0`: the class
/// column's width).
fn class_figures(s: &mut String, r: &OvrEvalReport, names: &[String], w0: usize) {
    if let OvrConfusion::Cells { .. } = r.confusion {
        s.push_str(&format!(
            "the {} that occur in the data or the predictions:\n",
            count(r.classes.len(), "class")
        ));
    }
    s.push_str(&format!(
        "  {:<w0$}  {:>9}  {:>9}  {:>9}  {:>9}\n",
        "class", "support", "precision", "recall", "F1"
    ));
    let f = |v: Option<f64>| v.map_or("-".to_owned(), |v| format!("{v:.4}"));
    for (c, n) in r.classes.iter().zip(names) {
        s.push_str(&format!(
            "  {n:<w0$}  {:>9}  {:>9}  {:>9}  {:>9}\n",
            c.support,
            f(c.precision),
            f(c.recall),
            f(c.f1)
        ));
    }
    s.push_str(&format!(
        "  {:<w0$}  {:>9}  {:>9}  {:>9}  {:>9}\n",
        "macro",
        "",
        f(r.macro_precision),
        f(r.macro_recall),
        f(r.macro_f1)
    ));
}

/// Appends, in place of a matrix too large to read, the
/// [`LISTED_CONFUSIONS`] largest off-diagonal cells (ties in the model's
/// class order).
fn top_confusions(s: &mut String, cells: &[ConfusionCell], classes: usize) {
    let mut wrong: Vec<&ConfusionCell> = cells.iter().filter(|c| c.truth != c.predicted).collect();
    // Stable: equal counts keep the cells' order.
    wrong.sort_by_key(|c| std::cmp::Reverse(c.rows));
    let shown = &wrong[..wrong.len().min(LISTED_CONFUSIONS)];
    s.push_str(&format!(
        "\nno confusion matrix: {} are more than the {MATRIX_MAX_CLASSES} it is shown for \
         (--json lists its non-zero cells)\n",
        count(classes, "class")
    ));
    if shown.is_empty() {
        s.push_str("no confusion: every row was predicted as its true class\n");
        return;
    }
    s.push_str(&format!(
        "the {} most frequent confusions (of {}):\n",
        shown.len(),
        wrong.len()
    ));
    let t: Vec<String> = shown.iter().map(|c| Quoted(&c.truth).to_string()).collect();
    let p: Vec<String> = shown
        .iter()
        .map(|c| Quoted(&c.predicted).to_string())
        .collect();
    let width = |v: &[String], min: usize| v.iter().map(|x| x.chars().count()).chain([min]).max();
    let (wt, wp) = (width(&t, 4).unwrap_or(4), width(&p, 9).unwrap_or(9));
    s.push_str(&format!(
        "  {:<wt$}  {:<wp$}  {:>9}\n",
        "true", "predicted", "rows"
    ));
    for ((c, t), p) in shown.iter().zip(&t).zip(&p) {
        s.push_str(&format!("  {t:<wt$}  {p:<wp$}  {:>9}\n", c.rows));
    }
}

/// Class texts in quotes, as the tables show them.
fn quoted(labels: &[String]) -> Vec<String> {
    labels.iter().map(|l| Quoted(l).to_string()).collect()
}

/// Appends the confusion matrix as a table: `corner` above the class
/// column, every column at least `min_name` / `min_cell` wide. Returns the
/// class column's width, for tables that follow it.
fn confusion_table(
    s: &mut String,
    names: &[String],
    matrix: &[Vec<u64>],
    corner: &str,
    min_name: usize,
    min_cell: usize,
) -> usize {
    let width = |t: &String| t.chars().count();
    let w0 = names
        .iter()
        .map(width)
        .chain([corner.chars().count(), min_name])
        .max()
        .unwrap_or(0);
    let w = matrix
        .iter()
        .flatten()
        .map(|v| v.to_string().len())
        .chain(names.iter().map(width))
        .chain([min_cell])
        .max()
        .unwrap_or(0);
    s.push_str(&format!("  {corner:<w0$}"));
    for n in names {
        s.push_str(&format!("  {n:>w$}"));
    }
    s.push('\n');
    for (t, n) in names.iter().enumerate() {
        s.push_str(&format!("  {n:<w0$}"));
        for v in &matrix[t] {
            s.push_str(&format!("  {v:>w$}"));
        }
        s.push('\n');
    }
    w0
}

#[cfg(test)]
mod tests {
    use super::*;

    fn cell(t: &str, p: &str, rows: u64) -> ConfusionCell {
        ConfusionCell {
            truth: t.into(),
            predicted: p.into(),
            rows,
        }
    }

    #[test]
    fn the_largest_confusions_are_listed_ties_in_the_cells_order() {
        let cells = [
            cell("a", "a", 9),
            cell("a", "b", 2),
            cell("b", "a", 5),
            cell("c", "a", 2),
        ];
        let mut s = String::new();
        top_confusions(&mut s, &cells, 21);
        let rows: Vec<&str> = s.lines().skip(4).collect();
        assert_eq!(
            rows,
            [
                "  \"b\"   \"a\"                5",
                "  \"a\"   \"b\"                2",
                "  \"c\"   \"a\"                2",
            ],
            "{s}"
        );
        let mut none = String::new();
        top_confusions(&mut none, &cells[..1], 21);
        assert!(none.ends_with("no confusion: every row was predicted as its true class\n"));
    }

    #[test]
    fn a_confusion_tables_columns_fit_the_widest_count_or_name() {
        let mut s = String::new();
        let names = quoted(&["-1".into(), "+1".into()]);
        let w0 = confusion_table(&mut s, &names, &[vec![1, 1234567], vec![0, 3]], "t", 0, 6);
        assert_eq!(w0, 4);
        assert_eq!(
            s,
            "  t        \"-1\"     \"+1\"\n  \"-1\"        1  1234567\n  \"+1\"        0        3\n"
        );
    }
}
