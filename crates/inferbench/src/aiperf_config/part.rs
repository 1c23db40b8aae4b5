//! One table of an AIPerf config, consumed key by key: whatever is left when the mapping is
//! done is refused, naming it.

use serde_json::{Map, Value};

use super::{join, refused};

/// One table of the config, consumed key by key.
pub(super) struct Part<'a> {
    pub(super) file: &'a str,
    pub(super) at: String,
    pub(super) m: Map<String, Value>,
}

impl<'a> Part<'a> {
    pub(super) fn new(file: &'a str, at: &str, v: &Value) -> Result<Part<'a>, String> {
        match v {
            Value::Object(m) => Ok(Part {
                file,
                at: at.to_string(),
                m: m.clone(),
            }),
            _ => Err(format!("{file}: {at}: expected a table")),
        }
    }

    pub(super) fn take(&mut self, k: &str) -> Option<Value> {
        // shift_remove: what is left keeps the file's order, so the first refused part is
        // the first in the file.
        self.m.shift_remove(k).filter(|v| !v.is_null())
    }

    pub(super) fn path(&self, k: &str) -> String {
        join(&self.at, k)
    }

    pub(super) fn err(&self, k: &str, msg: impl std::fmt::Display) -> String {
        format!("{}: {}: {msg}", self.file, self.path(k))
    }

    pub(super) fn refuse(&self, k: &str, v: &Value) -> String {
        refused(self.file, &self.path(k), v)
    }

    /// Refused with the reason: `FILE: FIELD VALUE: not built in inferbench (why)`.
    pub(super) fn refuse_why(&self, k: &str, v: &Value, why: &str) -> String {
        format!(
            "{}: {}{}: not built in inferbench ({why})",
            self.file,
            self.path(k),
            shown(v)
        )
    }

    pub(super) fn uint(&mut self, k: &str) -> Result<Option<u64>, String> {
        match self.take(k) {
            None => Ok(None),
            Some(v) => v
                .as_u64()
                .map(Some)
                .ok_or_else(|| self.err(k, format!("{v}: expected a whole number"))),
        }
    }

    pub(super) fn num(&mut self, k: &str) -> Result<Option<f64>, String> {
        match self.take(k) {
            None => Ok(None),
            Some(v) => v
                .as_f64()
                .map(Some)
                .ok_or_else(|| self.err(k, format!("{v}: expected a number"))),
        }
    }

    pub(super) fn string(&mut self, k: &str) -> Result<Option<String>, String> {
        match self.take(k) {
            None => Ok(None),
            Some(Value::String(s)) => Ok(Some(s)),
            Some(v) => Err(self.err(k, format!("{v}: expected a string"))),
        }
    }

    pub(super) fn boolean(&mut self, k: &str) -> Result<Option<bool>, String> {
        match self.take(k) {
            None => Ok(None),
            Some(Value::Bool(b)) => Ok(Some(b)),
            Some(v) => Err(self.err(k, format!("{v}: expected true or false"))),
        }
    }

    /// Seconds, from a number or a duration string (`30s`, `5m`, `2h`).
    pub(super) fn seconds(&mut self, k: &str) -> Result<Option<f64>, String> {
        match self.take(k) {
            None => Ok(None),
            Some(Value::Number(n)) => Ok(n.as_f64()),
            Some(Value::String(s)) => duration(&s)
                .map(Some)
                .ok_or_else(|| self.err(k, format!("\"{s}\": not a finite duration"))),
            Some(v) => Err(self.refuse(k, &v)),
        }
    }

    /// Every key not taken is refused, by name.
    pub(super) fn done(self) -> Result<(), String> {
        match self.m.iter().find(|(_, v)| !v.is_null()) {
            Some((k, v)) => Err(self.refuse(k, v)),
            None => Ok(()),
        }
    }
}

/// `30`, `30s`, `30 sec`, `5m`, `5min`, `2h`, `2hr`, `2hour` → seconds (AIPerf's duration
/// strings; `inf` has no flag and is refused).
pub(super) fn duration(s: &str) -> Option<f64> {
    let t = s.trim().to_ascii_lowercase();
    let split = t
        .find(|c: char| !(c.is_ascii_digit() || c == '.'))
        .unwrap_or(t.len());
    let (n, unit) = t.split_at(split);
    let n: f64 = n.parse().ok()?;
    let mult = match unit.trim() {
        "" | "s" | "sec" => 1.0,
        "m" | "min" => 60.0,
        "h" | "hr" | "hour" => 3600.0,
        _ => return None,
    };
    Some(n * mult)
}

pub(super) fn fmt_num(x: f64) -> String {
    format!("{x}")
}

/// ` "text"`, ` 12`, ` true`: a short view of a refused value (nothing for tables and lists).
pub(super) fn shown(v: &Value) -> String {
    match v {
        Value::String(s) => format!(" \"{s}\""),
        Value::Number(n) => format!(" {n}"),
        Value::Bool(b) => format!(" {b}"),
        _ => String::new(),
    }
}
