//! What a training run reads besides its data and where it writes: the
//! `--init` model (read with its content's fingerprint, which checkpoints
//! record), and the model, the checkpoint and the pictures, checked before
//! any work never to overwrite a data file or one another.

use std::path::{Path, PathBuf};

use crate::error::Result;
use crate::model::AnyModel;

/// A model file to start from (`--init`): the fingerprint of its content,
/// which a checkpoint records, and the model.
pub fn read_init_model(path: &Path) -> Result<(String, AnyModel)> {
    Ok((fingerprint(path)?, crate::model::load(path)?))
}

/// Identifies a model file's content (FNV-1a, 64 bits, in hex).
fn fingerprint(path: &Path) -> Result<String> {
    let bytes = crate::model::read_capped(path, crate::model::FileKind::Model)?;
    let mut h: u64 = 0xcbf2_9ce4_8422_2325;
    for b in bytes {
        h = (h ^ b as u64).wrapping_mul(0x100_0000_01b3);
    }
    Ok(format!("{h:016x}"))
}

/// Neither the model nor the checkpoint may overwrite a data file (`data`,
/// patterns expanded), and no two outputs (the `model`, the `checkpoint`,
/// the pictures written into `pictures`) may be one file.
pub fn check_outputs(
    data: &[PathBuf],
    model: &Path,
    checkpoint: Option<&Path>,
    pictures: Option<&Path>,
) -> Result<()> {
    let paths = crate::data::shards::expand(data)?;
    let data: Vec<&Path> = paths.iter().map(PathBuf::as_path).collect();
    crate::output::check_not_an_input(model, &data)?;
    if let Some(c) = checkpoint {
        let mut inputs = data.clone();
        inputs.push(model);
        crate::output::check_not_an_input(c, &inputs)?;
    }
    let mut outputs = vec![("the model", model.to_path_buf())];
    if let Some(c) = checkpoint {
        outputs.push(("the checkpoint", c.to_path_buf()));
    }
    #[cfg(feature = "plot")]
    if let Some(dir) = pictures {
        for name in crate::plot::training::TRAINING_PICTURES {
            outputs.push(("the picture", dir.join(name)));
        }
    }
    #[cfg(not(feature = "plot"))]
    let _ = pictures;
    let named: Vec<(&str, &Path)> = outputs.iter().map(|(w, p)| (*w, p.as_path())).collect();
    crate::output::check_distinct_outputs(&named)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_fingerprint_is_fnv1a_of_the_bytes() {
        let dir = tempfile::tempdir().unwrap();
        let (empty, a) = (dir.path().join("empty.json"), dir.path().join("a.json"));
        std::fs::write(&empty, b"").unwrap();
        std::fs::write(&a, b"a").unwrap();
        // FNV-1a's published values: its offset basis, and "a".
        assert_eq!(fingerprint(&empty).unwrap(), "cbf29ce484222325");
        assert_eq!(fingerprint(&a).unwrap(), "af63dc4c8601ec8c");
    }

    #[test]
    fn outputs_may_be_neither_data_nor_one_another() {
        let data = [PathBuf::from("data/iris_setosa.csv")];
        let (model, ck) = (Path::new("m.json"), Path::new("ck.json"));
        check_outputs(&data, model, Some(ck), None).unwrap();
        assert!(check_outputs(&data, &data[0], None, None).is_err());
        assert!(check_outputs(&data, model, Some(&data[0]), None).is_err());
        assert!(check_outputs(&data, model, Some(model), None).is_err());
    }
}
