//! A stop request that reaches one rank once training has ended stops every
//! rank before the model is replaced (issue 28): the ranks are threads of
//! this process, and the request is a stop source that answers yes from a
//! chosen safe point on, on one rank only.

use std::cell::Cell;
use std::path::{Path, PathBuf};

use clap::Parser;

use super::on_ranks;
use crate::cli::{Cli, Command};
use crate::distributed::agree::plainly;
use crate::distributed::local::run_ranks;
use crate::distributed::{MeteredTransport, Transport};
use crate::error::exit;

use super::super::args::{DistributedArg, TrainArgs};

/// Epochs every run here trains (heart_scale does not converge in them).
const EPOCHS: usize = 2;

fn data() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("data/heart_scale.svm")
}

fn args(line: &[&str]) -> TrainArgs {
    let mut all = vec!["perceptron", "train"];
    all.extend(line);
    match Cli::try_parse_from(all).unwrap().command {
        Command::Train(a) => a,
        _ => unreachable!(),
    }
}

/// Runs `train` on `ranks` ranks; rank 1 is asked to stop from its
/// `stop_from`-th question on (the loop asks once per epoch, then each
/// safe point of the writing asks once). Every rank's exit status.
fn train_on_ranks(
    ranks: usize,
    a: &TrainArgs,
    mode: DistributedArg,
    resume: Option<(&Path, &str)>,
    stop_from: usize,
) -> Vec<i32> {
    run_ranks(ranks, |t| {
        let asked = Cell::new(0);
        let stop = || {
            asked.set(asked.get() + 1);
            t.rank() == 1 && asked.get() >= stop_from
        };
        let net = MeteredTransport::new(t);
        on_ranks::train::<f32>(&net, a, resume, mode, &plainly, &stop)
            .unwrap_or_else(|f| panic!("rank {}: {f}", t.rank()))
    })
}

/// The model file without the time it took.
fn essence(path: &Path) -> serde_json::Value {
    let mut v: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(path).unwrap()).unwrap();
    v["training"].as_object_mut().unwrap().remove("seconds");
    v
}

fn temporary_files(dir: &Path) -> Vec<String> {
    std::fs::read_dir(dir)
        .unwrap()
        .filter_map(|e| e.ok())
        .map(|e| e.file_name().to_string_lossy().into_owned())
        .filter(|n| n.starts_with(".perceptron-"))
        .collect()
}

#[test]
fn a_stop_request_after_training_stops_every_rank_before_the_model_is_replaced() {
    let data = data();
    for (mode, name) in [
        (DistributedArg::Exact, "exact"),
        (DistributedArg::Mix, "mix"),
    ] {
        let dir = tempfile::tempdir().unwrap();
        let full = dir.path().join("full.json");
        let line = |model: &Path| {
            let epochs = EPOCHS.to_string();
            let model = model.to_str().unwrap().to_owned();
            let data = data.to_str().unwrap().to_owned();
            args(&[
                &data,
                "--distributed",
                name,
                "--max-epochs",
                &epochs,
                "--backend",
                "reference",
                "--json",
                "-o",
                &model,
            ])
        };
        // Never asked to stop: the model is written.
        let codes = train_on_ranks(3, &line(&full), mode, None, usize::MAX);
        assert_eq!(codes, [exit::SUCCESS; 3], "{name}");

        // Asked at the first safe point after the loop, then at the one
        // after the model is written and before it replaces the old one.
        for stop_from in [EPOCHS + 1, EPOCHS + 2] {
            let model = dir.path().join("model.json");
            std::fs::write(&model, "old model").unwrap();
            let a = line(&model);
            let codes = train_on_ranks(3, &a, mode, None, stop_from);
            let case = format!("{name}, stopped at question {stop_from}");
            assert_eq!(codes, [exit::INTERRUPTED; 3], "{case}");
            assert_eq!(std::fs::read_to_string(&model).unwrap(), "old model");
            assert!(
                temporary_files(dir.path()).is_empty(),
                "{case}: {:?}",
                temporary_files(dir.path())
            );
            // The trained state was saved: resuming from it writes the
            // model of the run that was not stopped.
            let ck = dir.path().join("model.checkpoint.json");
            let text = std::fs::read_to_string(&ck).unwrap();
            let mut resumed = a.clone();
            resumed.resume = Some(ck.clone());
            let codes = train_on_ranks(3, &resumed, mode, Some((&ck, &text)), usize::MAX);
            assert_eq!(codes, [exit::SUCCESS; 3], "{case}");
            assert_eq!(essence(&model), essence(&full), "{case}");
            std::fs::remove_file(&ck).unwrap();
        }
    }
}
