//! Reading dataset files and checking the fields of their rows, with errors that name the
//! file, the line and the field.

use std::path::Path;

use serde_json::{Map, Value};

use super::error::DatasetError;

/// Fields that carry images, audio or video: read by the row types that take media
/// (`media_rows`), refused elsewhere (a trace row), never dropped silently.
pub(crate) use super::media_rows::MEDIA_FIELDS;

/// The whole text of a file, or an error naming it.
pub(crate) fn read_text(path: &Path) -> Result<String, DatasetError> {
    let shown = path.display().to_string();
    let bytes = std::fs::read(path).map_err(|e| {
        let what = if e.kind() == std::io::ErrorKind::NotFound {
            "no such file".to_string()
        } else {
            format!("cannot read: {e}")
        };
        DatasetError::file(&shown, what)
    })?;
    String::from_utf8(bytes).map_err(|e| {
        DatasetError::file(
            &shown,
            format!("not UTF-8 text (byte {})", e.utf8_error().valid_up_to()),
        )
    })
}

/// Rows of a JSONL file: (1-based line number, the object).
pub(crate) type Rows = Vec<(usize, Map<String, Value>)>;

/// One JSON object per non-blank line, with its 1-based line number. Every line is parsed
/// before anything is returned; the first bad one is the error.
pub(crate) fn parse_jsonl(file: &str, text: &str) -> Result<Rows, DatasetError> {
    let mut rows = Vec::new();
    for (i, line) in text.lines().enumerate() {
        let no = i + 1;
        let line = line.trim();
        if line.is_empty() {
            continue;
        }
        match serde_json::from_str::<Value>(line) {
            Ok(Value::Object(m)) => rows.push((no, m)),
            Ok(other) => {
                return Err(DatasetError::line(
                    file,
                    no,
                    format!("expected a JSON object, got {}", kind(&other)),
                ));
            }
            Err(e) => {
                return Err(DatasetError::line(
                    file,
                    no,
                    format!("not valid JSON (column {}): {e}", e.column()),
                ));
            }
        }
    }
    if rows.is_empty() {
        return Err(DatasetError::file(file, "no rows (the file is empty)"));
    }
    Ok(rows)
}

/// A JSON type's name, for messages.
pub(crate) fn kind(v: &Value) -> &'static str {
    match v {
        Value::Null => "null",
        Value::Bool(_) => "a boolean",
        Value::Number(_) => "a number",
        Value::String(_) => "a string",
        Value::Array(_) => "a list",
        Value::Object(_) => "an object",
    }
}

/// One row (or a nested object of one, e.g. `turns[2]`) under inspection. A field that is
/// `null` counts as absent, as in AIPerf's models.
pub(crate) struct Row<'a> {
    pub file: &'a str,
    pub line: Option<usize>,
    /// Path of this object inside the row, e.g. `turns[2].`, prefixed to field names.
    pub prefix: String,
    pub obj: &'a Map<String, Value>,
}

impl<'a> Row<'a> {
    pub fn new(file: &'a str, line: usize, obj: &'a Map<String, Value>) -> Self {
        Row {
            file,
            line: Some(line),
            prefix: String::new(),
            obj,
        }
    }

    pub fn nested(&self, prefix: String, obj: &'a Map<String, Value>) -> Row<'a> {
        Row {
            file: self.file,
            line: self.line,
            prefix,
            obj,
        }
    }

    pub fn err(&self, field: &str, message: impl Into<String>) -> DatasetError {
        DatasetError::field(
            self.file,
            self.line,
            format!("{}{field}", self.prefix),
            message,
        )
    }

    pub fn get(&self, key: &str) -> Option<&'a Value> {
        match self.obj.get(key) {
            None | Some(Value::Null) => None,
            Some(v) => Some(v),
        }
    }

    pub fn has(&self, key: &str) -> bool {
        self.get(key).is_some()
    }

    /// Refuses any key not in `allowed`, media fields with their own message (`type` is
    /// always allowed: AIPerf rows may carry their type).
    pub fn check_keys(&self, allowed: &[&str], kind_name: &str) -> Result<(), DatasetError> {
        for (k, v) in self.obj {
            if k == "type" || allowed.contains(&k.as_str()) {
                continue;
            }
            if MEDIA_FIELDS.contains(&k.as_str()) {
                if v.is_null() {
                    continue;
                }
                return Err(self.err(
                    k,
                    format!(
                        "images, audio and video are read by single_turn, multi_turn and random_pool rows, not by {kind_name}"
                    ),
                ));
            }
            return Err(self.err(k, format!("unknown field for {kind_name}")));
        }
        Ok(())
    }

    pub fn opt_str(&self, key: &str) -> Result<Option<&'a str>, DatasetError> {
        match self.get(key) {
            None => Ok(None),
            Some(Value::String(s)) => Ok(Some(s)),
            Some(v) => Err(self.err(key, format!("expected a string, got {}", kind(v)))),
        }
    }

    /// A non-negative integer (a float with no fraction is accepted, as pydantic does).
    pub fn opt_u64(&self, key: &str) -> Result<Option<u64>, DatasetError> {
        match self.get(key) {
            None => Ok(None),
            Some(v) => as_u64(v)
                .map(Some)
                .ok_or_else(|| self.err(key, format!("expected an integer >= 0, got {v}"))),
        }
    }

    /// A finite number >= 0 (milliseconds).
    pub fn opt_ms(&self, key: &str) -> Result<Option<f64>, DatasetError> {
        match self.get(key) {
            None => Ok(None),
            Some(v) => match v.as_f64() {
                Some(x) if x.is_finite() && x >= 0.0 => Ok(Some(x)),
                _ => Err(self.err(key, format!("expected a number of ms >= 0, got {v}"))),
            },
        }
    }

    pub fn opt_object(&self, key: &str) -> Result<Option<&'a Map<String, Value>>, DatasetError> {
        match self.get(key) {
            None => Ok(None),
            Some(Value::Object(m)) => Ok(Some(m)),
            Some(v) => Err(self.err(key, format!("expected an object, got {}", kind(v)))),
        }
    }

    /// A session id: a string, or an integer (written as its decimal text).
    pub fn opt_session_id(&self, key: &str) -> Result<Option<String>, DatasetError> {
        match self.get(key) {
            None => Ok(None),
            Some(Value::String(s)) => Ok(Some(s.clone())),
            Some(Value::Number(n)) if n.is_i64() || n.is_u64() => Ok(Some(n.to_string())),
            Some(v) => Err(self.err(key, format!("expected a string, got {}", kind(v)))),
        }
    }
}

pub(crate) fn as_u64(v: &Value) -> Option<u64> {
    if let Some(n) = v.as_u64() {
        return Some(n);
    }
    let f = v.as_f64()?;
    (f.is_finite() && f >= 0.0 && f.fract() == 0.0 && f < 9.0e15).then_some(f as u64)
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn jsonl_skips_blank_lines_and_names_bad_ones() {
        let rows = parse_jsonl("f.jsonl", "{\"a\":1}\n\n  \n{\"b\":2}\n").unwrap();
        assert_eq!(rows.len(), 2);
        assert_eq!(rows[1].0, 4);
        let e = parse_jsonl("f.jsonl", "{\"a\":1}\n[1]\n").unwrap_err();
        assert_eq!(
            e.to_string(),
            "f.jsonl:2: expected a JSON object, got a list"
        );
        let e = parse_jsonl("f.jsonl", "{\"a\":1}\n{oops\n").unwrap_err();
        assert!(
            e.to_string().starts_with("f.jsonl:2: not valid JSON"),
            "{e}"
        );
        let e = parse_jsonl("f.jsonl", "\n\n").unwrap_err();
        assert_eq!(e.to_string(), "f.jsonl: no rows (the file is empty)");
    }

    #[test]
    fn fields_are_checked_by_type() {
        let m = json!({"n": 3.0, "f": 1.5, "neg": -1, "s": "x", "nul": null, "image": "a.png"});
        let m = m.as_object().unwrap();
        let r = Row::new("t.jsonl", 5, m);
        assert_eq!(r.opt_u64("n").unwrap(), Some(3));
        assert_eq!(r.opt_u64("nul").unwrap(), None);
        assert_eq!(
            r.opt_u64("f").unwrap_err().to_string(),
            "t.jsonl:5: field 'f': expected an integer >= 0, got 1.5"
        );
        assert!(r.opt_ms("neg").is_err());
        assert_eq!(r.opt_ms("f").unwrap(), Some(1.5));
        assert!(r.opt_str("n").is_err());
        let e = r
            .check_keys(&["n", "f", "neg", "s", "nul"], "single_turn")
            .unwrap_err();
        assert!(
            e.to_string()
                .starts_with("t.jsonl:5: field 'image': images"),
            "{e}"
        );
        let nested = r.nested("turns[1].".into(), m);
        assert_eq!(
            nested.opt_str("n").unwrap_err().to_string(),
            "t.jsonl:5: field 'turns[1].n': expected a string, got a number"
        );
    }
}
