//! The bad-input table: each case's exit code and the message that names the file, line, column and value.

use std::io::Write;

use super::*;
use crate::common::{cmd, data_file, data_str};

/// What a bad-input case creates in its directory before running.
enum Make {
    Text(&'static str, &'static str),
    Bytes(&'static str, Vec<u8>),
    Dir(&'static str),
    /// A model trained on iris_setosa (4 features), f64.
    IrisModel(&'static str),
    /// The iris model with one text replacement.
    EditedModel(&'static str, &'static str, &'static str),
    /// A file whose second line is over the 64 MiB line limit, written by
    /// the test rather than held in the table.
    LongLine(&'static str),
    /// The checkpoint of one f64 epoch on iris_setosa, made with
    /// `--max-epochs 1`.
    IrisCheckpoint(&'static str),
    /// That checkpoint with text replacements.
    EditedCheckpoint(&'static str, &'static [(&'static str, &'static str)]),
    /// An environment variable for the command.
    Env(&'static str, &'static str),
}

struct Case {
    name: &'static str,
    args: &'static [&'static str],
    make: Vec<Make>,
    code: i32,
    /// Fragments stderr must contain. `@data/` expands to the data folder.
    stderr: &'static [&'static str],
}

fn gzip(bytes: &[u8]) -> Vec<u8> {
    let mut enc = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::default());
    enc.write_all(bytes).unwrap();
    enc.finish().unwrap()
}

fn truncated_gzip() -> Vec<u8> {
    let text: Vec<u8> = (0..20000)
        .flat_map(|i| format!("{},{}.25,{}\n", i % 2, i, i * 7).into_bytes())
        .collect();
    let gz = gzip(&text);
    gz[..gz.len() / 2].to_vec()
}

/// A one-vs-rest model file whose first and third classes are one label.
const OVR_TWICE: &str = r#"{
  "format": "perceptron-model", "format_version": 1, "kind": "one-vs-rest",
  "created_by": "hand", "precision": "f64", "feature_count": 1,
  "classes": ["1", "-1", "1.0"], "weights": [[1.0], [-1.0], [0.5]], "bias": [0.0, 0.0, 0.0],
  "has_bias": true,
  "training": {
    "epochs": 1, "max_epochs": 1, "mistakes_per_epoch": [0], "total_mistakes": 0,
    "converged": true, "radius": 1.0, "margin": null, "mistake_bound": null,
    "backend": "reference", "seed": null, "data": "x.csv", "rows": 3,
    "training_accuracy": 1.0, "seconds": 0.0
  },
  "class_training": [
    {"mistakes_per_epoch": [0], "total_mistakes": 0, "converged_epoch": 1, "margin": null, "mistake_bound": null},
    {"mistakes_per_epoch": [0], "total_mistakes": 0, "converged_epoch": 1, "margin": null, "mistake_bound": null},
    {"mistakes_per_epoch": [0], "total_mistakes": 0, "converged_epoch": 1, "margin": null, "mistake_bound": null}
  ]
}"#;

fn cases() -> Vec<Case> {
    use Make::*;
    vec![
        Case {
            name: "predictions over the model",
            args: &["predict", "m.json", "@data/iris_setosa.csv", "-o", "m.json"],
            make: vec![IrisModel("m.json")],
            code: 2,
            stderr: &["the output m.json is also an input of this command (m.json)"],
        },
        Case {
            name: "a model over its training data",
            args: &["train", "d.csv", "-o", "d.csv"],
            make: vec![Text("d.csv", "1,2\n-1,-3\n")],
            code: 2,
            stderr: &["writing it would destroy the input"],
        },
        Case {
            name: "checkpoints every 0 epochs",
            args: &[
                "train",
                "@data/iris_setosa.csv",
                "--checkpoint",
                "c.json",
                "--checkpoint-every",
                "0",
            ],
            make: vec![],
            code: 2,
            stderr: &["--checkpoint-every must be at least 1"],
        },
        Case {
            name: "a margin threshold below 0",
            args: &["train", "@data/iris_setosa.csv", "--margin", "-0.5"],
            make: vec![],
            code: 2,
            stderr: &[
                "--margin must be a finite number >= 0, got \"-0.5\": below 0, the zero \
                 weights would pass every row and the run would learn nothing",
            ],
        },
        Case {
            name: "an online margin threshold below 0",
            args: &["online", "@data/iris_setosa.csv", "--margin", "-1"],
            make: vec![],
            code: 2,
            stderr: &["--margin must be a finite number >= 0, got \"-1\""],
        },
        Case {
            name: "a cross-validated margin threshold below 0",
            args: &["cv", "@data/iris_setosa.csv", "--margin", "-1"],
            make: vec![],
            code: 2,
            stderr: &["--margin must be a finite number >= 0, got \"-1\""],
        },
        Case {
            name: "a validation fraction that holds out a whole class",
            args: &["train", "one.csv", "--validation-fraction", "0.5"],
            make: vec![Text(
                "one.csv",
                "1,5,5\n-1,1,0\n-1,0,1\n-1,1,1\n-1,0,0\n-1,0.5,0.5\n",
            )],
            code: 2,
            stderr: &[
                "--validation-fraction 0.5 holds out every row of class \"1\" (1 row), leaving \
                 it none to train on; hold out a smaller fraction, or add rows of that class",
            ],
        },
        Case {
            name: "a validation fraction that holds out a whole class of several",
            args: &[
                "train",
                "three.csv",
                "--multiclass",
                "ovr",
                "--validation-fraction",
                "0.5",
            ],
            make: vec![Text(
                "three.csv",
                "a,5,5\nb,1,0\nb,0,1\nc,1,1\nc,0,0\nb,0.5,0.5\n",
            )],
            code: 2,
            stderr: &["holds out every row of class \"a\" (1 row)"],
        },
        Case {
            name: "ragged CSV row",
            args: &["train", "r.csv"],
            make: vec![Text("r.csv", "1,2,3\n-1,4,5\n1,6\n")],
            code: 1,
            stderr: &["r.csv:3:4: expected 3 fields separated by `,` (as on line 1), found 2"],
        },
        Case {
            name: "extra field",
            args: &["train", "r.csv"],
            make: vec![Text("r.csv", "y,a,b\n1,2,3\n-1,4,5,6\n")],
            code: 1,
            stderr: &[
                "r.csv:3:8: expected 3 fields",
                "(as in the header on line 1), found 4",
            ],
        },
        Case {
            name: "non-numeric field",
            args: &["train", "n.csv"],
            make: vec![Text("n.csv", "1,2,3\n-1,4,abc\n")],
            code: 1,
            stderr: &["n.csv:2:6: expected a number in column 3, found \"abc\""],
        },
        Case {
            // Not a header: the other fields of line 1 are numbers.
            name: "one text field in line 1",
            args: &["train", "n.csv"],
            make: vec![Text("n.csv", "1,2,abc\n-1,4,5\n1,6,7\n")],
            code: 1,
            stderr: &[
                "n.csv:1:5: expected a number in column 3, found \"abc\" (line 1 was read as data because other fields on it are numbers; if it is a header, pass --header)",
            ],
        },
        Case {
            name: "one text field in line 1, online",
            args: &["online", "n.csv"],
            make: vec![Text("n.csv", "1,2,abc\n-1,4,5\n1,6,7\n")],
            code: 1,
            stderr: &["n.csv:1:5: expected a number in column 3, found \"abc\""],
        },
        Case {
            name: "a CSV file named .svm",
            args: &["train", "x.svm"],
            make: vec![Text("x.svm", "1,2\n-1,3\n")],
            code: 1,
            stderr: &[
                "x.svm:1:1: expected a numeric label, found \"1,2\" (is this a CSV file? pass --format csv)",
            ],
        },
        Case {
            name: "a CSV file read with --format libsvm",
            args: &["info", "@data/iris_setosa.csv", "--format", "libsvm"],
            make: vec![],
            code: 1,
            stderr: &[
                "@data/iris_setosa.csv:1:1: expected a numeric label, found \"1,5.1,3.5,1.4,0.2\" (is this a CSV file? pass --format csv)",
            ],
        },
        Case {
            name: "LIBSVM label that is not a number",
            args: &["train", "l.svm"],
            make: vec![Text("l.svm", "+1 1:2\nyes 1:3\n")],
            code: 1,
            stderr: &["l.svm:2:1: expected a numeric label, found \"yes\""],
        },
        Case {
            name: "LIBSVM label that is not a number, online",
            args: &["online", "l.svm"],
            make: vec![Text("l.svm", "+1 1:2\nyes 1:3\n")],
            code: 1,
            stderr: &["l.svm:2:1: expected a numeric label, found \"yes\""],
        },
        Case {
            name: "LIBSVM label that is not finite",
            args: &["train", "l.svm"],
            make: vec![Text("l.svm", "+1 1:2\nnan 1:3\n")],
            code: 1,
            stderr: &["l.svm:2:1: expected a numeric label (a finite number), found \"nan\""],
        },
        Case {
            // The .svm would not read back.
            name: "text labels written as LIBSVM",
            args: &["convert", "t.csv", "out.svm"],
            make: vec![Text("t.csv", "a,1\nb,2\n")],
            code: 1,
            stderr: &[
                "out.svm: label \"a\" is not a number and cannot be written as LIBSVM, whose labels are numbers; write CSV or .pbin instead",
            ],
        },
        Case {
            name: "--unlabeled with --label-column",
            args: &[
                "predict",
                "iris.json",
                "@data/iris_setosa.csv",
                "--unlabeled",
                "--label-column",
                "2",
            ],
            make: vec![IrisModel("iris.json")],
            code: 2,
            stderr: &[
                "the argument '--unlabeled' cannot be used with '--label-column <N|-N|last|NAME>'",
            ],
        },
        Case {
            name: "unlabeled LIBSVM line starting with text",
            args: &["predict", "iris.json", "u.svm", "--unlabeled"],
            make: vec![IrisModel("iris.json"), Text("u.svm", "1:5 2:3\nx 1:2\n")],
            code: 1,
            stderr: &["u.svm:2:1: expected a numeric label, found \"x\""],
        },
        Case {
            name: "unlabeled CSV with more columns than the model has features",
            args: &["predict", "iris.json", "u.csv", "--unlabeled"],
            make: vec![IrisModel("iris.json"), Text("u.csv", "1,2,3,4,5\n")],
            code: 1,
            stderr: &[
                "u.csv does not fit the model iris.json: the model has 4 features but the data \
                 has 5 feature columns",
                "if one is the label, leave out --unlabeled",
            ],
        },
        Case {
            name: "a label column name from the model that the data lacks",
            args: &["predict", "m.json", "@data/iris_setosa.csv"],
            make: vec![EditedModel(
                "m.json",
                "\"label_column\": 1,",
                "\"label_column\": \"species\",",
            )],
            code: 1,
            stderr: &[
                "@data/iris_setosa.csv:1:1: no column named \"species\": line 1 (\"1\", \"5.1\", \"3.5\", \"1.4\", \"0.2\") reads as data, not a header, so the file's columns have no names (the label column is the one the model m.json was trained with); pass --label-column N, or --unlabeled if the file has no label column",
            ],
        },
        Case {
            name: "a label column number from the model that the data lacks",
            args: &["eval", "m.json", "@data/iris_setosa.csv"],
            make: vec![EditedModel(
                "m.json",
                "\"label_column\": 1,",
                "\"label_column\": 9,",
            )],
            code: 1,
            stderr: &[
                "@data/iris_setosa.csv:1:1: label column 9 is out of range: the file has 5 columns (numbered from 1, or from -1 for the last) (the label column is the one the model m.json was trained with); pass --label-column N, or --unlabeled if the file has no label column",
            ],
        },
        Case {
            name: "a model whose label column is 0",
            args: &["predict", "m.json", "@data/iris_setosa.csv"],
            make: vec![EditedModel(
                "m.json",
                "\"label_column\": 1,",
                "\"label_column\": 0,",
            )],
            code: 1,
            stderr: &[
                "m.json: is corrupt: \"training.data_layout.label_column\" is 0, but columns are numbered from 1",
            ],
        },
        Case {
            name: "a label column name from the model, read without a header",
            args: &["eval", "m.json", "@data/iris_setosa.csv", "--no-header"],
            make: vec![EditedModel(
                "m.json",
                "\"label_column\": 1,",
                "\"label_column\": \"species\",",
            )],
            code: 1,
            stderr: &[
                "@data/iris_setosa.csv:1:1: the label column is named \"species\" but the file is read without a header line (the label column is the one the model m.json was trained with); pass --label-column N, or --unlabeled if the file has no label column",
            ],
        },
        Case {
            name: "a model whose label column is an empty name",
            args: &["eval", "m.json", "@data/iris_setosa.csv"],
            make: vec![EditedModel(
                "m.json",
                "\"label_column\": 1,",
                "\"label_column\": \"\",",
            )],
            code: 1,
            stderr: &["m.json: is corrupt: \"training.data_layout.label_column\" is an empty name"],
        },
        Case {
            name: "a one-vs-rest model with a class twice",
            args: &["predict", "ovr.json", "@data/iris_setosa.csv"],
            make: vec![Text("ovr.json", OVR_TWICE)],
            code: 1,
            stderr: &[
                "ovr.json: is corrupt: classes 1 and 3 (\"1\" and \"1.0\") are the same label; a model's classes must differ",
            ],
        },
        Case {
            name: "eval with many labels the model does not know",
            args: &["eval", "iris.json", "l.csv"],
            make: vec![
                IrisModel("iris.json"),
                Bytes(
                    "l.csv",
                    (0..30)
                        .map(|k| format!("x{k},1,2,3,4\n"))
                        .collect::<String>()
                        .into_bytes(),
                ),
            ],
            code: 1,
            stderr: &[
                "l.csv:1: label \"x0\" (1 row) is not a class of the model iris.json, which knows \"1\" (+1) and \"-1\" (-1); other unknown labels: \"x1\", ",
                "\"x20\", and 9 more",
            ],
        },
        Case {
            name: "a model whose two labels are the same",
            args: &["predict", "m.json", "@data/iris_setosa.csv"],
            make: vec![EditedModel(
                "m.json",
                "\"negative\": \"-1\"",
                "\"negative\": \"1.0\"",
            )],
            code: 1,
            stderr: &[
                "m.json: is corrupt: its +1 label \"1\" and its -1 label \"1.0\" are the same label; a model's two classes must differ",
            ],
        },
        Case {
            name: "150 label values",
            args: &["train", "m.csv"],
            make: vec![Bytes(
                "m.csv",
                (0..150)
                    .map(|k| format!("x{k},{k}\n"))
                    .collect::<String>()
                    .into_bytes(),
            )],
            code: 1,
            stderr: &[
                "m.csv: more than two label values (\"x0\" (1 row), \"x1\" (1 row), ",
                "\"x19\" (1 row), and 130 more); choose the +1 class with --positive",
            ],
        },
        Case {
            name: "NaN",
            args: &["train", "nan.csv"],
            make: vec![Text("nan.csv", "1,2\n-1,NaN\n")],
            code: 1,
            stderr: &["nan.csv:2:4: expected a finite number in column 2, found \"NaN\""],
        },
        Case {
            name: "infinity",
            args: &["train", "inf.csv"],
            make: vec![Text("inf.csv", "1,2,3\n-1,4,5\n1,7,-inf\n")],
            code: 1,
            stderr: &["inf.csv:3:5: expected a finite number in column 3, found \"-inf\""],
        },
        Case {
            name: "NaN in LIBSVM",
            args: &["train", "nan.svm"],
            make: vec![Text("nan.svm", "+1 1:2\n-1 1:1 3:nan\n")],
            code: 1,
            stderr: &["nan.svm:2:10: expected a finite number for feature 3, found \"nan\""],
        },
        Case {
            name: "value too large for f32",
            args: &["train", "big.csv"],
            make: vec![Text("big.csv", "1,2\n-1,1e39\n")],
            code: 1,
            stderr: &["big.csv:2:4: value \"1e39\" in column 2 is too large for f32"],
        },
        Case {
            name: "empty file",
            args: &["train", "e.csv"],
            make: vec![Text("e.csv", "")],
            code: 1,
            stderr: &["e.csv: no data rows: the file is empty"],
        },
        Case {
            name: "empty file, info",
            args: &["info", "e.svm"],
            make: vec![Text("e.svm", "# nothing\n\n")],
            code: 1,
            stderr: &["e.svm: no data rows"],
        },
        Case {
            name: "single class",
            args: &["train", "s.csv"],
            make: vec![Text("s.csv", "5,1\n5,2\n5.0,3\n")],
            code: 1,
            stderr: &[
                "s.csv: only one label value (\"5\" (3 rows)); a perceptron needs two classes",
            ],
        },
        Case {
            name: "unknown label for --positive",
            args: &["train", "t.csv", "--positive", "z"],
            make: vec![Text("t.csv", "a,1\nb,2\n")],
            code: 1,
            stderr: &[
                "t.csv: --positive \"z\" is not a label in this file; labels found: \"a\" (1 row), \"b\" (1 row)",
            ],
        },
        Case {
            name: "unknown label for info --positive",
            args: &["info", "t.csv", "--positive", "z"],
            make: vec![Text("t.csv", "a,1\nb,2\n")],
            code: 1,
            stderr: &["t.csv: --positive \"z\" is not a label in this file"],
        },
        Case {
            name: "more than two labels without --positive",
            args: &["train", "t.csv"],
            make: vec![Text("t.csv", "a,1\nb,2\nc,3\n")],
            code: 1,
            stderr: &[
                "t.csv: more than two label values",
                "choose the +1 class with --positive",
            ],
        },
        Case {
            name: "LIBSVM index 0 read one-based",
            args: &["train", "--one-based", "z.svm"],
            make: vec![Text("z.svm", "+1 1:2\n-1 0:2 1:3\n")],
            code: 1,
            stderr: &[
                "z.svm:2:4: feature index 0 in \"0:2\": indices are read one-based, from 1 \
                 (the LIBSVM standard) (if this file counts features from 0, as \
                 scikit-learn's dump_svmlight_file writes by default, pass --zero-based)",
            ],
        },
        Case {
            name: "LIBSVM non-increasing index",
            args: &["train", "d.svm"],
            make: vec![Text("d.svm", "+1 3:1 2:1\n-1 1:1\n")],
            code: 1,
            stderr: &["d.svm:1:8: feature index 2 follows index 3; indices must strictly increase"],
        },
        Case {
            name: "LIBSVM duplicate index",
            args: &["train", "d.svm"],
            make: vec![Text("d.svm", "+1 1:1\n-1 2:1 2:5\n")],
            code: 1,
            stderr: &["d.svm:2:8: duplicate feature index 2"],
        },
        Case {
            name: "LIBSVM index beyond 2^31",
            args: &["train", "b.svm"],
            make: vec![Text("b.svm", "+1 1:1\n-1 2147483648:1\n")],
            code: 1,
            stderr: &[
                "b.svm:2:4: feature index 2147483648 in \"2147483648:1\" exceeds the limit of 2147483647",
            ],
        },
        Case {
            // 100 classes x 2^31 weights: more memory than any machine has,
            // refused at once instead of swapping until killed.
            name: "LIBSVM index needing more memory than available",
            args: &["train", "w.svm", "--multiclass", "ovr", "--backend", "cpu"],
            make: vec![Bytes(
                "w.svm",
                (0..100)
                    .map(|c| format!("{c} 2147483647:1\n"))
                    .collect::<String>()
                    .into_bytes(),
            )],
            code: 1,
            stderr: &[
                "w.svm: 2147483648 weights for each of 100 classes need about 4800.0 GiB of memory",
                "is available",
                "renumber the features densely",
            ],
        },
        Case {
            // Made to look huge: the limit stands for a small machine, and
            // keeps a machine with 16 GiB free from writing the copy.
            name: "a dense copy beyond memory",
            args: &["convert", "big.svm", "o.pbin", "--layout", "dense"],
            make: vec![
                Text("big.svm", "+1 1:1\n-1 2147483647:1\n"),
                Env("PERCEPTRON_MEMORY_LIMIT", "1000000"),
            ],
            code: 1,
            stderr: &[
                "big.svm: the data needs more memory than is available: a dense copy of 2 rows x 2147483647 features (f32) takes 16.0 GiB, but only 976.6 KiB is available (PERCEPTRON_MEMORY_LIMIT); keep the CSR layout (leave out --layout dense)",
            ],
        },
        Case {
            name: "CSV output whose lines exceed the line limit",
            args: &["convert", "big.svm", "big.csv"],
            make: vec![Text("big.svm", "+1 1:1\n-1 2147483647:1\n")],
            code: 1,
            stderr: &[
                "big.csv: CSV lines of this data would be at least 4294967296 bytes long (2147483647 features, each written), more than the 67108864-byte line limit of this tool's readers; write binary (.pbin) instead",
            ],
        },
        Case {
            name: "gen rows beyond memory",
            args: &[
                "gen",
                "--rows",
                "2",
                "--features",
                "2000000000",
                "-o",
                "g.pbin",
            ],
            make: vec![Env("PERCEPTRON_MEMORY_LIMIT", "1000000000")],
            code: 1,
            stderr: &[
                "g.pbin: generating rows of 2000000000 features (a block of rows and the generator's scratch space) takes 37.3 GiB, but only 953.7 MiB is available (PERCEPTRON_MEMORY_LIMIT); use fewer --features or --density sparse",
            ],
        },
        Case {
            name: "gen CSV lines over the line limit",
            args: &[
                "gen",
                "--rows",
                "2",
                "--features",
                "40000000",
                "-o",
                "g.csv",
            ],
            make: vec![],
            code: 1,
            stderr: &[
                "g.csv: CSV lines of this data would be at least 80000002 bytes long (40000000 features, each written), more than the 67108864-byte line limit",
            ],
        },
        Case {
            name: "gen LIBSVM lines over the line limit",
            args: &[
                "gen",
                "--rows",
                "2",
                "--features",
                "40000000",
                "--density",
                "sparse",
                "--nnz",
                "20000000",
                "-o",
                "g.svm",
            ],
            make: vec![],
            code: 1,
            stderr: &[
                "g.svm: LIBSVM lines of this data would be at least 80000002 bytes long (20000000 values per row), more than the 67108864-byte line limit",
            ],
        },
        Case {
            name: "compressed CSV expanding beyond memory",
            args: &["train", "w.csv.gz"],
            make: vec![
                Bytes("w.csv.gz", wide_csv_gz(400)),
                Env("PERCEPTRON_MEMORY_LIMIT", "100000"),
            ],
            code: 1,
            stderr: &[
                "w.csv.gz: the data needs more memory than is available: storing the feature values takes 101.4 KiB, but only 97.7 KiB is available (PERCEPTRON_MEMORY_LIMIT), after line 231; use a machine with more memory or part of the file",
            ],
        },
        Case {
            name: "LIBSVM beyond memory",
            args: &["info", "w.svm"],
            make: vec![
                Bytes(
                    "w.svm",
                    (0..400)
                        .map(|i| {
                            let x: String = (1..=100).map(|k| format!(" {k}:0.5")).collect();
                            format!("{}{x}\n", i % 2)
                        })
                        .collect::<String>()
                        .into_bytes(),
                ),
                Env("PERCEPTRON_MEMORY_LIMIT", "100000"),
            ],
            code: 1,
            stderr: &[
                "w.svm: the data needs more memory than is available: storing the feature values takes 102.5 KiB, but only 97.7 KiB is available (PERCEPTRON_MEMORY_LIMIT), after line 234",
            ],
        },
        Case {
            // Read into memory: a mapped file takes none (see the next case).
            name: ".pbin beyond memory",
            args: &["info", "z.pbin"],
            make: vec![
                Bytes("z.pbin", pbin(1, 400, 100)),
                Env("PERCEPTRON_MEMORY_LIMIT", "100000"),
                Env("PERCEPTRON_NO_MMAP", "1"),
            ],
            code: 1,
            stderr: &[
                "z.pbin: the data needs more memory than is available: its values section takes 156.2 KiB, but only 97.7 KiB is available (PERCEPTRON_MEMORY_LIMIT)",
            ],
        },
        Case {
            name: "a memory limit that is not a number of bytes",
            args: &["info", "@data/iris_setosa.csv"],
            make: vec![Env("PERCEPTRON_MEMORY_LIMIT", "1G")],
            code: 2,
            stderr: &["PERCEPTRON_MEMORY_LIMIT must be a whole number of bytes, not \"1G\""],
        },
        Case {
            name: "a line over the 64 MiB limit",
            args: &["train", "long.csv"],
            make: vec![LongLine("long.csv")],
            code: 1,
            stderr: &[
                "long.csv:2:67108865: line is longer than the limit of 67108864 bytes; is this a text data file?",
            ],
        },
        Case {
            name: "a model holding values of the wrong precision",
            args: &["predict", "m.json", "@data/iris_setosa.csv"],
            make: vec![EditedModel(
                "m.json",
                "\"precision\": \"f64\"",
                "\"precision\": \"f32\"",
            )],
            code: 1,
            stderr: &[
                "m.json: has the wrong precision: weight 1 = 1.299999999999999 is not an f32 value, though the file says \"precision\": \"f32\"",
            ],
        },
        Case {
            name: "a .pbin file that is not one",
            args: &["info", "c.pbin"],
            make: vec![Bytes("c.pbin", b"PK\x03\x04 a zip file, not data".to_vec())],
            code: 1,
            stderr: &[
                "c.pbin: not a perceptron binary (.pbin) file: it starts with bytes [50 4b 03 04 20 61 20 7a], not the magic bytes [89 50 42 4e 0d 0a 1a 0a]",
            ],
        },
        Case {
            name: "a .pbin file from a newer version",
            args: &["train", "n.pbin"],
            make: vec![Bytes("n.pbin", pbin(2, 4, 2))],
            code: 1,
            stderr: &[
                "n.pbin: format version 2 is newer than this version of perceptron can read (version 1 and older); upgrade perceptron to read it",
            ],
        },
        Case {
            name: "a .pbin file shorter than its header says",
            args: &["train", "t.pbin"],
            make: vec![Bytes("t.pbin", pbin(1, 4, 2)[..300].to_vec())],
            code: 1,
            stderr: &[
                "t.pbin: truncated: the label-table section ends at byte 332 but the file has only 300 bytes",
            ],
        },
        Case {
            name: "a .pbin header claiming too many columns",
            args: &["train", "w.pbin"],
            make: vec![Bytes("w.pbin", {
                let mut b = pbin(1, 4, 2);
                b[32..40].copy_from_slice(&(1u64 << 31).to_le_bytes());
                b
            })],
            code: 1,
            stderr: &["w.pbin: 2147483648 feature columns is more than the supported 2147483647"],
        },
        Case {
            name: "a checkpoint that is not JSON",
            args: &["train", "@data/iris_setosa.csv", "--resume", "ck.json"],
            make: vec![Text("ck.json", "{\"format\": \"perceptron-checkpoint\", ")],
            code: 1,
            stderr: &["ck.json: is not a checkpoint (not valid JSON: EOF while parsing"],
        },
        Case {
            name: "a checkpoint of another format",
            args: &["train", "@data/iris_setosa.csv", "--resume", "ck.json"],
            make: vec![Text("ck.json", "{}")],
            code: 1,
            stderr: &[
                "ck.json: is not a perceptron checkpoint (no \"format\": \"perceptron-checkpoint\")",
            ],
        },
        Case {
            name: "a checkpoint from a newer version",
            args: &["train", "@data/iris_setosa.csv", "--resume", "ck.json"],
            make: vec![EditedCheckpoint(
                "ck.json",
                &[("\"format_version\":1", "\"format_version\":2")],
            )],
            code: 1,
            stderr: &[
                "ck.json: was written by a newer perceptron (checkpoint format 2; this build reads 1)",
            ],
        },
        Case {
            // f64 weights in a checkpoint that says f32, for f32 data.
            name: "a checkpoint holding values of the wrong precision",
            args: &["train", "@data/iris_setosa.csv", "--resume", "ck.json"],
            make: vec![EditedCheckpoint(
                "ck.json",
                &[
                    ("\"precision\":\"f64\"", "\"precision\":\"f32\""),
                    ("066bb9042cac580f", "a588694bebd4c865"),
                ],
            )],
            code: 1,
            stderr: &[
                "ck.json: has the wrong precision: a weight = -1.9000000000000004 is not an f32 value, though the file says \"precision\": \"f32\"",
            ],
        },
        Case {
            name: "a checkpoint whose counters disagree",
            args: &["train", "@data/iris_setosa.csv", "--resume", "ck.json"],
            make: vec![EditedCheckpoint(
                "ck.json",
                &[("\"epoch\":1,", "\"epoch\":3,")],
            )],
            code: 1,
            stderr: &["ck.json: is corrupt: its epoch, row and counters do not agree"],
        },
        Case {
            name: "a checkpoint with a weight missing",
            args: &["train", "@data/iris_setosa.csv", "--resume", "ck.json"],
            make: vec![EditedCheckpoint("ck.json", &[(",0.0]", "]")])],
            code: 1,
            stderr: &["ck.json: is corrupt: 4 weights for 5 needed"],
        },
        Case {
            name: "a checkpoint for other data",
            args: &["train", "@data/iris_petals.csv", "--resume", "ck.json"],
            make: vec![IrisCheckpoint("ck.json")],
            code: 2,
            stderr: &[
                "ck.json cannot be resumed by this run: the data differ: the checkpoint was made on 150 rows x 4 features with fingerprint 066bb9042cac580f, this data has 150 rows x 2 features",
                "Resume with the same data and options as the interrupted run.",
            ],
        },
        Case {
            name: "a checkpoint for another variant",
            args: &[
                "train",
                "@data/iris_setosa.csv",
                "--resume",
                "ck.json",
                "--pocket",
            ],
            make: vec![IrisCheckpoint("ck.json")],
            code: 2,
            stderr: &[
                "ck.json cannot be resumed by this run: the variant was classic, now pocket.",
            ],
        },
        Case {
            name: "a checkpoint for a run from zero, resumed from --init",
            args: &[
                "train",
                "@data/iris_setosa.csv",
                "--resume",
                "ck.json",
                "--init",
                "m.json",
            ],
            make: vec![IrisCheckpoint("ck.json"), IrisModel("m.json")],
            code: 2,
            stderr: &[
                "ck.json cannot be resumed by this run: the run started from zero, now from --init.",
            ],
        },
        Case {
            name: "LIBSVM index far beyond u64",
            args: &["train", "b.svm"],
            make: vec![Text("b.svm", "+1 1:1\n-1 99999999999999999999999:1\n")],
            code: 1,
            stderr: &[
                "b.svm:2:4: feature index 99999999999999999999999",
                "exceeds the limit",
            ],
        },
        Case {
            name: "truncated .gz",
            args: &["train", "t.csv.gz"],
            make: vec![Bytes("t.csv.gz", truncated_gzip())],
            code: 1,
            stderr: &[
                "t.csv.gz: cannot read: the gzip data is truncated or corrupt",
                ", after line ",
            ],
        },
        Case {
            name: "not gzip at all",
            args: &["info", "t.svm.gz"],
            make: vec![Text("t.svm.gz", "+1 1:1\n-1 1:2\n")],
            code: 1,
            stderr: &["t.svm.gz: cannot read: the gzip data"],
        },
        Case {
            name: "invalid UTF-8",
            args: &["train", "u.csv"],
            make: vec![Bytes("u.csv", b"1,2\n-1,\xff\n".to_vec())],
            code: 1,
            stderr: &["u.csv:2:4: invalid UTF-8 (byte 0xff)"],
        },
        Case {
            name: "missing file",
            args: &["train", "missing.csv"],
            make: vec![],
            code: 1,
            stderr: &["missing.csv: cannot open data file: "],
        },
        Case {
            name: "missing file, eval",
            args: &["eval", "iris.json", "missing.svm"],
            make: vec![IrisModel("iris.json")],
            code: 1,
            stderr: &["missing.svm: cannot open data file: "],
        },
        Case {
            name: "a directory as data",
            args: &["train", "folder.csv"],
            make: vec![Dir("folder.csv")],
            code: 1,
            stderr: &["folder.csv: cannot open data file: it is a directory, not a file"],
        },
        Case {
            name: "a directory as data, predict",
            args: &["predict", "iris.json", "folder"],
            make: vec![IrisModel("iris.json"), Dir("folder")],
            code: 1,
            stderr: &["folder: cannot open data file: it is a directory, not a file"],
        },
        Case {
            name: "corrupt model",
            args: &["predict", "m.json", "@data/iris_setosa.csv"],
            make: vec![Text(
                "m.json",
                "{\"format\": \"perceptron-model\", \"weights\": [1,",
            )],
            code: 1,
            stderr: &[
                "m.json: is not a model file (not valid JSON: line 1 column 45: EOF while parsing",
            ],
        },
        Case {
            name: "corrupt model field",
            args: &["eval", "m.json", "@data/iris_setosa.csv"],
            make: vec![EditedModel(
                "m.json",
                "\"has_bias\": true",
                "\"has_bias\": \"yes\"",
            )],
            code: 1,
            stderr: &[
                "m.json: is corrupt: line ",
                "invalid type: string \"yes\", expected a boolean",
            ],
        },
        Case {
            name: "not a model file",
            args: &["predict", "m.json", "@data/iris_setosa.csv"],
            make: vec![Text("m.json", "[1, 2, 3]\n")],
            code: 1,
            stderr: &["m.json: is not a perceptron model file"],
        },
        Case {
            name: "a data file as the model",
            args: &["predict", "@data/iris_setosa.csv", "@data/iris_setosa.csv"],
            make: vec![],
            code: 1,
            stderr: &["@data/iris_setosa.csv: is not a model file (not valid JSON"],
        },
        Case {
            name: "model from a newer format_version",
            args: &["predict", "new.json", "@data/iris_setosa.csv"],
            make: vec![EditedModel(
                "new.json",
                "\"format_version\": 1,",
                "\"format_version\": 2,",
            )],
            code: 1,
            stderr: &[
                "new.json: was written by a newer perceptron (model format version 2); this build reads versions up to 1: upgrade perceptron",
            ],
        },
        Case {
            name: "model with fewer features than the data, predict",
            args: &["predict", "iris.json", "@data/breast_cancer.csv"],
            make: vec![IrisModel("iris.json")],
            code: 1,
            stderr: &[
                "@data/breast_cancer.csv does not fit the model iris.json: the model has 4 \
                 features but the data has 30 feature columns; CSV data must have the model's \
                 columns",
            ],
        },
        Case {
            name: "eval with a label the model does not know",
            args: &["eval", "iris.json", "l.csv"],
            make: vec![
                IrisModel("iris.json"),
                Text("l.csv", "1,5,3,1,0.2\n# c\n7,5,3,1,0.2\n-1,1,1,1,1\n"),
            ],
            code: 1,
            stderr: &[
                "l.csv:3: label \"7\" (1 row) is not a class of the model iris.json, which knows \"1\" (+1) and \"-1\" (-1)",
            ],
        },
        Case {
            name: "output path is a directory, train",
            args: &["train", "@data/iris_setosa.csv", "-o", "out"],
            make: vec![Dir("out")],
            code: 1,
            stderr: &["out: cannot write output: it is a directory"],
        },
        Case {
            name: "output path is a directory, predict",
            args: &["predict", "iris.json", "@data/iris_setosa.csv", "-o", "out"],
            make: vec![IrisModel("iris.json"), Dir("out")],
            code: 1,
            stderr: &["out: cannot write output: it is a directory"],
        },
        Case {
            name: "output folder is a file",
            args: &["train", "@data/iris_setosa.csv", "-o", "nowhere/m.json"],
            make: vec![Text("nowhere", "")],
            code: 1,
            stderr: &["nowhere/m.json: cannot write output: nowhere is not a directory"],
        },
        Case {
            name: "label column out of range",
            args: &["train", "t.csv", "--label-column", "9"],
            make: vec![Text("t.csv", "1,2\n-1,3\n")],
            code: 1,
            stderr: &["t.csv:1:1: label column 9 is out of range: the file has 2 columns"],
        },
        Case {
            name: "cannot tell the format",
            args: &["info", "t.txt"],
            make: vec![Text("t.txt", "1 2 3\n")],
            code: 1,
            stderr: &[
                "t.txt: cannot tell the format",
                "use --format csv or --format libsvm",
            ],
        },
        Case {
            name: "zero epochs",
            args: &["train", "@data/iris_setosa.csv", "--max-epochs", "0"],
            make: vec![],
            code: 2,
            stderr: &["--max-epochs must be at least 1"],
        },
        Case {
            name: "unknown option",
            args: &["eval", "--frobnicate"],
            make: vec![],
            code: 2,
            stderr: &["unexpected argument '--frobnicate'"],
        },
        Case {
            name: "missing argument",
            args: &["predict", "m.json"],
            make: vec![],
            code: 2,
            stderr: &["<DATA>"],
        },
    ]
}

/// The checkpoint after one f64 epoch on iris_setosa, made once by the binary.
fn iris_checkpoint_text() -> String {
    static TEXT: std::sync::OnceLock<String> = std::sync::OnceLock::new();
    TEXT.get_or_init(|| {
        let dir = tempfile::tempdir().unwrap();
        cmd(dir.path())
            .args(["train", &data_str("iris_setosa.csv")])
            .args(["--precision", "f64", "--max-epochs", "1"])
            .args(["--checkpoint", "ck.json", "-o", "m.json"])
            .assert()
            .code(0);
        std::fs::read_to_string(dir.path().join("ck.json")).unwrap()
    })
    .clone()
}

/// A dense f32 `.pbin` file of `rows` x `cols` zeros with labels -1 and +1
/// alternating, its header's format version set to `version`.
fn pbin(version: u32, rows: u64, cols: u64) -> Vec<u8> {
    let align = |n: u64| n.div_ceil(64) * 64;
    let ids = 192;
    let values = align(ids + rows * 4);
    let table = align(values + rows * cols * 4);
    let labels: Vec<u8> = [&b"-1"[..], b"+1"]
        .iter()
        .flat_map(|t| [&(t.len() as u32).to_le_bytes()[..], t].concat())
        .collect();
    let mut b = b"\x89PBN\r\n\x1a\n".to_vec();
    for v in [version, 192, 0, 4] {
        b.extend(v.to_le_bytes());
    }
    let (vo, vl) = if rows * cols > 0 {
        (values, rows * cols * 4)
    } else {
        (0, 0)
    };
    for v in [
        rows,
        cols,
        rows * cols,
        2,
        ids,
        rows * 4,
        vo,
        vl,
        0,
        0,
        0,
        0,
        table,
    ] {
        b.extend(v.to_le_bytes());
    }
    b.extend((labels.len() as u64).to_le_bytes());
    b.resize(ids as usize, 0);
    for i in 0..rows {
        b.extend(((i % 2) as u32).to_le_bytes());
    }
    b.resize(table as usize, 0);
    b.extend(labels);
    b
}

/// A CSV file of `rows` rows of 100 values, gzipped: small on disk, 400
/// bytes a row in memory (f32).
fn wide_csv_gz(rows: usize) -> Vec<u8> {
    let line: String = std::iter::repeat_n(",0.5", 100).collect();
    let text: String = (0..rows).map(|i| format!("{}{line}\n", i % 2)).collect();
    gzip(text.as_bytes())
}

#[test]
fn bad_input_fails_with_the_right_code_and_message() {
    let data_dir = data_file("");
    let data_dir = data_dir.display().to_string();
    let expand = |s: &str| s.replace("@data/", &data_dir);
    let mut failures = Vec::new();
    let all = cases();
    for case in &all {
        let dir = tempfile::tempdir().unwrap();
        let mut command = cmd(dir.path());
        for m in &case.make {
            match m {
                Make::Env(name, value) => {
                    command.env(name, value);
                }
                Make::LongLine(name) => {
                    let mut f = std::fs::File::create(dir.path().join(name)).unwrap();
                    f.write_all(b"1,2\n-1,").unwrap();
                    f.write_all(&vec![b'3'; 64 << 20]).unwrap();
                    f.write_all(b"\n").unwrap();
                }
                Make::IrisCheckpoint(name) => {
                    std::fs::write(dir.path().join(name), iris_checkpoint_text()).unwrap()
                }
                Make::EditedCheckpoint(name, edits) => {
                    let mut text = iris_checkpoint_text();
                    for (from, to) in edits.iter() {
                        assert!(
                            text.contains(from),
                            "{}: {from} not in the checkpoint",
                            case.name
                        );
                        text = text.replace(from, to);
                    }
                    std::fs::write(dir.path().join(name), text).unwrap()
                }
                Make::Text(name, text) => std::fs::write(dir.path().join(name), text).unwrap(),
                Make::Bytes(name, bytes) => std::fs::write(dir.path().join(name), bytes).unwrap(),
                Make::Dir(name) => std::fs::create_dir(dir.path().join(name)).unwrap(),
                Make::IrisModel(name) => {
                    std::fs::write(dir.path().join(name), iris_model_text()).unwrap()
                }
                Make::EditedModel(name, from, to) => {
                    let text = iris_model_text();
                    assert!(
                        text.contains(from),
                        "{}: {from} not in the model",
                        case.name
                    );
                    std::fs::write(dir.path().join(name), text.replace(from, to)).unwrap()
                }
            }
        }
        let args: Vec<String> = case.args.iter().map(|a| expand(a)).collect();
        let out = command.args(&args).output().unwrap();
        let stderr = String::from_utf8_lossy(&out.stderr);
        let code = out.status.code();
        let missing: Vec<String> = case
            .stderr
            .iter()
            .map(|f| expand(f))
            .filter(|f| !stderr.contains(f.as_str()))
            .collect();
        if code != Some(case.code) || !missing.is_empty() {
            failures.push(format!(
                "{}: exit {code:?} (want {}), missing {missing:?}\nstderr: {stderr}",
                case.name, case.code
            ));
        }
        if case.code == 1 {
            // Errors are one line, prefixed, and nothing half-done on stdout.
            assert!(
                stderr.starts_with("perceptron: error: "),
                "{}: {stderr}",
                case.name
            );
            assert_eq!(
                stderr.trim_end().lines().count(),
                1,
                "{}: {stderr}",
                case.name
            );
            assert!(out.stdout.is_empty(), "{}: stdout not empty", case.name);
        }
        // Training never leaves a model behind when it fails.
        assert!(
            case.args[0] != "train" || !dir.path().join("model.json").exists(),
            "{}: model written",
            case.name
        );
    }
    assert!(
        failures.is_empty(),
        "{} of {} cases failed:\n{}",
        failures.len(),
        all.len(),
        failures.join("\n")
    );
}

#[test]
fn errors_are_coloured_on_a_terminal_as_clap_colours_its_own() {
    // `script` gives the command a terminal; without it there is nothing to test.
    if std::process::Command::new("script")
        .arg("--version")
        .output()
        .is_err()
    {
        eprintln!("SKIPPED: no `script` to give the command a terminal");
        return;
    }
    let bin = assert_cmd::cargo::cargo_bin!("perceptron");
    let on_terminal = |env: &str| {
        let out = std::process::Command::new("script")
            .args([
                "-qec",
                &format!("{env} {} train /no/such/file", bin.display()),
                "/dev/null",
            ])
            .env_remove("NO_COLOR")
            .env("TERM", "xterm")
            .output()
            .unwrap();
        String::from_utf8_lossy(&out.stdout).into_owned()
    };
    assert!(
        on_terminal("").contains("\x1b[1;31merror:\x1b[0m"),
        "{}",
        on_terminal("")
    );
    assert!(on_terminal("NO_COLOR=1").contains("perceptron: error: /no/such/file"));
    // Not a terminal: plain text.
    let out = std::process::Command::new(bin)
        .args(["train", "/no/such/file"])
        .output()
        .unwrap();
    assert!(String::from_utf8_lossy(&out.stderr).starts_with("perceptron: error: "));
}

/// Labels reach error messages escaped, as they reach every report: a
/// label holding a tab, a carriage return or a terminal escape sequence
/// used to be printed raw in the list of labels found.
#[test]
fn labels_in_error_messages_are_escaped() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    std::fs::write(
        d.join("lab.csv"),
        "\x1b[31mRED\x1b[0m,1\nta\tb\r,2\n\x1b[31mRED\x1b[0m,3\n",
    )
    .unwrap();
    std::fs::write(d.join("one.csv"), "\x1b[2J,1\n\x1b[2J,2\n").unwrap();
    for (args, says) in [
        (
            &["train", "lab.csv", "--positive", "no\x1bpe"][..],
            "labels found",
        ),
        (&["train", "one.csv"][..], "only one label value"),
    ] {
        let out = cmd(d).args(args).output().unwrap();
        assert_eq!(out.status.code(), Some(1), "{out:?}");
        let err = String::from_utf8(out.stderr).unwrap();
        assert!(err.contains(says), "{err}");
        assert!(!err.contains('\x1b') && !err.contains('\r'), "{err:?}");
        assert!(err.contains("\\u{1b}"), "{err}");
    }
}
