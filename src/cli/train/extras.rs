//! Training options shared by `train` and `cv`: feature scaling, class
//! weights, early stopping and the intercept's decay, and the parameters
//! they stand for.

use clap::Args;

use crate::data::ScaleKind;
use crate::train::{ClassWeights, EarlyStop, TrainParams, Validation};

crate::cli::args::choice! {
    /// How to scale the features before training.
    ScaleArg => crate::data::ScaleKind {
        /// Subtract each feature's mean and divide by its standard deviation
        /// (dense data only).
        Standard,
        /// Divide each feature by its largest absolute value (keeps zeros,
        /// so sparse data stays sparse).
        #[value(name = "maxabs")]
        MaxAbs,
    }
}

crate::cli::args::choice! {
    /// What early stopping judges a training epoch on.
    TolOnArg => crate::train::early_stop::Judge {
        /// Minus the epoch's mistakes per row.
        Mistakes,
        /// Minus the epoch's mean hinge loss, sum of max(0, -y·(w·x+b)) over
        /// the rows at their visit, divided by the rows: scikit-learn's
        /// Perceptron rule (with --shuffle every-epoch, its very schedule).
        #[value(name = "mean-loss")]
        MeanLoss,
    }
}

/// Options beyond the classic loop's.
#[derive(Args, Clone, Debug, Default)]
pub struct ExtraArgs {
    /// Scale the features first: `standard` (x - mean) / std, or `maxabs`
    /// x / max|x|, with statistics of the training rows (exact f64, file
    /// order). The loop trains on the scaled rows; the statistics are saved
    /// in the model, and predict and eval apply them. Sparse data allows
    /// only maxabs.
    #[arg(long, value_enum, value_name = "HOW")]
    pub scale: Option<ScaleArg>,

    /// Weight each update by its row's class: w <- w + c_y·y·x. `balanced`
    /// gives c_y = rows / (classes · rows of y); `LABEL=W,...` gives the
    /// named labels W (the others 1). The mistake bound becomes
    /// (c_max/c_min)·(D/gamma)^2. One-vs-rest: class h's weight applies to
    /// its own rows in perceptron h (the rest update with 1).
    #[arg(long, value_name = "balanced|LABEL=W,...", value_parser = parse_class_weight, allow_hyphen_values = true)]
    pub class_weight: Option<ClassWeights>,

    /// Early stopping: an epoch improves when its score beats the best
    /// before it by at least T; the run stops after --n-iter-no-change
    /// epochs in a row that do not (exit 0). The score is the held-out
    /// accuracy with --validation-fraction, else minus the epoch's mistakes
    /// per row. Default 1e-3 once any early-stopping option is given.
    #[arg(long, value_name = "T", allow_negative_numbers = true)]
    pub tol: Option<f64>,

    /// Early stopping: epochs in a row without improvement that stop the run
    /// (default 5 once any early-stopping option is given).
    #[arg(long, value_name = "K")]
    pub n_iter_no_change: Option<usize>,

    /// Early stopping without --validation-fraction: judge each epoch on
    /// `mistakes` (minus its mistakes per row; the default) or `mean-loss`
    /// (minus its mean hinge loss, as scikit-learn's Perceptron does; each
    /// one-vs-rest class is then trained and stopped on its own, as there).
    #[arg(long, value_enum, value_name = "SCORE")]
    pub tol_on: Option<TolOnArg>,

    /// Hold out this fraction of the rows (stratified by label, chosen by
    /// --seed's permutation, default seed 0), judge every epoch by its
    /// accuracy there, stop early by --tol/--n-iter-no-change, and keep
    /// the weights of the best epoch. Turns early stopping on.
    #[arg(long, value_name = "F")]
    pub validation_fraction: Option<f64>,

    /// Move the bias by D·y on a mistake, the weights by y·x as ever:
    /// scikit-learn's update on sparse input, where D is 0.01. So
    /// `--shuffle-every-epoch --tol-on mean-loss --intercept-decay 0.01
    /// --precision f64` on an SVMlight file (which scikit-learn reads as
    /// sparse) is its `Perceptron()` bit for bit. f64 only; no mistake
    /// bound is reported; 1 is the textbook update.
    #[arg(long, value_name = "D", allow_negative_numbers = true)]
    pub intercept_decay: Option<f64>,
}

fn parse_class_weight(text: &str) -> Result<ClassWeights, String> {
    ClassWeights::parse(text).map_err(|e| match e {
        crate::error::ParamError::ClassWeight { why, .. } => {
            format!("{why} (use `balanced` or LABEL=W,LABEL=W,...)")
        }
        other => other.to_string(),
    })
}

impl ExtraArgs {
    /// `params` with these options; `seed` picks the held-out rows.
    pub fn apply(&self, params: TrainParams, seed: Option<u64>) -> TrainParams {
        TrainParams {
            scale: self.scale.map(ScaleKind::from),
            class_weight: self.class_weight.clone(),
            early_stop: self.early_stop(seed),
            intercept_decay: self.intercept_decay,
            ..params
        }
    }

    /// The early-stopping rule, when any of its options is given.
    pub fn early_stop(&self, seed: Option<u64>) -> Option<EarlyStop> {
        if self.tol.is_none()
            && self.n_iter_no_change.is_none()
            && self.validation_fraction.is_none()
            && self.tol_on.is_none()
        {
            return None;
        }
        let default = EarlyStop::default();
        Some(EarlyStop {
            tol: self.tol.unwrap_or(default.tol),
            n_iter_no_change: self.n_iter_no_change.unwrap_or(default.n_iter_no_change),
            validation: self.validation_fraction.map(|fraction| Validation {
                fraction,
                seed: seed.unwrap_or(0),
            }),
            judge: self.tol_on.map(Into::into).unwrap_or_default(),
            ..default
        })
    }
}
