//! A cross-validation's report as `perceptron cv` prints it: the summary
//! lines, the table of folds, the time.

use super::CvReport;
use crate::text::count;
use crate::text::summary_line as line;
use crate::train::Stop;

impl CvReport {
    /// The report as text, every line ended.
    pub fn render(&self) -> String {
        let mut s = String::new();
        self.render_summary(&mut s);
        self.render_folds(&mut s);
        s.push('\n');
        line(&mut s, "time", format!("{:.3} s", self.seconds));
        s
    }

    /// The data, folds, accuracy and F1 lines.
    fn render_summary(&self, s: &mut String) {
        line(
            s,
            "data",
            format!(
                "{} ({}, {} x {}, {}, {})",
                self.data,
                self.format.name(),
                count(self.rows, "row"),
                count(self.features, "feature"),
                self.precision,
                self.kind
            ),
        );
        line(
            s,
            "folds",
            format!(
                "{} (stratified by label, seed {}), trained in parallel",
                self.folds, self.seed
            ),
        );
        line(
            s,
            "accuracy",
            format!(
                "{:.2}% mean, {:.2}% standard deviation",
                100.0 * self.accuracy.mean,
                100.0 * self.accuracy.std
            ),
        );
        let undefined = if self.f1_undefined > 0 {
            format!(
                " (over {} of {}: undefined in the others)",
                self.per_fold.len() - self.f1_undefined,
                count(self.per_fold.len(), "fold")
            )
        } else {
            String::new()
        };
        line(
            s,
            "F1",
            match &self.f1 {
                Some(f) => format!(
                    "{:.4} mean, {:.4} standard deviation ({}){undefined}",
                    f.mean, f.std, self.f1_of
                ),
                None => format!("undefined in every fold ({})", self.f1_of),
            },
        );
    }

    /// The table of folds, after a blank line.
    fn render_folds(&self, s: &mut String) {
        s.push_str(&format!(
            "\n  {:>4}  {:>6}  {:>6}  {:>7}  {:>14}  {:>9}  {:>7}\n",
            "fold", "train", "test", "epochs", "stopped", "accuracy", "F1"
        ));
        for f in self.per_fold.iter().map(|f| &f.result) {
            let stop = match f.stop {
                Stop::Converged => "converged",
                Stop::MaxEpochs => "max epochs",
                Stop::EarlyStopped => "early stop",
                Stop::Interrupted => "interrupted",
            };
            s.push_str(&format!(
                "  {:>4}  {:>6}  {:>6}  {:>7}  {:>14}  {:>8.2}%  {:>7}\n",
                f.fold,
                f.train_rows,
                f.test_rows,
                f.epochs,
                stop,
                100.0 * f.accuracy,
                f.f1.map_or("-".to_owned(), |v| format!("{v:.4}")),
            ));
        }
    }
}
