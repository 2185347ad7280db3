//! The end of `perceptron train`: the model and its pictures written and
//! replaced together, with a stop request honoured at every safe point
//! between them (the trained state is then saved as a checkpoint and
//! nothing is replaced).

use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};

use super::args::TrainArgs;
use super::{interrupted_message, test_hooks};
use crate::data::{CsvInfo, LibsvmInfo};
use crate::error::{Result, exit};
use crate::float::Real;
use crate::model::{DataLayout, Model};
use crate::run::Run;
use crate::train::{Fit, Stop, checkpoint};

/// What writing ended with.
pub(super) enum Written<F> {
    /// The model and the pictures, in place.
    Saved(Box<Model<F>>, Vec<PathBuf>),
    /// A stop request came first: the exit status, after the checkpoint.
    Stopped(i32),
}

/// The outputs of one finished run and where a stop request sends it.
pub(super) struct Writing<'a, F: Real> {
    pub args: &'a TrainArgs,
    pub run: &'a mut Run<F>,
    pub fit: &'a Fit<F>,
    pub output: &'a Path,
    pub checkpoint: PathBuf,
    /// Set by the first SIGINT or SIGTERM.
    pub stop: Arc<AtomicBool>,
}

impl<F: Real> Writing<'_, F> {
    /// Writes the model, then the pictures, then replaces the old files
    /// together; stops at the first safe point after a stop request.
    pub fn write(
        &mut self,
        csv: Option<&CsvInfo>,
        libsvm: Option<&LibsvmInfo>,
    ) -> Result<Written<F>> {
        if self.fit.stop == Stop::Interrupted {
            return self.interrupted(false);
        }
        if self.stopped() {
            return self.interrupted(true);
        }
        // The model and its pictures are replaced together, once all are
        // written: a picture that cannot be written leaves the old model.
        let batch = crate::output::Batch::begin();
        let Some((model, plots)) = self.stage(csv, libsvm)? else {
            // The staged files go with the batch first: the checkpoint
            // that follows must be written, not staged with them.
            drop(batch);
            return self.interrupted(true);
        };
        batch.commit()?;
        Ok(Written::Saved(Box::new(model), plots))
    }

    /// Writes the model and then the pictures into the open batch; `None`
    /// when a stop request comes at a safe point between them.
    fn stage(
        &mut self,
        csv: Option<&CsvInfo>,
        libsvm: Option<&LibsvmInfo>,
    ) -> Result<Option<(Model<F>, Vec<PathBuf>)>> {
        let layout = DataLayout::of(
            self.run.data.format,
            csv,
            libsvm,
            self.args.data_args.csv.label_column.as_ref(),
        );
        let model = self.run.model(self.fit, Some(layout))?;
        model.save(self.output)?;
        // On standard output the model is out once saved: the run goes on
        // to its end from there, pictures included.
        let to_stdout = crate::output::is_stdout(self.output);
        let stop = self.stop.clone();
        let stopped = move || !to_stdout && Self::asked_to_stop(&stop);
        if stopped() {
            return Ok(None);
        }
        #[cfg(feature = "plot")]
        let plots = match &self.args.plot {
            Some(dir) => match crate::plot::training::training_pictures(
                dir,
                &model,
                self.output,
                &self.run.data,
                &stopped,
            )? {
                Some(plots) => plots,
                None => return Ok(None),
            },
            None => Vec::new(),
        };
        #[cfg(not(feature = "plot"))]
        let plots: Vec<PathBuf> = Vec::new();
        if stopped() {
            return Ok(None);
        }
        Ok(Some((model, plots)))
    }

    /// A safe point of the writing: whether a stop request has come.
    fn stopped(&self) -> bool {
        Self::asked_to_stop(&self.stop)
    }

    fn asked_to_stop(stop: &AtomicBool) -> bool {
        test_hooks::pause_before_writing();
        stop.load(Ordering::SeqCst)
    }

    /// Saves the trained state as the loop's checkpoint would be, says so,
    /// and replaces nothing.
    fn interrupted(&mut self, while_writing: bool) -> Result<Written<F>> {
        self.run.take_fingerprint();
        checkpoint::save(&self.checkpoint, &self.run.description, &self.fit.state)?;
        say_interrupted(
            self.fit,
            &self.checkpoint,
            self.args,
            while_writing,
            self.output,
        );
        Ok(Written::Stopped(exit::INTERRUPTED))
    }
}

/// Tells the user where the run `fit` stopped, that its state is saved in
/// `saved`, and how to continue `args`'s command (see [`stopped_message`]).
pub(super) fn say_interrupted<F: Real>(
    fit: &Fit<F>,
    saved: &Path,
    args: &TrainArgs,
    while_writing: bool,
    output: &Path,
) {
    let (epoch, position) = (fit.state.epoch, fit.state.position);
    let message = interrupted_message(epoch, position, saved, args.resume.as_deref());
    eprintln!(
        "perceptron: {}",
        stopped_message(message, while_writing, output)
    );
}

/// What a stopped run says: `message` (where the state is saved), and,
/// when training had ended (`while_writing`), that the model at `output`
/// was left as it was.
fn stopped_message(message: String, while_writing: bool, output: &Path) -> String {
    if while_writing && crate::output::is_stdout(output) {
        format!("{message} (training had ended; the model was not written)")
    } else if while_writing {
        format!(
            "{message} (training had ended; {} was not replaced)",
            output.display()
        )
    } else {
        message
    }
}
