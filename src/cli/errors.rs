//! Library errors in the command line's words: parameter rules, checkpoint
//! differences and reading hints name the flags that set them.

use crate::data::labels::LabelRuleError;
use crate::error::{
    ColumnMismatch, Difference, Error, OneProcessOption, ParamError, Remedy, WarmStartError,
    delimiter_words, exit, hint_text,
};
use crate::text::Quoted;

/// The message `perceptron: error:` prints for `e`.
pub fn message(e: &Error) -> String {
    match e {
        Error::Param(p) => param(p),
        Error::Resume { path, differences } => format!(
            "{} cannot be resumed by this run: {}. Resume with the same data and options as the interrupted run.",
            path.display(),
            differences
                .iter()
                .map(difference)
                .collect::<Vec<_>>()
                .join("; ")
        ),
        Error::WarmStart { path, reason } => warm_start(&path.display().to_string(), reason),
        Error::Columns { mismatch, .. } => format!("{e}{}", columns_hint(mismatch)),
        Error::Labels { path, rule } => format!("{}: {}", path.display(), label_rule(rule)),
        Error::Parse {
            location,
            message,
            hint,
        } => format!("{location}: {message}{}", hint_text(hint.as_ref(), remedy)),
        Error::Gpu(message) => {
            format!("{message}\nhint: run with `--backend cpu` to train on the CPU instead")
        }
        other => other.to_string(),
    }
}

/// A reading remedy as the flag that applies it.
pub fn remedy(r: Remedy) -> String {
    match r {
        Remedy::ReadAsCsv => "pass --format csv".to_owned(),
        Remedy::Delimiter(d) => format!("pass --delimiter {}", delimiter_words(d)),
        Remedy::Header => "pass --header".to_owned(),
        Remedy::LabelColumn(c) => format!("pass --label-column {c}"),
        Remedy::ZeroBased => "pass --zero-based".to_owned(),
    }
}

/// A label rule in the command line's words.
pub fn label_rule(rule: &LabelRuleError) -> String {
    match rule {
        LabelRuleError::TooManyClasses { found, header_line } => format!(
            "more than two label values ({found}); {}choose the +1 class with --positive LABEL \
             (that class against the rest), or train one perceptron per class with \
             --multiclass ovr",
            header_line
                .map(|n| format!(
                    "if line {n} is a header (its label is text, every other label a number), \
                     pass --header; otherwise "
                ))
                .unwrap_or_default()
        ),
        LabelRuleError::UnknownPositive { wanted, found } => {
            format!(
                "--positive {} is not a label in this file; labels found: {found}",
                crate::text::Quoted(wanted)
            )
        }
        other => other.to_string(),
    }
}

/// What to pass when the mismatch looks like a label column read as a
/// feature, or a feature read as the label.
fn columns_hint(m: &ColumnMismatch) -> &'static str {
    match m {
        ColumnMismatch::Count {
            model,
            columns,
            labelled: true,
            ..
        } if columns == model => {
            "; the file has as many columns as the model has features: if it has no label \
             column, pass --unlabeled"
        }
        ColumnMismatch::Count {
            model,
            columns,
            labelled: false,
            ..
        } if *columns == model + 1 => {
            "; the file has one column more than the model has features: if one is the \
             label, leave out --unlabeled"
        }
        _ => "",
    }
}

fn warm_start(path: &str, reason: &WarmStartError) -> String {
    match reason {
        WarmStartError::Heads { run_heads, .. } => {
            let (model, run) = if *run_heads > 1 {
                ("a binary", "one-vs-rest (--multiclass)")
            } else {
                ("a one-vs-rest", "a binary model")
            };
            format!("--init {path} is {model} model but this run trains {run}")
        }
        WarmStartError::Precision { one_vs_rest } => format!(
            "--init {path} is an f64 {}model; train with --precision f64 to start from it exactly",
            if *one_vs_rest { "one-vs-rest " } else { "" }
        ),
        WarmStartError::Features { model, data } => {
            format!("--init {path} has {model} features but the data has {data}")
        }
        WarmStartError::Bias { model } => format!(
            "--init {path} was trained {} the bias; pass {} to match",
            if *model { "with" } else { "without" },
            if *model { "no --no-bias" } else { "--no-bias" }
        ),
        WarmStartError::Scaling { model, run } => match model {
            Some(k) => format!(
                "--init {path} reads features scaled by --scale {k}; pass --scale {k} to start \
                 from it (its statistics are used, not refitted){}",
                run.map(|r| format!(", not --scale {r}"))
                    .unwrap_or_default()
            ),
            None => format!(
                "--init {path} was trained on unscaled features; leave out --scale {} to start \
                 from it",
                run.unwrap_or("")
            ),
        },
        WarmStartError::Labels => format!(
            "--init {path} maps the labels differently from this data (check --positive, or the classes and their order)"
        ),
    }
}

/// "error:", in bold red on a terminal as clap writes its own (unless
/// NO_COLOR is set, or TERM is dumb).
pub fn error_tag() -> &'static str {
    use std::io::IsTerminal;
    let colour = std::io::stderr().is_terminal()
        && std::env::var_os("NO_COLOR").is_none_or(|v| v.is_empty())
        && std::env::var("TERM").map_or(true, |t| t != "dumb");
    if colour {
        "\x1b[1;31merror:\x1b[0m"
    } else {
        "error:"
    }
}

/// The exit status for `e`: bad usage (2) for what the command line set.
pub fn status(e: &Error) -> i32 {
    match e {
        Error::Usage(_) | Error::Param(_) | Error::Resume { .. } | Error::WarmStart { .. } => {
            exit::USAGE
        }
        _ => exit::ERROR,
    }
}

/// `--margin TAU` refused, saying why.
pub fn margin(text: &str) -> String {
    format!(
        "--margin must be a finite number >= 0, got \"{text}\"{}",
        crate::error::below_zero(text)
    )
}

fn param(p: &ParamError) -> String {
    match p {
        ParamError::MaxEpochs(_) => "--max-epochs must be at least 1".into(),
        ParamError::Margin(text) => margin(text),
        ParamError::PocketWithMulticlass => "--pocket is not available with --multiclass".into(),
        ParamError::SampleWeight { .. } | ParamError::HeldOut(_) => p.to_string(),
        ParamError::TwoShuffles => "the rows are shuffled once or before every epoch, not both".into(),
        ParamError::ClassWeight { text, why } => {
            format!("--class-weight \"{text}\": {why} (use `balanced` or LABEL=W,LABEL=W,...)")
        }
        ParamError::Tol(t) => format!("--tol must be a finite number >= 0, got {t}"),
        ParamError::NIterNoChange(k) => format!("--n-iter-no-change must be at least 1, got {k}"),
        ParamError::ValidationFraction(f) => {
            format!("--validation-fraction must be between 0 and 1, got {f}")
        }
        ParamError::InterceptDecay(d) => {
            format!("--intercept-decay must be a finite number > 0, got {d}")
        }
        ParamError::InterceptDecayWithoutBias => {
            "--intercept-decay scales the bias's updates, and --no-bias trains without one".into()
        }
        ParamError::InterceptDecayPrecision => "--intercept-decay needs --precision f64: \
             scikit-learn sums the intercept's decayed steps in float64, which an f32 bias would \
             round differently"
            .into(),
        ParamError::SparseStandardScaling => "--scale standard would make sparse data dense (it \
             subtracts each feature's mean); use --scale maxabs, which keeps zeros"
            .into(),
        ParamError::OneProcessOnly { option, mode } => {
            let flag = match option {
                OneProcessOption::Scale(kind) => format!("--scale {kind}"),
                OneProcessOption::ClassWeight(text) => format!("--class-weight {text}"),
                OneProcessOption::InterceptDecay(d) => format!("--intercept-decay {d}"),
                OneProcessOption::ValidationFraction(f) => format!("--validation-fraction {f}"),
                OneProcessOption::EarlyStopping {
                    tol,
                    n_iter_no_change,
                } => format!("early stopping (--tol {tol}, --n-iter-no-change {n_iter_no_change})"),
            };
            format!(
                "{flag} is not available with --distributed {mode}: {}; train in one process \
                 (without --distributed) to use it",
                option.why()
            )
        }
        ParamError::MixVariant { .. } => "--distributed mix trains the classic perceptron (with \
             --margin, --multiclass ovr and --init); --average and --pocket need --distributed exact"
            .into(),
    }
}

fn difference(d: &Difference) -> String {
    let on = |b: bool| if b { "on" } else { "off" };
    match d {
        Difference::Data { .. } => d.to_string(),
        Difference::Precision { was, now } => format!("--precision was {was}, now {now}"),
        Difference::Bias { was, now } => {
            let says = |b: bool| if b { "with the bias" } else { "--no-bias" };
            format!("the run was {}, now {}", says(*was), says(*now))
        }
        Difference::MaxEpochs { was, now } => format!(
            "--max-epochs was {was}, now {now}, which the checkpoint has already passed (a larger \
             cap, or one not yet reached, resumes it)"
        ),
        Difference::Order { was, now } => {
            let says = |s: Option<u64>| {
                s.map_or("file order".to_owned(), |s| format!("--shuffle --seed {s}"))
            };
            format!("the row order was {}, now {}", says(*was), says(*now))
        }
        Difference::Reshuffle { .. } => format!("{d} (--shuffle-every-epoch, --seed)"),
        Difference::Variant { was, now } => format!("the variant was {was}, now {now}"),
        Difference::Margin { was, now } => format!(
            "--margin was {}, now {}",
            was.as_deref().unwrap_or("none"),
            now.as_deref().unwrap_or("none")
        ),
        Difference::InterceptDecay { was, now } => format!(
            "--intercept-decay was {}, now {}",
            was.as_deref().unwrap_or("not given"),
            now.as_deref().unwrap_or("not given")
        ),
        Difference::EarlyStop { was, now } => format!(
            "early stopping was {}, now {} (--tol, --n-iter-no-change, --validation-fraction, --seed)",
            was.as_deref().unwrap_or("off"),
            now.as_deref().unwrap_or("off")
        ),
        Difference::ClassWeight { was, now } => format!(
            "--class-weight was {}, now {}",
            was.as_deref().unwrap_or("not given"),
            now.as_deref().unwrap_or("not given")
        ),
        Difference::Scale { was, now } => format!(
            "--scale was {}, now {}",
            was.as_deref().unwrap_or("not given"),
            now.as_deref().unwrap_or("not given")
        ),
        Difference::Multiclass { was, now } => {
            format!("--multiclass was {}, now {}", on(*was), on(*now))
        }
        Difference::Init {
            was: true,
            now: false,
        } => "the run started from an --init model, now from zero (pass the same --init MODEL)"
            .into(),
        Difference::Init {
            was: false,
            now: true,
        } => "the run started from zero, now from --init".into(),
        Difference::Init { .. } => "the --init model differs".into(),
        Difference::Labels { was, now } => {
            format!(
                "the labels map differently: +1 was {}, now {} (check --positive)",
                Quoted(was),
                Quoted(now)
            )
        }
        Difference::Distributed { was, now } => format!(
            "the training was {was}, now {now} (a --distributed mix run resumes with the same \
             number of ranks and --mix)"
        ),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_rule_names_its_flag() {
        assert_eq!(
            message(&ParamError::MaxEpochs(0).into()),
            "--max-epochs must be at least 1"
        );
        let e = Error::Resume {
            path: "ck.json".into(),
            differences: vec![
                Difference::Order {
                    was: None,
                    now: Some(3),
                },
                Difference::Init {
                    was: true,
                    now: false,
                },
            ],
        };
        assert_eq!(
            message(&e),
            "ck.json cannot be resumed by this run: the row order was file order, now --shuffle \
             --seed 3; the run started from an --init model, now from zero (pass the same --init \
             MODEL). Resume with the same data and options as the interrupted run."
        );
        assert_eq!(status(&e), exit::USAGE);
    }

    /// The library names no flag; the command line says which to pass.
    #[test]
    fn reading_hints_and_the_gpu_hint_name_the_flags() {
        use crate::error::Hint;
        let path = std::path::Path::new("f.csv");
        for (remedy, neutral, flag) in [
            (Remedy::ReadAsCsv, "read it as CSV", "pass --format csv"),
            (
                Remedy::Delimiter(b'\t'),
                "set the delimiter to tab",
                "pass --delimiter tab",
            ),
            (
                Remedy::Delimiter(b';'),
                "set the delimiter to ';'",
                "pass --delimiter ';'",
            ),
            (
                Remedy::Header,
                "say that the file has a header",
                "pass --header",
            ),
            (
                Remedy::ZeroBased,
                "read its indices as zero-based",
                "pass --zero-based",
            ),
        ] {
            let hint = Hint {
                why: "because, ".into(),
                remedy,
            };
            let e = Error::parse(path, 3, Some(2), "bad").with_hint(Some(hint));
            assert_eq!(
                e.to_string(),
                format!("f.csv:3:2: bad (because, {neutral})")
            );
            assert_eq!(message(&e), format!("f.csv:3:2: bad (because, {flag})"));
        }
        let e = Error::Gpu("no adapter".into());
        assert_eq!(e.to_string(), "no adapter\nhint: train on the CPU instead");
        assert_eq!(
            message(&e),
            "no adapter\nhint: run with `--backend cpu` to train on the CPU instead"
        );
    }
}
