//! What marks LIBSVM text: its extensions, and a line of a label and
//! `index:value` tokens.

/// File extensions (`.gz` stripped, lowercase) that name LIBSVM files.
pub(crate) const EXTENSIONS: [&str; 3] = ["svm", "libsvm", "svmlight"];

/// A label followed by whitespace-separated `index:value` tokens (at least
/// one), or (unlabeled data) such tokens alone.
pub(crate) fn looks_like_libsvm(line: &str, cut: bool) -> bool {
    let data = line.split_once('#').map_or(line, |(d, _)| d);
    let mut tokens: Vec<&str> = data.split_ascii_whitespace().collect();
    if cut && tokens.len() > 2 {
        tokens.pop();
    }
    let feature = |t: &&str| {
        t.split_once(':').is_some_and(|(i, v)| {
            (i == "qid" || (!i.is_empty() && i.bytes().all(|b| b.is_ascii_digit())))
                && !v.is_empty()
        })
    };
    match tokens.split_first() {
        Some((first, rest)) if !first.contains(':') => !rest.is_empty() && rest.iter().all(feature),
        _ => !tokens.is_empty() && tokens.iter().all(feature),
    }
}
