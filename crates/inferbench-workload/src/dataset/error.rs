//! The one error of dataset loading: where (file, line, field) and what.

use std::fmt;

/// A dataset input at fault. Displays as `FILE:LINE: field 'FIELD': MESSAGE`, leaving out
/// the parts that do not apply (a whole-file problem has no line; a JSON document names the
/// element by its path in `field`, e.g. `data[3].payloads[0]`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct DatasetError {
    /// The file as given (or the option, e.g. `--seq-dist`, for a bad dataset option).
    pub file: String,
    /// 1-based line number in the file.
    pub line: Option<usize>,
    /// The field (JSON key or path) at fault.
    pub field: Option<String>,
    pub message: String,
}

impl DatasetError {
    /// A problem with the file as a whole (missing, unreadable, empty).
    pub fn file(file: impl Into<String>, message: impl Into<String>) -> Self {
        DatasetError {
            file: file.into(),
            line: None,
            field: None,
            message: message.into(),
        }
    }

    /// A problem on one line, not tied to a field (e.g. the line is not JSON).
    pub fn line(file: impl Into<String>, line: usize, message: impl Into<String>) -> Self {
        DatasetError {
            file: file.into(),
            line: Some(line),
            field: None,
            message: message.into(),
        }
    }

    /// A problem with one field of one line (line None for a JSON document).
    pub fn field(
        file: impl Into<String>,
        line: Option<usize>,
        field: impl Into<String>,
        message: impl Into<String>,
    ) -> Self {
        DatasetError {
            file: file.into(),
            line,
            field: Some(field.into()),
            message: message.into(),
        }
    }
}

impl fmt::Display for DatasetError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.file)?;
        if let Some(l) = self.line {
            write!(f, ":{l}")?;
        }
        if let Some(field) = &self.field {
            write!(f, ": field '{field}'")?;
        }
        write!(f, ": {}", self.message)
    }
}

impl std::error::Error for DatasetError {}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn display_names_what_is_known() {
        let e = DatasetError::field(
            "trace.jsonl",
            Some(17),
            "hash_ids",
            "expected a list of integers",
        );
        assert_eq!(
            e.to_string(),
            "trace.jsonl:17: field 'hash_ids': expected a list of integers"
        );
        assert_eq!(
            DatasetError::line("a.jsonl", 2, "not JSON").to_string(),
            "a.jsonl:2: not JSON"
        );
        assert_eq!(
            DatasetError::file("d", "no such file").to_string(),
            "d: no such file"
        );
        assert_eq!(
            DatasetError::field("inputs.json", None, "data[0]", "x").to_string(),
            "inputs.json: field 'data[0]': x"
        );
    }
}
