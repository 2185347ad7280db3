//! The model file: human-readable, versioned JSON whose numbers read back to
//! the identical f32/f64 bits.
//!
//! Weights are written as the exact decimal value of the stored number (an
//! f32 weight as the f64 it widens to, which every JSON reader parses back
//! exactly), so no reader ever rounds twice.

use std::io::{BufReader, Read};
use std::path::Path;

use serde::{Deserialize, Serialize};

use crate::data::{CsvInfo, Format, LabelColumn, LabelMap, Row};
use crate::error::{Error, Result};
use crate::float::{Precision, Real};
use crate::reference;

/// The `format` field of every model file.
pub const FORMAT_NAME: &str = "perceptron-model";
/// The newest model format this build writes and reads.
pub const FORMAT_VERSION: u32 = 1;
/// Model files larger than this are refused rather than read into memory.
pub const MAX_MODEL_BYTES: u64 = 1 << 30;

/// How a model was trained; saved with it.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct TrainingInfo {
    pub epochs: usize,
    pub max_epochs: usize,
    pub mistakes_per_epoch: Vec<u64>,
    pub total_mistakes: u64,
    pub converged: bool,
    /// D = max ||x~||.
    pub radius: f64,
    /// gamma = min y w~·x~ / ||w~|| when the model separates its training data.
    pub margin: Option<f64>,
    /// (D/gamma)^2.
    pub mistake_bound: Option<f64>,
    /// The engines that computed margins (e.g. `gpu: NVIDIA H100`, `cpu`).
    pub backend: String,
    /// The shuffle seed, or null when rows were visited in file order.
    pub seed: Option<u64>,
    /// Where the training data came from.
    pub data: String,
    pub rows: usize,
    pub training_accuracy: f64,
    pub seconds: f64,
    /// `classic`, `averaged` or `pocket`.
    #[serde(default)]
    pub variant: crate::train::Variant,
    /// The `--margin` threshold τ, if any.
    #[serde(default)]
    pub margin_threshold: Option<crate::train::Margin>,
    /// The model the run started from (`--init`), if any.
    #[serde(default)]
    pub init: Option<String>,
    /// Pocket variant: the epoch the weights came from and their accuracy.
    #[serde(default)]
    pub pocket_epoch: Option<usize>,
    #[serde(default)]
    pub pocket_training_accuracy: Option<f64>,
    /// Models written by `perceptron online`: examples, wrong predictions
    /// and the state of the run. There `epochs` is 1, `total_mistakes` counts
    /// updates, `radius` is D over the examples seen, and
    /// `training_accuracy` is the share of predictions, each made before
    /// learning from its example, that were right.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub online: Option<crate::online::OnlineInfo>,
    /// How the training data was laid out, so that `predict` and `eval` read
    /// a CSV file's label from the same column without being told again.
    /// Absent in files written before it was recorded.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub data_layout: Option<DataLayout>,
}

/// The layout of the training data (see [`TrainingInfo::data_layout`]).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct DataLayout {
    /// `csv`, `libsvm` or `binary`.
    pub format: Format,
    /// CSV: the label column as `--label-column` named it, else its 1-based
    /// number.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub label_column: Option<ColumnRef>,
    /// CSV: whether the first line (not blank, not a comment) was a header.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub header: Option<bool>,
    /// CSV: `,`, `;` or `tab`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub delimiter: Option<String>,
}

/// A CSV column by 1-based number or by header name; a number or a string in
/// JSON.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(untagged)]
pub enum ColumnRef {
    Number(u64),
    Name(String),
}

impl DataLayout {
    /// The layout of data in `format`; for CSV, from what the reader settled
    /// (`csv`) and how the user named the label column (`given`): a name is
    /// kept as a name, so that data with its columns in another order still
    /// reads right.
    pub fn of(format: Format, csv: Option<&CsvInfo>, given: Option<&LabelColumn>) -> Self {
        let Some(csv) = csv else {
            return DataLayout {
                format,
                label_column: None,
                header: None,
                delimiter: None,
            };
        };
        let label_column = match (given, csv.label_column) {
            (Some(LabelColumn::Name(name)), _) => Some(ColumnRef::Name(name.clone())),
            (_, Some(k)) => Some(ColumnRef::Number(k as u64)),
            (_, None) => None,
        };
        DataLayout {
            format,
            label_column,
            header: Some(csv.header_line.is_some()),
            delimiter: Some(match csv.delimiter {
                b'\t' => "tab".to_owned(),
                d => char::from(d).to_string(),
            }),
        }
    }

    /// The label column to read other CSV data with, if the layout has one.
    pub fn label_column(&self) -> Option<LabelColumn> {
        match self.label_column.as_ref()? {
            ColumnRef::Number(n) => usize::try_from(*n).ok().map(LabelColumn::Index),
            ColumnRef::Name(name) => Some(LabelColumn::Name(name.clone())),
        }
    }

    /// Refuses a label column no CSV file can have (`path` is for messages).
    pub(crate) fn check(&self, path: &Path) -> Result<()> {
        match &self.label_column {
            Some(ColumnRef::Number(0)) => Err(Error::model(
                path,
                "is corrupt: \"training.data_layout.label_column\" is 0, but columns are \
                 numbered from 1",
            )),
            Some(ColumnRef::Name(name)) if name.is_empty() => Err(Error::model(
                path,
                "is corrupt: \"training.data_layout.label_column\" is an empty name",
            )),
            _ => Ok(()),
        }
    }
}

/// A trained binary perceptron: h(x) = sign(w·x + b).
#[derive(Clone, Debug, PartialEq)]
pub struct Model<F> {
    pub weights: Vec<F>,
    pub bias: F,
    /// Whether a bias was trained (false with `--no-bias`: `bias` is 0).
    pub has_bias: bool,
    pub labels: LabelMap,
    pub training: TrainingInfo,
}

/// A model of either precision, as read from a file.
#[derive(Clone, Debug, PartialEq)]
pub enum AnyModel {
    F32(Model<f32>),
    F64(Model<f64>),
    /// One-vs-rest multiclass models (see [`crate::ovr`]).
    OvrF32(crate::ovr::OvrModel<f32>),
    OvrF64(crate::ovr::OvrModel<f64>),
}

impl AnyModel {
    pub fn precision(&self) -> Precision {
        match self {
            AnyModel::F32(_) | AnyModel::OvrF32(_) => Precision::F32,
            AnyModel::F64(_) | AnyModel::OvrF64(_) => Precision::F64,
        }
    }
}

/// The file's JSON shape.
#[derive(Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
struct ModelFile {
    format: String,
    format_version: u32,
    created_by: String,
    precision: Precision,
    feature_count: usize,
    weights: Vec<f64>,
    bias: f64,
    has_bias: bool,
    labels: LabelMap,
    training: TrainingInfo,
}

/// Just enough of the file to check its identity before the full parse, so a
/// newer version is reported as such rather than as a shape error.
struct Header {
    format: Option<String>,
    format_version: Option<serde_json::Value>,
}

impl<F: Real> Model<F> {
    pub fn feature_count(&self) -> usize {
        self.weights.len()
    }

    /// w~ = [w, b] (or just w without a bias), as the reference dot wants it.
    pub fn augmented_weights(&self) -> Vec<F> {
        let mut w = self.weights.clone();
        if self.has_bias {
            w.push(self.bias);
        }
        w
    }

    /// s = w·x + b with the reference arithmetic. Rows may have fewer
    /// features than the model (missing ones are zero), never more.
    pub fn score(&self, augmented: &[F], row: Row<'_, F>) -> F {
        reference::dot(augmented, row, self.has_bias)
    }

    /// The predicted class: +1 when s > 0, otherwise -1 (s = 0 goes to the
    /// negative class, as in scikit-learn).
    pub fn decide(s: F) -> i8 {
        if s > F::ZERO { 1 } else { -1 }
    }

    /// Writes the model atomically.
    pub fn save(&self, path: &Path) -> Result<()> {
        let file = ModelFile {
            format: FORMAT_NAME.into(),
            format_version: FORMAT_VERSION,
            created_by: concat!("perceptron ", env!("CARGO_PKG_VERSION")).into(),
            precision: F::PRECISION,
            feature_count: self.weights.len(),
            weights: self.weights.iter().map(|w| w.to_f64()).collect(),
            bias: self.bias.to_f64(),
            has_bias: self.has_bias,
            labels: self.labels.clone(),
            training: self.training.clone(),
        };
        crate::output::write_atomic(path, |w| {
            serde_json::to_writer_pretty(&mut *w, &file).map_err(std::io::Error::other)?;
            w.write_all(b"\n")
        })
    }
}

/// Reads and validates a model file.
pub fn load(path: &Path) -> Result<AnyModel> {
    let file =
        std::fs::File::open(path).map_err(|e| Error::io(path, "cannot open model file", e))?;
    let meta = file
        .metadata()
        .map_err(|e| Error::io(path, "cannot read model file", e))?;
    if meta.is_dir() {
        return Err(Error::model(path, "is a directory, not a model file"));
    }
    if meta.len() > MAX_MODEL_BYTES {
        return Err(Error::model(
            path,
            format!(
                "is {} bytes; model files over {MAX_MODEL_BYTES} bytes are refused",
                meta.len()
            ),
        ));
    }
    let mut text = String::new();
    BufReader::new(file)
        .take(MAX_MODEL_BYTES + 1)
        .read_to_string(&mut text)
        .map_err(|e| Error::model(path, format!("cannot be read as UTF-8 text: {e}")))?;
    parse(path, &text)
}

/// Parses and validates model JSON (`path` is for messages).
pub fn parse(path: &Path, text: &str) -> Result<AnyModel> {
    // serde_json's message ends in " at line L column C"; say it once, first.
    let at = |e: &serde_json::Error| {
        let full = e.to_string();
        let suffix = format!(" at line {} column {}", e.line(), e.column());
        let message = full.strip_suffix(&suffix).unwrap_or(&full);
        format!("line {} column {}: {message}", e.line(), e.column())
    };
    let value: serde_json::Value = serde_json::from_str(text).map_err(|e| {
        Error::model(
            path,
            format!("is not a model file (not valid JSON: {})", at(&e)),
        )
    })?;
    let header = Header {
        format: value
            .get("format")
            .and_then(|v| v.as_str())
            .map(str::to_owned),
        format_version: value.get("format_version").cloned(),
    };
    if header.format.as_deref() != Some(FORMAT_NAME) {
        return Err(Error::model(
            path,
            format!(
                "is not a perceptron model file (its \"format\" field is not \"{FORMAT_NAME}\")"
            ),
        ));
    }
    match header.format_version.as_ref().and_then(|v| v.as_u64()) {
        Some(v) if v >= 1 && v <= FORMAT_VERSION as u64 => {}
        Some(v) if v > FORMAT_VERSION as u64 => {
            return Err(Error::model(
                path,
                format!(
                    "was written by a newer perceptron (model format version {v}); this build reads versions up to {FORMAT_VERSION}: upgrade perceptron"
                ),
            ));
        }
        _ => {
            return Err(Error::model(
                path,
                "has a missing or invalid \"format_version\" (expected a positive integer)",
            ));
        }
    }
    match value.get("kind").and_then(|v| v.as_str()) {
        None => {}
        Some(crate::ovr::KIND) => return crate::ovr::parse_value(path, value),
        Some(other) => {
            return Err(Error::model(
                path,
                format!(
                    "is a \"{other}\" model, which this build does not know: upgrade perceptron"
                ),
            ));
        }
    }
    let file: ModelFile = serde_json::from_str(text)
        .map_err(|e| Error::model(path, format!("is corrupt: {}", at(&e))))?;
    if file.weights.len() != file.feature_count {
        return Err(Error::model(
            path,
            format!(
                "is corrupt: \"feature_count\" is {} but there are {} weights",
                file.feature_count,
                file.weights.len()
            ),
        ));
    }
    if !file.has_bias && file.bias != 0.0 {
        return Err(Error::model(
            path,
            format!(
                "is corrupt: \"has_bias\" is false but \"bias\" is {}",
                file.bias
            ),
        ));
    }
    if let Some(negative) = &file.labels.negative
        && crate::data::labels::same_label(negative, &file.labels.positive)
    {
        return Err(Error::model(
            path,
            format!(
                "is corrupt: its +1 label {} and its -1 label {} are the same label; a model's \
                 two classes must differ",
                crate::data::message::quote(&file.labels.positive),
                crate::data::message::quote(negative)
            ),
        ));
    }
    if let Some(layout) = &file.training.data_layout {
        layout.check(path)?;
    }
    match file.precision {
        Precision::F32 => Ok(AnyModel::F32(build::<f32>(path, file)?)),
        Precision::F64 => Ok(AnyModel::F64(build::<f64>(path, file)?)),
    }
}

/// A number read back from a model or checkpoint file: it must be finite
/// and exactly a value of `F` (files store every value exactly), else the
/// file is corrupt or claims the wrong precision.
pub(crate) fn exact_value<F: Real>(path: &Path, what: &str, v: f64) -> Result<F> {
    let x = F::from_f64(v);
    if !v.is_finite() {
        return Err(Error::model(
            path,
            format!("is corrupt: {what} is {v}, not a finite number"),
        ));
    }
    if x.to_f64() != v {
        return Err(Error::model(
            path,
            format!(
                "has the wrong precision: {what} = {v} is not an {} value, though the file says \"precision\": \"{}\"",
                F::PRECISION,
                F::PRECISION
            ),
        ));
    }
    Ok(x)
}

fn build<F: Real>(path: &Path, file: ModelFile) -> Result<Model<F>> {
    let convert = |what: &str, v: f64| exact_value::<F>(path, what, v);
    let weights = file
        .weights
        .iter()
        .enumerate()
        .map(|(k, &v)| convert(&format!("weight {}", k + 1), v))
        .collect::<Result<Vec<F>>>()?;
    let bias = convert("the bias", file.bias)?;
    Ok(Model {
        weights,
        bias,
        has_bias: file.has_bias,
        labels: file.labels,
        training: file.training,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn sample<F: Real>(weights: Vec<F>, bias: F) -> Model<F> {
        Model {
            weights,
            bias,
            has_bias: true,
            labels: LabelMap {
                positive: "5".into(),
                negative: Some("3".into()),
            },
            training: TrainingInfo {
                epochs: 2,
                max_epochs: 10,
                mistakes_per_epoch: vec![3, 0],
                total_mistakes: 3,
                converged: true,
                radius: 2.5,
                margin: Some(0.1),
                mistake_bound: Some(625.0),
                backend: "reference".into(),
                seed: None,
                data: "x.csv".into(),
                rows: 10,
                training_accuracy: 1.0,
                seconds: 0.0,
                variant: crate::train::Variant::Classic,
                margin_threshold: None,
                init: None,
                pocket_epoch: None,
                pocket_training_accuracy: None,
                online: None,
                data_layout: Some(DataLayout {
                    format: Format::Csv,
                    label_column: Some(ColumnRef::Name("class".into())),
                    header: Some(true),
                    delimiter: Some(";".into()),
                }),
            },
        }
    }

    #[test]
    fn every_bit_survives_a_round_trip() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("m.json");
        let w32 = vec![0.1f32, -3.4028235e38, 1e-45, 1.0 / 3.0, 16777217.0, -0.0];
        let m = sample(w32.clone(), 0.3f32);
        m.save(&path).unwrap();
        let AnyModel::F32(back) = load(&path).unwrap() else {
            panic!("precision changed")
        };
        assert_eq!(back, m);
        let bits = |v: &[f32]| v.iter().map(|x| x.to_bits()).collect::<Vec<_>>();
        assert_eq!(bits(&back.weights), bits(&w32));

        let w64 = vec![0.1f64, f64::MAX, 5e-324, 1.0 / 3.0, -0.0];
        let m = sample(w64.clone(), 0.7f64);
        m.save(&path).unwrap();
        let AnyModel::F64(back) = load(&path).unwrap() else {
            panic!("precision changed")
        };
        let bits = |v: &[f64]| v.iter().map(|x| x.to_bits()).collect::<Vec<_>>();
        assert_eq!(bits(&back.weights), bits(&w64));
    }

    fn text_of<F: Real>(m: &Model<F>) -> String {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("m.json");
        m.save(&path).unwrap();
        std::fs::read_to_string(path).unwrap()
    }

    fn refused(text: &str) -> String {
        parse(Path::new("m.json"), text).unwrap_err().to_string()
    }

    #[test]
    fn the_data_layout_is_optional_and_checked() {
        let m = sample(vec![1.0f64, 2.0], 0.5);
        let text = text_of(&m);
        assert!(
            text.contains(
                "\"data_layout\": {\n      \"format\": \"csv\",\n      \"label_column\": \
                 \"class\",\n      \"header\": true,\n      \"delimiter\": \";\"\n    }"
            ),
            "{text}"
        );
        // Files from before it was recorded load, without it.
        let mut v: serde_json::Value = serde_json::from_str(&text).unwrap();
        v["training"].as_object_mut().unwrap().remove("data_layout");
        let old = v.to_string();
        let AnyModel::F64(back) = parse(Path::new("m.json"), &old).unwrap() else {
            panic!("precision changed")
        };
        assert_eq!(back.training.data_layout, None);
        assert!(!text_of(&back).contains("data_layout"));
        // A number is a number, a name a name.
        let numbered = text.replace("\"label_column\": \"class\"", "\"label_column\": 7");
        let AnyModel::F64(back) = parse(Path::new("m.json"), &numbered).unwrap() else {
            panic!("precision changed")
        };
        let layout = back.training.data_layout.unwrap();
        assert_eq!(layout.label_column(), Some(LabelColumn::Index(7)));
        assert_eq!(
            m.training.data_layout.unwrap().label_column(),
            Some(LabelColumn::Name("class".into()))
        );
        assert_eq!(
            refused(&text.replace("\"label_column\": \"class\"", "\"label_column\": 0")),
            "m.json: is corrupt: \"training.data_layout.label_column\" is 0, but columns are \
             numbered from 1"
        );
        assert_eq!(
            refused(&text.replace("\"label_column\": \"class\"", "\"label_column\": \"\"")),
            "m.json: is corrupt: \"training.data_layout.label_column\" is an empty name"
        );
        assert!(
            refused(&text.replace("\"label_column\": \"class\"", "\"label_column\": -2"))
                .starts_with("m.json: is corrupt: line ")
        );
        assert!(
            refused(&text.replace("\"format\": \"csv\"", "\"format\": \"xls\""))
                .contains("unknown variant `xls`")
        );
    }

    #[test]
    fn the_data_layout_follows_what_the_reader_found() {
        let info = CsvInfo {
            header_line: None,
            label_column: Some(4),
            label_name: None,
            delimiter: b'\t',
            columns: 4,
        };
        let l = DataLayout::of(Format::Csv, Some(&info), None);
        assert_eq!(
            l,
            DataLayout {
                format: Format::Csv,
                label_column: Some(ColumnRef::Number(4)),
                header: Some(false),
                delimiter: Some("tab".into()),
            }
        );
        let named = LabelColumn::Name("y".into());
        let info = CsvInfo {
            header_line: Some(2),
            label_name: Some("y".into()),
            ..info
        };
        let l = DataLayout::of(Format::Csv, Some(&info), Some(&named));
        assert_eq!(
            (l.label_column, l.header),
            (Some(ColumnRef::Name("y".into())), Some(true))
        );
        let l = DataLayout::of(Format::Libsvm, None, Some(&named));
        assert_eq!(
            (l.format, l.label_column, l.header, l.delimiter),
            (Format::Libsvm, None, None, None)
        );
    }

    #[test]
    fn bad_files_are_refused_with_the_reason() {
        let good = text_of(&sample(vec![1.0f32, 2.0], 0.5));
        assert!(refused("{").contains("not valid JSON"));
        assert!(refused("[1,2]").contains("not a perceptron model"));
        assert!(
            refused(&good.replace("\"format_version\": 1", "\"format_version\": 7"))
                .contains("newer perceptron")
        );
        assert!(
            refused(&good.replace("\"format_version\": 1", "\"format_version\": \"1\""))
                .contains("format_version")
        );
        assert!(
            refused(&good.replace("\"feature_count\": 2", "\"feature_count\": 3"))
                .contains("3 but there are 2")
        );
        assert!(
            refused(&good.replace("\"precision\": \"f32\"", "\"precision\": \"f16\""))
                .contains("corrupt")
        );
        let wrong = good.replace("2.0", "0.1");
        assert!(
            refused(&wrong).contains("wrong precision: weight 2 = 0.1"),
            "{}",
            refused(&wrong)
        );
        assert!(
            refused(&good.replace("\"bias\": 0.5", "\"bias\": 1e999"))
                .contains("number out of range")
        );
        let truncated = &good[..good.len() / 2];
        assert!(refused(truncated).contains("not valid JSON"));
        assert_eq!(
            refused("{\n  \"format\": [1,"),
            "m.json: is not a model file (not valid JSON: line 2 column 15: EOF while parsing a value)"
        );
        let e = refused(&good.replace("\"has_bias\": true", "\"has_bias\": 3"));
        assert!(e.starts_with("m.json: is corrupt: line "), "{e}");
        assert_eq!(e.matches(" line ").count(), 1, "location said once: {e}");
    }
}
