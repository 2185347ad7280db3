//! Training options shared by `train` and `cv`: feature scaling, class
//! weights and early stopping, and the parameters they stand for.

use clap::Args;

use crate::data::ScaleKind;
use crate::train::{ClassWeights, TrainParams};

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
    /// `params` with these options.
    pub fn apply(&self, params: TrainParams) -> TrainParams {
        TrainParams {
            scale: self.scale.map(ScaleKind::from),
            class_weight: self.class_weight.clone(),
            ..params
        }
    }
}
