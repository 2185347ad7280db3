//! The model file: human-readable, versioned JSON whose numbers read back to
//! the identical f32/f64 bits; the binary shape here, the one-vs-rest shape
//! in [`super::ovr_file`].
//!
//! Weights are written as the exact decimal value of the stored number (an
//! f32 weight as the f64 it widens to, which every JSON reader parses back
//! exactly), so no reader ever rounds twice.

use std::path::Path;

use serde::{Deserialize, Serialize};

use crate::data::{LabelMap, Scaling};
use crate::error::{Error, Result};
use crate::float::{Precision, Real};
use crate::model::{AnyModel, Classes, FORMAT_NAME, FORMAT_VERSION, Model, TrainingInfo};
use crate::saved::{Kind, read_capped};

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
    /// The feature scaling (`--scale`); absent for unscaled models and in
    /// files written before scaling existed.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    scaling: Option<Scaling>,
}

/// Just enough of the file to check its identity before the full parse, so a
/// newer version is reported as such rather than as a shape error.
struct Header {
    format: Option<String>,
    format_version: Option<serde_json::Value>,
}

impl<F: Real> Model<F> {
    /// Writes the model atomically: a binary model in the plain shape, a
    /// one-vs-rest model with `"kind": "one-vs-rest"`.
    pub fn save(&self, path: &Path) -> Result<()> {
        let labels = match self.classes() {
            Classes::Binary(labels) => labels,
            Classes::OneVsRest(classes) => return super::ovr_file::save(self, classes, path),
        };
        let file = ModelFile {
            format: FORMAT_NAME.into(),
            format_version: FORMAT_VERSION,
            created_by: concat!("perceptron ", env!("CARGO_PKG_VERSION")).into(),
            precision: F::PRECISION,
            feature_count: self.feature_count(),
            weights: Vec::new(),
            bias: self.bias(0).to_f64(),
            has_bias: self.has_bias(),
            labels: labels.clone(),
            training: self.training.clone(),
            scaling: self.scaling().cloned(),
        };
        crate::output::write_atomic(path, |w| {
            super::numbers::write_pretty_with(&mut *w, &file, "weights", self.weights(0))?;
            w.write_all(b"\n")
        })
    }
}

/// Reads and validates a model file.
pub fn load(path: &Path) -> Result<AnyModel> {
    let text = String::from_utf8(read_capped(path, Kind::Model)?)
        .map_err(|e| Error::model(path, format!("cannot be read as UTF-8 text: {e}")))?;
    parse(path, &text)
}

/// Bytes that parsing holds per JSON array element or object member (a
/// `serde_json::Value` of 32 bytes, the f64 the file's shape reads it into
/// and the model's own copy, with margin), per object (a one-vs-rest model
/// has one record per class: its map's node and keys), and per byte of text
/// (the strings). Measured on one-vs-rest models of 70,000 classes: 1.3
/// times the peak with 1 and with 50 features.
const PARSE_BYTES_PER_VALUE: u64 = 64;
const PARSE_BYTES_PER_OBJECT: u64 = 1024;

/// Refuses model text whose parse would not fit in the memory available,
/// before parsing it: a model file may hold up to [`MAX_MODEL_BYTES`](crate::saved::MAX_MODEL_BYTES), and
/// the values it parses into take several times the text (a one-vs-rest
/// model's weights and per-class records grow with its classes).
fn check_parse_fits(path: &Path, text: &str) -> Result<()> {
    let (mut values, mut objects) = (1u64, 0u64);
    for &b in text.as_bytes() {
        match b {
            b',' | b'[' => values += 1,
            b'{' => objects += 1,
            _ => {}
        }
    }
    let needed = values
        .saturating_mul(PARSE_BYTES_PER_VALUE)
        .saturating_add(objects.saturating_mul(PARSE_BYTES_PER_OBJECT))
        .saturating_add(text.len() as u64);
    crate::memory::check(needed).map_err(|short| {
        Error::model(
            path,
            format!(
                "needs more memory than is available to be read: parsing its {values} JSON values \
                 and {objects} objects {short}"
            ),
        )
    })
}

/// Parses and validates model JSON (`path` is for messages).
pub fn parse(path: &Path, text: &str) -> Result<AnyModel> {
    check_parse_fits(path, text)?;
    let value: serde_json::Value = serde_json::from_str(text).map_err(|e| {
        Error::model(
            path,
            format!("is not a model file (not valid JSON: {})", json_at(&e)),
        )
    })?;
    check_header(path, &value)?;
    match value.get("kind").and_then(|v| v.as_str()) {
        None => {}
        Some(super::ovr_file::KIND) => return super::ovr_file::parse_value(path, value),
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
        .map_err(|e| Error::model(path, format!("is corrupt: {}", json_at(&e))))?;
    check_consistent(path, &file)?;
    match file.precision {
        Precision::F32 => Ok(AnyModel::F32(build::<f32>(path, file)?)),
        Precision::F64 => Ok(AnyModel::F64(build::<f64>(path, file)?)),
    }
}

/// A JSON error's message with its place first: serde_json's message ends
/// in " at line L column C"; say it once, first.
fn json_at(e: &serde_json::Error) -> String {
    let full = e.to_string();
    let suffix = format!(" at line {} column {}", e.line(), e.column());
    let message = full.strip_suffix(&suffix).unwrap_or(&full);
    format!("line {} column {}: {message}", e.line(), e.column())
}

/// The file says it is a perceptron model of a format version this build
/// reads.
fn check_header(path: &Path, value: &serde_json::Value) -> Result<()> {
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
    Ok(())
}

/// The binary model's fields agree with each other: one weight per
/// feature, no bias without one, two distinct labels, a valid data layout.
fn check_consistent(path: &Path, file: &ModelFile) -> Result<()> {
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
    Ok(())
}

fn build<F: Real>(path: &Path, file: ModelFile) -> Result<Model<F>> {
    let convert = |what: &str, v: f64| crate::float::exact_value::<F>(path, what, v);
    let mut weights = file
        .weights
        .iter()
        .enumerate()
        .map(|(k, &v)| convert(&format!("weight {}", k + 1), v))
        .collect::<Result<Vec<F>>>()?;
    let bias = convert("the bias", file.bias)?;
    if file.has_bias {
        weights.push(bias);
    }
    Model::new(
        weights,
        file.feature_count,
        file.has_bias,
        Classes::Binary(file.labels),
        file.training,
        Vec::new(),
    )
    .and_then(|m| m.with_scaling(file.scaling))
    .map_err(|e| Error::model(path, format!("is corrupt: {e}")))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::data::{BaseWhy, CsvInfo, Format, IndexBase, LabelColumn, LibsvmInfo};
    use crate::model::{ColumnRef, DataLayout};

    fn sample<F: Real>(weights: Vec<F>, bias: F) -> Model<F> {
        let features = weights.len();
        let mut weights = weights;
        weights.push(bias);
        let labels = LabelMap {
            positive: "5".into(),
            negative: Some("3".into()),
        };
        Model::new(
            weights,
            features,
            true,
            Classes::Binary(labels),
            TrainingInfo {
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
                shuffle_every_epoch: None,
                intercept_decay: None,
                nominal_epochs: None,
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
                    feature_names: None,
                    index_base: None,
                    ignored_columns: None,
                }),
                distributed: None,
                class_weights: None,
                early_stopping: None,
            },
            Vec::new(),
        )
        .unwrap()
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
        assert_eq!(bits(back.weights(0)), bits(&w32));

        let w64 = vec![0.1f64, f64::MAX, 5e-324, 1.0 / 3.0, -0.0];
        let m = sample(w64.clone(), 0.7f64);
        m.save(&path).unwrap();
        let AnyModel::F64(back) = load(&path).unwrap() else {
            panic!("precision changed")
        };
        let bits = |v: &[f64]| v.iter().map(|x| x.to_bits()).collect::<Vec<_>>();
        assert_eq!(bits(back.weights(0)), bits(&w64));
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
            names: vec![],
            ignored: vec![],
        };
        let l = DataLayout::of(Format::Csv, Some(&info), None, None);
        assert_eq!(
            l,
            DataLayout {
                format: Format::Csv,
                label_column: Some(ColumnRef::Number(4)),
                header: Some(false),
                delimiter: Some("tab".into()),
                feature_names: None,
                index_base: None,
                ignored_columns: None,
            }
        );
        let named = LabelColumn::Name("y".into());
        let info = CsvInfo {
            header_line: Some(2),
            label_name: Some("y".into()),
            names: vec!["a".into(), "b".into(), "c".into(), "y".into()],
            ..info
        };
        let l = DataLayout::of(Format::Csv, Some(&info), None, Some(&named));
        assert_eq!(
            (l.label_column, l.header),
            (Some(ColumnRef::Name("y".into())), Some(true))
        );
        assert_eq!(
            l.feature_names,
            Some(vec!["a".to_owned(), "b".to_owned(), "c".to_owned()])
        );
        let zero = LibsvmInfo {
            base: IndexBase::Zero,
            why: BaseWhy::NoZero,
        };
        let l = DataLayout::of(Format::Libsvm, None, Some(&zero), Some(&named));
        assert_eq!(
            (l.format, &l.label_column, l.header, &l.delimiter),
            (Format::Libsvm, &None, None, &None)
        );
        // The base is recorded, and read back; a LIBSVM layout written
        // before it was recorded is one-based, the only base read then.
        assert_eq!(l.index_base, Some(IndexBase::Zero));
        let json = serde_json::to_string(&l).unwrap();
        assert!(json.contains(r#""index_base":"zero""#), "{json}");
        let old: DataLayout = serde_json::from_str(r#"{"format":"libsvm"}"#).unwrap();
        assert_eq!(
            (old.index_base, old.libsvm_base()),
            (None, Some(IndexBase::One))
        );
        assert_eq!(l.libsvm_base(), Some(IndexBase::Zero));
        let csv = DataLayout::of(Format::Csv, Some(&info), None, None);
        assert_eq!(csv.libsvm_base(), None);
    }

    #[test]
    fn the_scaling_round_trips_bit_for_bit_and_is_checked() {
        let mean = vec![0.1f64, -1.0 / 3.0];
        let scale = vec![f64::MIN_POSITIVE, 1e300];
        let m = sample(vec![1.0f32, 2.0], 0.5)
            .with_scaling(Some(Scaling {
                kind: crate::data::ScaleKind::Standard,
                mean: Some(mean.clone()),
                scale: scale.clone(),
            }))
            .unwrap();
        let text = text_of(&m);
        assert!(text.contains("\"kind\": \"standard\""), "{text}");
        let AnyModel::F32(back) = parse(Path::new("m.json"), &text).unwrap() else {
            panic!("precision changed")
        };
        assert_eq!(back, m);
        let s = back.scaling().unwrap();
        let bits = |v: &[f64]| v.iter().map(|x| x.to_bits()).collect::<Vec<_>>();
        assert_eq!(bits(s.mean.as_ref().unwrap()), bits(&mean));
        assert_eq!(bits(&s.scale), bits(&scale));
        // Unscaled models have no field (older builds read them as before).
        assert!(!text_of(&sample(vec![1.0f32, 2.0], 0.5)).contains("scaling"));
        let zero = text.replace("1e+300", "0.0");
        assert_eq!(
            refused(&zero),
            "m.json: is corrupt: a model's feature scaling: scale 2 is 0, not a finite positive number"
        );
        let short = text.replace("\"mean\": [\n      0.1,", "\"mean\": [");
        assert!(
            refused(&short).contains("1 means for 2 scales"),
            "{}",
            refused(&short)
        );
        let maxabs = text.replace("\"standard\"", "\"maxabs\"");
        assert!(refused(&maxabs).contains("maxabs scaling has a \"mean\""));
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
