//! Training options shared by `train` and `cv`: feature scaling, class
//! weights and early stopping, and the parameters they stand for.

use clap::Args;

use crate::data::ScaleKind;
use crate::train::TrainParams;

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
}

impl ExtraArgs {
    /// `params` with these options.
    pub fn apply(&self, params: TrainParams) -> TrainParams {
        TrainParams {
            scale: self.scale.map(ScaleKind::from),
            ..params
        }
    }
}
