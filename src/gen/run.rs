//! One `perceptron gen` run, defined once: the parameters a front end
//! translates its arguments into, their checks, the run that writes the
//! file, and the report of what it wrote (which the front end renders).

use std::path::PathBuf;

use serde::Serialize;

use super::{Density, GenOptions, GenSummary, Generator};
use crate::data::write::OutputFormat;
use crate::error::{Error, Result};
use crate::float::Precision;

/// What a front end asks `gen` for, unchecked.
#[derive(Clone, Debug, PartialEq)]
pub struct GenParams {
    /// Where to write; the extension picks the format (`-` is stdout).
    pub output: PathBuf,
    pub rows: u64,
    /// D: the number of features (the bias excluded).
    pub features: u64,
    /// Sparse rows store `nnz` values each; dense rows every feature.
    pub sparse: bool,
    /// Sparse: values per row; `None` for 10, or D if smaller. Refused for
    /// dense data.
    pub nnz: Option<u64>,
    /// gamma; `None` for the default (see the module documentation).
    pub planted_margin: Option<f64>,
    /// R; `None` for the default.
    pub radius: Option<f64>,
    /// Probability of flipping each label after planting.
    pub noise: f64,
    pub seed: u64,
    /// Plant u in the augmented space x~ = [x, 1].
    pub bias: bool,
    /// Precision of the stored values.
    pub precision: Precision,
}

impl GenParams {
    /// The generator's options: the density with its values per row.
    pub fn options(&self) -> Result<GenOptions> {
        let density = match (self.sparse, self.nnz) {
            (false, None) => Density::Dense,
            (false, Some(_)) => {
                return Err(Error::Usage(
                    "--nnz applies to sparse data; add --density sparse".into(),
                ));
            }
            (true, k) => Density::Sparse {
                nnz: k.unwrap_or(self.features.min(10)),
            },
        };
        Ok(GenOptions {
            rows: self.rows,
            features: self.features,
            density,
            margin: self.planted_margin,
            radius: self.radius,
            noise: self.noise,
            seed: self.seed,
            bias: self.bias,
        })
    }

    /// Checks the parameters (the options, the output's format, the
    /// generator's shape, margin and radius) and draws the planted vector.
    /// The destination is checked by [`GenRun::run`], after these.
    pub fn check(self) -> Result<GenRun> {
        let options = self.options()?;
        let sparse = matches!(options.density, Density::Sparse { .. });
        let format = OutputFormat::of_output(&self.output, sparse)?;
        let generator = Generator::new(options)?;
        Ok(GenRun {
            output: self.output,
            format,
            precision: self.precision,
            generator,
        })
    }
}

/// A checked `gen` run, ready to write.
#[derive(Clone, Debug)]
pub struct GenRun {
    output: PathBuf,
    format: OutputFormat,
    precision: Precision,
    generator: Generator,
}

/// What a `gen` run wrote (as `--json` writes it).
#[derive(Serialize, Debug)]
pub struct GenReport {
    /// The output as shown to the user.
    pub output: String,
    pub format: OutputFormat,
    pub precision: Precision,
    pub sparse: bool,
    pub bias: bool,
    /// The planted margin gamma (`--planted-margin`).
    pub planted_margin: f64,
    /// The bound R on ||x~||.
    pub radius: f64,
    /// (R/gamma)^2, the convergence theorem's bound on the mistakes.
    pub mistake_bound: f64,
    pub noise: f64,
    pub seed: u64,
    #[serde(flatten)]
    pub summary: GenSummary,
    pub rows_per_second: f64,
    pub megabytes_per_second: f64,
}

impl GenRun {
    /// Whether the rows go to standard output (a front end then shows its
    /// summary elsewhere).
    pub fn writes_stdout(&self) -> bool {
        crate::output::is_stdout(&self.output)
    }

    /// Checks the destination, writes the rows (atomically) in the asked
    /// precision and reports what was written.
    pub fn run(&self) -> Result<GenReport> {
        crate::output::check_destination(&self.output)?;
        let summary = match self.precision {
            Precision::F32 => self.generator.write::<f32>(&self.output, self.format)?,
            Precision::F64 => self.generator.write::<f64>(&self.output, self.format)?,
        };
        Ok(self.report(summary))
    }

    fn report(&self, summary: GenSummary) -> GenReport {
        let g = &self.generator;
        let secs = summary.seconds.max(1e-9);
        GenReport {
            output: crate::output::shown(&self.output),
            format: self.format,
            precision: self.precision,
            sparse: matches!(g.options().density, Density::Sparse { .. }),
            bias: g.options().bias,
            planted_margin: g.margin(),
            radius: g.radius(),
            mistake_bound: (g.radius() / g.margin()).powi(2),
            noise: g.options().noise,
            seed: g.options().seed,
            rows_per_second: summary.rows as f64 / secs,
            megabytes_per_second: summary.bytes as f64 / secs / 1e6,
            summary,
        }
    }
}
