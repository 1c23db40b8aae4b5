//! JSON Lines text as the report's readers take it.

use serde_json::Value;

/// Each non-blank line of `text` parsed, in order; a line that is not JSON is an error
/// carrying its 1-based line number, for the caller to name with its file.
pub(crate) fn json_lines(
    text: &str,
) -> impl Iterator<Item = Result<Value, (usize, serde_json::Error)>> + '_ {
    text.lines()
        .enumerate()
        .filter(|(_, l)| !l.trim().is_empty())
        .map(|(i, l)| serde_json::from_str(l).map_err(|e| (i + 1, e)))
}

#[cfg(test)]
mod tests {
    use super::json_lines;

    #[test]
    fn blank_lines_are_skipped_and_a_bad_line_is_numbered() {
        let got: Vec<_> = json_lines("{\"a\":1}\n\n  \n[2]\nnope\n").collect();
        assert_eq!(got.len(), 3);
        assert_eq!(got[0].as_ref().unwrap()["a"], 1);
        assert!(got[1].as_ref().unwrap().is_array());
        assert_eq!(got[2].as_ref().unwrap_err().0, 5);
    }
}
