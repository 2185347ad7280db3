//! How a run on several processes went, as its summary says it: the
//! record `train --distributed`'s report adds to a run's
//! ([`crate::run::report`]), made from a rank's fit, and the words of its
//! `processes` line and of parameter mixing's bound.

use serde::Serialize;

use crate::data::ClassLabel;
use crate::run::report::{MixingBound, OnProcesses, ReportLabels, TrainReport};
use crate::text::count;

use super::exact::Steps;
use super::load::Whole;
use super::rank::RankFit;
use super::{Mixing, Mode, Traffic, mix};

/// How a distributed run went.
#[derive(Serialize, Debug)]
pub struct DistributedReport {
    /// `exact` or `mix`.
    pub mode: Mode,
    pub ranks: usize,
    /// Mix mode: `uniform` or `errors`.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub mixing: Option<Mixing>,
    /// Mix mode: each rank's mistakes in each epoch.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub rank_mistakes: Option<Vec<Vec<u64>>>,
    /// Mix mode: the mixing-weighted mistakes Σ_n Σ_i μ_i,n·k_i,n, which the
    /// paper bounds by (D/gamma)^2 for separable data.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub weighted_mistakes: Option<f64>,
    /// Mix mode: whether that bound held (when the model separates the data
    /// and training started from zero).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub mix_bound_holds: Option<bool>,
    /// Exact mode: the steps the run took.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub steps: Option<Steps>,
    /// Operations and payload bytes rank 0 took part in, per epoch.
    pub traffic: Vec<Traffic>,
}

impl DistributedReport {
    /// Records in `model`, trained on one rank's block, the run on several
    /// processes: the `whole` dataset's rows and name, the mode, the ranks
    /// and the mixing.
    pub fn stamp<F>(&self, model: &mut crate::model::Model<F>, whole: &Whole) {
        model.training.rows = whole.rows;
        model.training.data = whole.source.clone();
        model.training.distributed = Some(crate::model::DistributedInfo {
            mode: self.mode.name().to_owned(),
            ranks: self.ranks,
            mixing: self.mixing.map(|m| m.name().to_owned()),
        });
    }

    /// What the report says of the ranks: the mode, the mixing, each
    /// rank's mistakes (mix mode) or the steps (exact mode), the traffic.
    /// Whether mixing's bound held is the whole report's to say
    /// ([`DistributedTrainReport::new`]).
    pub fn of_ranks<F>(ranked: &RankFit<F>, mixing: Option<Mixing>, ranks: usize) -> Self {
        DistributedReport {
            mode: ranked.mode,
            ranks,
            mixing,
            rank_mistakes: ranked.rank_mistakes.clone(),
            weighted_mistakes: ranked
                .rank_mistakes
                .as_ref()
                .zip(mixing)
                .map(|(k, m)| mix::weighted_mistakes(k, m)),
            mix_bound_holds: None,
            steps: ranked.steps.clone(),
            traffic: ranked.traffic.clone(),
        }
    }

    /// The `processes` line of a distributed run: the mode, and the traffic
    /// of a typical epoch (the last) on rank 0.
    fn processes(&self) -> String {
        let what = match self.mixing {
            Some(m) => format!(
                "{} (mix, {} mixing: iterative parameter mixing, not the single-process algorithm)",
                self.ranks,
                m.name()
            ),
            None => format!(
                "{} (exact: the single-process model, bit for bit)",
                self.ranks
            ),
        };
        match self.traffic.last() {
            Some(t) => format!(
                "{what}; the last epoch: {} and {} on rank 0",
                count(t.operations(), "operation"),
                crate::memory::human(t.bytes())
            ),
            None => what,
        }
    }

    /// What the processes add to the summary's text.
    fn on_processes(&self) -> OnProcesses {
        OnProcesses {
            processes: self.processes(),
            mixing_bound: self.weighted_mistakes.map(|w| MixingBound {
                weighted_mistakes: w,
                holds: self.mix_bound_holds == Some(true),
            }),
        }
    }
}

/// The summary of a run on several processes: the run's report, with how
/// the processes went after it (its JSON's `distributed`, the last field).
#[derive(Serialize, Debug)]
pub struct DistributedTrainReport {
    #[serde(flatten)]
    pub report: TrainReport,
    pub distributed: DistributedReport,
}

impl DistributedTrainReport {
    /// Rank 0's report of a run made from its own block: the data, its rows
    /// and a binary run's rows per class become the `whole` dataset's
    /// (`classes` are counted over every block), and under parameter mixing
    /// the bound that holds is mixing's, not the single-process theorem's.
    pub fn new(
        mut report: TrainReport,
        whole: &Whole,
        classes: &[ClassLabel],
        mut distributed: DistributedReport,
    ) -> Self {
        report.data = whole.source.clone();
        report.rows = whole.rows;
        if let ReportLabels::Binary {
            positive_label,
            positive_rows,
            negative_rows,
            ..
        } = &mut report.labels
        {
            *positive_rows = classes
                .iter()
                .filter(|c| crate::data::labels::same_label(&c.text, positive_label))
                .map(|c| c.count as usize)
                .sum::<usize>();
            *negative_rows = whole.rows - *positive_rows;
        }
        if distributed.mode == Mode::Mix {
            // The single-process theorem bounds M; mixing bounds the
            // mixing-weighted mistakes instead.
            distributed.mix_bound_holds = report
                .mistake_bound
                .zip(distributed.weighted_mistakes)
                .map(|(b, w)| w <= b * (1.0 + crate::train::theory::BOUND_SLACK));
            report.bound_holds = None;
        }
        DistributedTrainReport {
            report,
            distributed,
        }
    }

    /// The human-readable summary.
    pub fn render(&self) -> String {
        crate::run::report::render_on_processes(&self.report, &self.distributed.on_processes())
    }
}
