//! Field access on parsed JSON lines with errors that name the file, the line and the field.

use std::path::Path;

use serde_json::{Map, Value};

use crate::ImportError;

/// Where a value comes from: a file and a 1-based line (or `None` for a whole-file JSON).
#[derive(Clone, Copy)]
pub(super) struct At<'a> {
    pub path: &'a Path,
    pub line: Option<usize>,
}

impl<'a> At<'a> {
    pub fn line(path: &'a Path, line: usize) -> Self {
        At {
            path,
            line: Some(line),
        }
    }

    pub fn file(path: &'a Path) -> Self {
        At { path, line: None }
    }

    /// A format error at this place; `field` is a dotted JSON path such as
    /// `metadata.request_start_ns` (empty for the line as a whole).
    pub fn err(&self, field: &str, message: impl std::fmt::Display) -> ImportError {
        ImportError::Format {
            path: self.path.to_path_buf(),
            location: self.line.map(|l| l.to_string()),
            message: if field.is_empty() {
                message.to_string()
            } else {
                format!("{field}: {message}")
            },
        }
    }
}

/// A short description of a JSON value for error messages.
pub(super) fn found(v: &Value) -> String {
    let s = v.to_string();
    if s.chars().count() > 40 {
        format!("{}…", s.chars().take(40).collect::<String>())
    } else {
        s
    }
}

/// `obj[key]`, treating `null` as absent.
pub(super) fn get<'v>(obj: &'v Map<String, Value>, key: &str) -> Option<&'v Value> {
    obj.get(key).filter(|v| !v.is_null())
}

pub(super) fn object<'v>(
    at: At<'_>,
    v: &'v Value,
    field: &str,
) -> Result<&'v Map<String, Value>, ImportError> {
    v.as_object()
        .ok_or_else(|| at.err(field, format!("expected an object, found {}", found(v))))
}

/// An optional unsigned integer field.
pub(super) fn opt_u64(
    at: At<'_>,
    obj: &Map<String, Value>,
    parent: &str,
    key: &str,
) -> Result<Option<u64>, ImportError> {
    match get(obj, key) {
        None => Ok(None),
        Some(v) => v.as_u64().map(Some).ok_or_else(|| {
            at.err(
                &join(parent, key),
                format!("expected an unsigned integer, found {}", found(v)),
            )
        }),
    }
}

/// A required unsigned integer field.
pub(super) fn req_u64(
    at: At<'_>,
    obj: &Map<String, Value>,
    parent: &str,
    key: &str,
) -> Result<u64, ImportError> {
    opt_u64(at, obj, parent, key)?.ok_or_else(|| at.err(&join(parent, key), "missing"))
}

/// An optional string field.
pub(super) fn opt_str<'v>(
    at: At<'_>,
    obj: &'v Map<String, Value>,
    parent: &str,
    key: &str,
) -> Result<Option<&'v str>, ImportError> {
    match get(obj, key) {
        None => Ok(None),
        Some(v) => v.as_str().map(Some).ok_or_else(|| {
            at.err(
                &join(parent, key),
                format!("expected a string, found {}", found(v)),
            )
        }),
    }
}

/// An optional boolean field.
pub(super) fn opt_bool(
    at: At<'_>,
    obj: &Map<String, Value>,
    parent: &str,
    key: &str,
) -> Result<Option<bool>, ImportError> {
    match get(obj, key) {
        None => Ok(None),
        Some(v) => v.as_bool().map(Some).ok_or_else(|| {
            at.err(
                &join(parent, key),
                format!("expected true or false, found {}", found(v)),
            )
        }),
    }
}

pub(super) fn join(parent: &str, key: &str) -> String {
    if parent.is_empty() {
        key.to_string()
    } else {
        format!("{parent}.{key}")
    }
}
