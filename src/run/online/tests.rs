//! Tests of the online run: it learns from every example as the learner
//! alone does, snapshots when asked, stops when the reader goes away, and
//! refuses what it cannot continue from.

use std::io::Write;
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::sync::atomic::AtomicBool;

use super::*;
use crate::data::LoadOptions;
use crate::data::stream::{RowStream, StreamSource};
use crate::error::{Error, Result};
use crate::model::Model;
use crate::online::{Learner, OnlineState};

/// Records what a run tells its observer; the reader of the predictions
/// goes away after `close_after` of them.
#[derive(Default)]
struct Record {
    predictions: Vec<String>,
    examples: u64,
    snapshots: Vec<OnlineState>,
    close_after: Option<usize>,
}

impl<F: crate::float::Real> OnlineObserver<F> for Record {
    fn on_prediction(&mut self, label: &str) -> Result<bool> {
        self.predictions.push(label.to_owned());
        Ok(self.close_after != Some(self.predictions.len()))
    }
    fn on_example(&mut self, learner: &Learner<F>) {
        self.examples = learner.examples();
    }
    fn on_snapshot(&mut self, model: &Model<F>) -> Result<()> {
        let online = model.training.online.as_ref().map(|o| o.state);
        self.snapshots.extend(online);
        Ok(())
    }
}

fn iris() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("data/iris_setosa.csv")
}

fn params() -> OnlineParams {
    OnlineParams {
        bias: true,
        margin: None,
        positive: None,
        max_features: 1 << 20,
        snapshot_every: Some(40),
        report_bound: true,
        precision: None,
    }
}

fn open<'a>(
    params: OnlineParams,
    path: &'a Path,
    init: Option<&Path>,
) -> Result<OnlineRun<'a, f64>> {
    let start = OnlineStart::load(&params, init)?;
    let stop = Arc::new(AtomicBool::new(false));
    let run = OnlineRun::open(
        params,
        start,
        StreamSource::File(path),
        LoadOptions::default(),
        || stop,
    )?;
    Ok(run.expect("no stop was asked for"))
}

#[test]
fn a_run_is_the_learner_over_the_stream_with_snapshots_and_the_second_pass() {
    let path = iris();
    let mut run = open(params(), &path, None).unwrap();
    let mut record = Record::default();
    let state = run.learn(&mut record).unwrap();
    assert_eq!(state, OnlineState::Ended);
    let state = run.end(state).unwrap();
    let model = run.finish(state, &mut record).unwrap();
    let summary = run.summary(state);

    // The learner alone, stepping the same rows.
    let mut stream = RowStream::<f64>::open(
        StreamSource::File(&path),
        &LoadOptions::default(),
        1 << 20,
        None,
    )
    .unwrap();
    let mut learner = Learner::new(true, 0.0);
    let mut predicted = Vec::new();
    while let Some(row) = stream.next_row().unwrap() {
        let y = if row.label == "1" { 1 } else { -1 };
        let (p, _) = learner.step(row.row, row.features, y).unwrap();
        predicted.push(if p.label > 0 { "1" } else { "-1" }.to_owned());
    }
    assert_eq!(record.predictions, predicted);
    assert_eq!(record.examples, 150);
    assert_eq!(run.learner().augmented(), learner.augmented());
    assert_eq!(model.weights(0), learner.weights());
    assert_eq!(
        (
            summary.examples,
            summary.total_mistakes,
            summary.wrong_predictions
        ),
        (150, learner.mistakes(), learner.wrong_predictions())
    );
    // Every 40 examples, then the final one.
    let running = [OnlineState::Running; 3];
    assert_eq!(record.snapshots[..3], running);
    assert_eq!(record.snapshots[3..], [OnlineState::Ended]);
    assert_eq!(summary.snapshots, 4);
    assert_eq!(summary.second_pass_rows, Some(150));
    assert_eq!(summary.label_rule, "numeric");
    assert_eq!(summary.mistake_bound.is_some(), summary.margin.is_some());
}

#[test]
fn the_summary_is_the_json_record_and_renders_its_own_text() {
    let path = iris();
    let mut run = open(params(), &path, None).unwrap();
    let state = run.learn(&mut Record::default()).unwrap();
    let state = run.end(state).unwrap();
    let mut summary = run.summary(state);
    summary.model = Some("m.json".into());
    let json = serde_json::to_string(&summary).unwrap();
    // Where the front end saved the model sits between the bound and the
    // snapshots, as `online --json` has always printed it.
    assert!(json.contains(r#""bound_holds":"#));
    assert!(json.contains(r#","model":"m.json","snapshot":null,"snapshots":"#));
    let text = summary.render();
    assert!(text.starts_with("data        "));
    assert!(text.contains("\nmodel       m.json\n"));
}

#[test]
fn a_reader_gone_away_ends_the_run_after_learning_that_example() {
    let path = iris();
    let mut run = open(params(), &path, None).unwrap();
    let mut record = Record {
        close_after: Some(7),
        ..Record::default()
    };
    let state = run.learn(&mut record).unwrap();
    assert_eq!(state, OnlineState::Closed);
    assert_eq!(run.end(state).unwrap(), OnlineState::Closed);
    let summary = run.summary(OnlineState::Closed);
    assert_eq!((summary.examples, summary.second_pass_rows), (7, None));
}

#[test]
fn labels_and_starting_points_that_cannot_continue_exactly_are_refused() {
    let numeric = LabelRule::Numeric;
    let signs: Vec<_> = ["1", "+1", "0", "-1", "2", "cat"]
        .iter()
        .map(|t| numeric.sign(t))
        .collect();
    assert_eq!(signs, [Some(1), Some(1), Some(-1), Some(-1), None, None]);

    let dir = tempfile::tempdir().unwrap();
    let model = dir.path().join("m.json");
    let path = iris();
    let mut run = open(params(), &path, None).unwrap();
    let state = run.learn(&mut Record::default()).unwrap();
    run.finish(state, &mut Record::default())
        .unwrap()
        .save(&model)
        .unwrap();
    let no_bias = OnlineParams {
        bias: false,
        ..params()
    };
    let e = open(no_bias, &path, Some(&model)).err().unwrap();
    assert!(
        matches!(&e, Error::Usage(m) if m.contains("leave out --no-bias")),
        "{e}"
    );
    // From the model, the run goes on with its labels.
    let run = open(params(), &path, Some(&model)).unwrap();
    assert_eq!(run.summary(OnlineState::Running).label_rule, "model");
}

#[test]
fn an_empty_input_is_refused_when_opened() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("empty.csv");
    let mut f = std::fs::File::create(&path).unwrap();
    writeln!(f, "1,2,3").unwrap();
    drop(f);
    // One example is enough to learn from; an empty stream is refused at once.
    let mut run = open(params(), &path, None).unwrap();
    let state = run.learn(&mut Record::default()).unwrap();
    assert_eq!(run.end(state).unwrap(), OnlineState::Ended);
    std::fs::write(&path, "").unwrap();
    assert!(open(params(), &path, None).is_err());
}
