//! Stratified k-fold cross-validation (`perceptron cv`): each fold's model
//! is trained exactly as `train` would on the other folds' rows, and judged
//! on its own; the folds run in parallel.
//!
//! Fold j's training rows are the rows of the other folds in file order
//! ([`crate::train::folds::folds`]). On them, in this order, as `train`
//! does on a whole file: the early-stopping validation part is held out
//! (when asked for), the scaling statistics are fitted (when asked for) and
//! applied to every part, and the rows are shuffled (when asked for). The
//! fold's model is then the textbook loop's on those rows, on any backend,
//! and its test rows are predicted with the reference arithmetic.
//!
//! Scores per fold: the accuracy, and the F1 score of the +1 class (binary)
//! or the macro F1 (one-vs-rest: the mean over the classes whose F1 is
//! defined, as `eval` reports it). The summary gives their mean and their
//! standard deviation over the folds (the population one, numpy's
//! default; F1 over the folds where it is defined).
//!
//! The run around the folds and its report, the one record front ends
//! print, are `crate::run::cv`'s.

use std::collections::BTreeMap;
use std::path::Path;

use rayon::prelude::*;
use serde::Serialize;

use crate::data::Dataset;
use crate::engine::backend::Backend;
use crate::engine::gpu::GpuOptions;
use crate::engine::reference;
use crate::error::{Error, Result};
use crate::float::Real;
use crate::train::folds;
use crate::train::params::CheckedParams;
use crate::train::shuffle::permutation;
use crate::train::state::{Observer, Stop};
use crate::train::trainer::Trainer;

/// One fold's result (reported by `run::cv::FoldReport`, whose JSON
/// holds these figures as they are, then the confusion counts labelled and
/// the backend).
#[derive(Clone, Debug, PartialEq, serde::Serialize)]
pub struct FoldResult {
    /// 1-based.
    pub fold: usize,
    pub train_rows: usize,
    pub test_rows: usize,
    pub epochs: usize,
    pub stop: Stop,
    pub training_mistakes: u64,
    /// Test rows predicted right.
    pub correct: u64,
    pub accuracy: f64,
    /// Binary: the +1 class's F1; one-vs-rest: the macro F1. `None` where
    /// undefined (no +1 row, truly or predicted).
    pub f1: Option<f64>,
    /// Test rows of true class t predicted p, for the pairs (t, p) that
    /// occur (binary: 0 is the -1 class, 1 the +1 class; one-vs-rest: the
    /// data's classes): at most one per test row, whatever the number of
    /// classes.
    #[serde(skip)]
    pub confusion: FoldConfusion,
    /// The engines that trained the fold.
    #[serde(skip)]
    pub backend: Vec<String>,
}

/// A fold's confusion counts: `cells` lists `(t, p, rows)` by true then
/// predicted class, the pairs with no row left out.
#[derive(Clone, Debug, PartialEq)]
pub struct FoldConfusion {
    /// The number of classes (the matrix's side).
    pub classes: usize,
    pub cells: Vec<(usize, usize, u64)>,
}

impl FoldConfusion {
    /// The whole `classes` x `classes` matrix (for a caller that shows it:
    /// its size is the caller's to bound).
    pub fn matrix(&self) -> Vec<Vec<u64>> {
        let mut m = vec![vec![0u64; self.classes]; self.classes];
        for &(t, p, n) in &self.cells {
            m[t][p] = n;
        }
        m
    }

    /// Rows predicted as their true class.
    fn correct(&self) -> u64 {
        self.cells
            .iter()
            .filter(|(t, p, _)| t == p)
            .map(|c| c.2)
            .sum()
    }

    /// The F1 of every class that occurs (truly or predicted), in class
    /// order: 2·tp/(2·tp + fp + fn).
    fn f1s(&self) -> Vec<(usize, f64)> {
        // Per class: rows truly of it, predicted as it, and both.
        let mut tally: BTreeMap<usize, (u64, u64, u64)> = BTreeMap::new();
        for &(t, p, n) in &self.cells {
            tally.entry(t).or_default().0 += n;
            tally.entry(p).or_default().1 += n;
            if t == p {
                tally.entry(t).or_default().2 += n;
            }
        }
        tally
            .into_iter()
            .map(|(c, (support, predicted, tp))| {
                (c, 2.0 * tp as f64 / (support + predicted) as f64)
            })
            .collect()
    }
}

/// A mean and a (population) standard deviation.
#[derive(Clone, Copy, Debug, PartialEq, Serialize)]
pub struct Spread {
    pub mean: f64,
    pub std: f64,
}

impl Spread {
    /// Of `values`; `None` when there are none.
    pub fn of(values: &[f64]) -> Option<Spread> {
        if values.is_empty() {
            return None;
        }
        let n = values.len() as f64;
        let mean = values.iter().sum::<f64>() / n;
        let var = values.iter().map(|v| (v - mean) * (v - mean)).sum::<f64>() / n;
        Some(Spread {
            mean,
            std: var.sqrt(),
        })
    }
}

/// The folds and what they say together.
#[derive(Clone, Debug, PartialEq)]
pub struct CvSummary {
    pub folds: Vec<FoldResult>,
    pub accuracy: Spread,
    /// Over the folds whose F1 is defined (`None` if none is).
    pub f1: Option<Spread>,
    /// Folds whose F1 is undefined.
    pub f1_undefined: usize,
}

impl CvSummary {
    pub fn of(folds: Vec<FoldResult>) -> Self {
        let acc: Vec<f64> = folds.iter().map(|f| f.accuracy).collect();
        let f1: Vec<f64> = folds.iter().filter_map(|f| f.f1).collect();
        CvSummary {
            accuracy: Spread::of(&acc).unwrap_or(Spread {
                mean: 0.0,
                std: 0.0,
            }),
            f1: Spread::of(&f1),
            f1_undefined: folds.len() - f1.len(),
            folds,
        }
    }
}

/// What a cross-validation tells its caller while the folds train, side
/// by side, from the threads that train them: progress for a long run,
/// and the warnings a fold's run gives (which its report does not hold).
pub trait CvWatch: Sync {
    /// The folds' training rows, times the epoch cap: what [`walked`]
    /// adds up to when every fold is done.
    ///
    /// [`walked`]: CvWatch::walked
    fn started(&self, _folds: usize, _rows: u64) {}
    /// Some fold walked `rows` more rows (a fold that stops before its cap
    /// adds the rest of it when done).
    fn walked(&self, _rows: u64) {}
    /// Fold `fold` (from 1) is done.
    fn fold_done(&self, _fold: usize) {}
    /// Fold `fold` (from 1) warns.
    fn warning(&self, _fold: usize, _message: &str) {}
}

/// A cross-validation nobody watches.
pub struct Unwatched;
impl CvWatch for Unwatched {}

/// One fold's run as its [`CvWatch`] sees it: the rows walked so far.
struct FoldObserver<'w> {
    fold: usize,
    watch: &'w dyn CvWatch,
    walked: u64,
}

impl<F> Observer<F> for FoldObserver<'_> {
    fn on_progress(&mut self, epoch: usize, position: usize, rows: usize) {
        let now = (epoch as u64) * rows as u64 + position as u64;
        if now > self.walked {
            self.watch.walked(now - self.walked);
            self.walked = now;
        }
    }

    fn on_warning(&mut self, message: &str) {
        self.watch.warning(self.fold, message);
    }
}

/// Cross-validates `params` on `data` (in file order) with `k` stratified
/// folds chosen by `seed`, each fold trained on `backend`, all folds in
/// parallel, telling `watch` how they go.
pub fn cross_validate<F: Real>(
    data: &Dataset<F>,
    params: &CheckedParams,
    k: usize,
    seed: u64,
    backend: Backend,
    gpu: &GpuOptions,
    watch: &dyn CvWatch,
) -> Result<CvSummary> {
    if k < 2 || k > data.rows() {
        return Err(Error::Usage(format!(
            "cross-validation needs between 2 and {} folds (one row each at least), not {k}",
            data.rows()
        )));
    }
    // The folds train side by side, each with its own weights.
    let at_once = k.min(rayon::current_num_threads());
    let heads = params.heads(data.classes.len());
    let dim = data.cols() + params.bias as usize;
    let weights = (dim as u64)
        .saturating_mul(heads as u64)
        .saturating_mul(at_once as u64);
    crate::memory::check(weights.saturating_mul(crate::memory::TRAIN_BYTES_PER_WEIGHT)).map_err(
        |short| {
            short.refusal(
                &data.source,
                &format!(
                    "training {at_once} folds side by side, each with {dim} weights for each \
                     of {},",
                    crate::text::count(heads, "perceptron")
                ),
                "; use fewer folds, fewer threads (RAYON_NUM_THREADS) or a machine with more memory",
            )
        },
    )?;
    let (strata, classes) = folds::strata(data);
    let fold_of = folds::folds(&strata, classes, k, seed);
    // Each row trains in every fold but its own.
    let cap = params.max_epochs as u64;
    watch.started(k, (data.rows() as u64 * (k as u64 - 1)).saturating_mul(cap));
    let results = (0..k)
        .into_par_iter()
        .map(|j| one_fold(data, params, &fold_of, j, backend, gpu, watch))
        .collect::<Result<Vec<_>>>()?;
    Ok(CvSummary::of(results))
}

/// How a cross-validation runs, beside the training parameters: the
/// folds, the seed that deals them, and where each fold trains.
#[derive(Clone, Debug)]
pub struct CvParams {
    /// K, the number of folds.
    pub folds: usize,
    /// Seed of the permutation that deals the folds.
    pub seed: u64,
    /// The backend asked for; see [`CvParams::fold_backend`].
    pub backend: Backend,
    pub gpu: GpuOptions,
}

impl CvParams {
    /// Where each fold trains: K folds at once go to the CPU engine when
    /// the choice is left open (`auto` without a named adapter), a GPU
    /// only when one is asked for.
    pub fn fold_backend(&self) -> Backend {
        if self.backend == Backend::Auto && self.gpu.adapter.name.is_none() {
            Backend::Cpu
        } else {
            self.backend
        }
    }

    /// K must be between 2 and the rows of the data (read from `path`).
    pub fn check_folds(&self, rows: usize, path: &Path) -> Result<()> {
        if self.folds < 2 || self.folds > rows {
            return Err(Error::Usage(format!(
                "--folds must be between 2 and the rows of {} ({rows}), got {}",
                path.display(),
                self.folds
            )));
        }
        Ok(())
    }
}

fn one_fold<F: Real>(
    data: &Dataset<F>,
    params: &CheckedParams,
    fold_of: &[u32],
    j: usize,
    backend: Backend,
    gpu: &GpuOptions,
    watch: &dyn CvWatch,
) -> Result<FoldResult> {
    let in_test: Vec<bool> = fold_of.iter().map(|&f| f as usize == j).collect();
    let (mut train, mut test) = folds::split(data, &in_test);
    // The fold's share of what `watch` was told the folds walk at most.
    let cap = (train.rows() as u64).saturating_mul(params.max_epochs as u64);
    let mut held = match params.early_stop.as_ref().and_then(|e| e.validation) {
        Some(v) => {
            let (strata, classes) = folds::strata(&train);
            let out = folds::holdout(&strata, classes, v.fraction, v.seed);
            let each_class = params.heads(train.classes.len()) > 1;
            if let Some((class, rows)) = folds::class_held_whole(&train, &out, each_class) {
                return Err(Error::Usage(format!(
                    "fold {}: the validation fraction {} holds out every row of class {} \
                     ({}) among its training rows, leaving it none to train on; hold out a \
                     smaller fraction",
                    j + 1,
                    v.fraction,
                    crate::text::Quoted(&class),
                    crate::text::count(rows, "row")
                )));
            }
            let (kept, held) = folds::split(&train, &out);
            if kept.rows() == 0 || held.rows() == 0 {
                return Err(Error::Usage(format!(
                    "fold {}: the validation fraction {} of its {} training rows leaves a part empty",
                    j + 1,
                    v.fraction,
                    train.rows()
                )));
            }
            train = kept;
            Some(held)
        }
        None => None,
    };
    if let Some(s) = params.fit_scaling(&train)? {
        train = s.apply_to(train)?;
        test = s.apply_to(test)?;
        held = held.map(|h| s.apply_to(h)).transpose()?;
    }
    if let Some(s) = params.shuffle_seed {
        train = train.permuted(&permutation(train.rows(), s));
    }
    let heads = params.heads(data.classes.len());
    let trainer = Trainer::new(params.clone())
        .with_backend(backend)
        .with_gpu(gpu.clone());
    let mut observer = FoldObserver {
        fold: j + 1,
        watch,
        walked: 0,
    };
    let fit = trainer.fit_validated(
        &train,
        held.as_ref(),
        trainer.start(&train, None),
        &mut observer,
    )?;
    watch.walked(cap.saturating_sub(observer.walked));
    watch.fold_done(j + 1);
    let confusion = confusion(&test, &fit.weights, params.bias, heads);
    let correct = confusion.correct();
    let f1s = confusion.f1s();
    Ok(FoldResult {
        fold: j + 1,
        train_rows: train.rows() + held.as_ref().map_or(0, |h| h.rows()),
        test_rows: test.rows(),
        epochs: fit.epochs(),
        stop: fit.stop,
        training_mistakes: fit.total_mistakes(),
        correct,
        accuracy: correct as f64 / test.rows().max(1) as f64,
        f1: if heads == 1 {
            f1s.iter().find(|(c, _)| *c == 1).map(|(_, f)| *f)
        } else {
            let defined: Vec<f64> = f1s.iter().map(|(_, f)| *f).collect();
            Spread::of(&defined).map(|s| s.mean)
        },
        confusion,
        backend: fit.engines,
    })
}

/// The confusion counts of `weights` on `test` (see [`FoldResult`]).
fn confusion<F: Real>(test: &Dataset<F>, weights: &[F], bias: bool, heads: usize) -> FoldConfusion {
    let dim = test.cols() + bias as usize;
    let k = if heads == 1 { 2 } else { heads };
    let pairs: Vec<(usize, usize)> = (0..test.rows())
        .into_par_iter()
        .map(|i| {
            let row = test.features.row(i);
            if heads == 1 {
                let s = reference::dot(&weights[..dim], row, bias);
                let p = (reference::predicted_sign(s) > 0) as usize;
                ((test.labels[i] > 0) as usize, p)
            } else {
                let scores: Vec<F> = (0..heads)
                    .map(|h| reference::dot(&weights[h * dim..(h + 1) * dim], row, bias))
                    .collect();
                (test.class_ids[i] as usize, reference::argmax(&scores))
            }
        })
        .collect();
    let mut cells: BTreeMap<(usize, usize), u64> = BTreeMap::new();
    for (t, p) in pairs {
        *cells.entry((t, p)).or_insert(0) += 1;
    }
    FoldConfusion {
        classes: k,
        cells: cells.into_iter().map(|((t, p), n)| (t, p, n)).collect(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn cv_params(folds: usize, backend: Backend, adapter: Option<&str>) -> CvParams {
        let mut gpu = GpuOptions::default();
        gpu.adapter.name = adapter.map(str::to_owned);
        CvParams {
            folds,
            seed: 0,
            backend,
            gpu,
        }
    }

    #[test]
    fn folds_train_on_the_cpu_unless_a_gpu_is_asked_for() {
        let cv = |b, a| cv_params(3, b, a).fold_backend();
        assert_eq!(cv(Backend::Auto, None), Backend::Cpu);
        assert_eq!(cv(Backend::Auto, Some("x")), Backend::Auto);
        assert_eq!(cv(Backend::Gpu, None), Backend::Gpu);
        assert_eq!(cv(Backend::Reference, None), Backend::Reference);
    }

    #[test]
    fn folds_are_between_two_and_the_rows() {
        let path = Path::new("d.csv");
        for (k, ok) in [(1, false), (2, true), (10, true), (11, false)] {
            let r = cv_params(k, Backend::Cpu, None).check_folds(10, path);
            assert_eq!(r.is_ok(), ok, "{k}");
        }
        let e = cv_params(11, Backend::Cpu, None)
            .check_folds(10, path)
            .unwrap_err();
        assert_eq!(
            e.to_string(),
            "--folds must be between 2 and the rows of d.csv (10), got 11"
        );
    }

    #[test]
    fn spreads_are_population_ones() {
        let s = Spread::of(&[1.0, 2.0, 3.0, 4.0]).unwrap();
        assert_eq!(s.mean, 2.5);
        assert_eq!(s.std, 1.25f64.sqrt());
        assert_eq!(Spread::of(&[]), None);
    }

    #[test]
    fn f1_is_undefined_only_without_the_class() {
        let m = FoldConfusion {
            classes: 2,
            cells: vec![(0, 0, 5), (0, 1, 1), (1, 0, 2), (1, 1, 3)],
        };
        assert_eq!(m.f1s(), vec![(0, 10.0 / 13.0), (1, 6.0 / 9.0)]);
        assert_eq!(m.matrix(), vec![vec![5, 1], vec![2, 3]]);
        let none = FoldConfusion {
            classes: 2,
            cells: vec![(0, 0, 4)],
        };
        assert_eq!(none.f1s(), vec![(0, 1.0)]);
        assert_eq!(none.correct(), 4);
    }
}
