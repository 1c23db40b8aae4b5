//! Reading TOML tables field by field, with the line of every key: values come from
//! `toml::Table`, positions from the same text parsed as `toml::de::DeTable` (which keeps
//! spans). Every key must be read; one left over is an unknown field.

use std::cell::RefCell;
use std::collections::BTreeSet;

use toml::Value;
use toml::de::{DeTable, DeValue};

use crate::Failure;

/// The file being read: its name, the text (for line numbers) and the spans.
pub struct Source<'a> {
    pub file: &'a str,
    pub text: &'a str,
}

impl Source<'_> {
    /// 1-based line of a byte offset.
    pub fn line_of(&self, offset: usize) -> usize {
        let end = offset.min(self.text.len());
        self.text.as_bytes()[..end]
            .iter()
            .filter(|&&b| b == b'\n')
            .count()
            + 1
    }

    /// `FILE:LINE: WHERE: MESSAGE`.
    pub fn error(&self, offset: usize, field: &str, message: impl std::fmt::Display) -> Failure {
        Failure::input(format!(
            "{}:{}: {field}: {message}",
            self.file,
            self.line_of(offset)
        ))
    }
}

/// One table, its span tree, and the keys read so far.
pub struct Table<'s, 'v> {
    pub src: &'s Source<'s>,
    /// How messages name this table (`[gate]`, `rule "latency.p99"`, `slo`).
    pub label: String,
    pub values: &'v toml::Table,
    spans: Option<&'v DeTable<'v>>,
    /// Offset of the table itself (its header), for errors about a missing key.
    pub at: usize,
    used: RefCell<BTreeSet<String>>,
}

impl<'s, 'v> Table<'s, 'v> {
    pub fn new(
        src: &'s Source<'s>,
        label: impl Into<String>,
        values: &'v toml::Table,
        spans: Option<&'v DeTable<'v>>,
        at: usize,
    ) -> Self {
        Table {
            src,
            label: label.into(),
            values,
            spans,
            at,
            used: RefCell::new(BTreeSet::new()),
        }
    }

    /// The same table under another name in messages, nothing read yet.
    pub fn relabel(&self, label: String) -> Table<'s, 'v> {
        Table::new(self.src, label, self.values, self.spans, self.at)
    }

    /// Offset of `key` (its name) in the file, else the table's.
    pub fn offset(&self, key: &str) -> usize {
        self.spans
            .and_then(|t| t.iter().find(|(k, _)| k.get_ref().as_ref() == key))
            .map_or(self.at, |(k, _)| k.span().start)
    }

    /// An error about `key` of this table, at its line.
    pub fn err(&self, key: &str, message: impl std::fmt::Display) -> Failure {
        let field = if key.is_empty() {
            self.label.clone()
        } else {
            format!("{} {key}", self.label)
        };
        self.src.error(self.offset(key), &field, message)
    }

    fn take(&self, key: &str) -> Option<&'v Value> {
        let v = self.values.get(key)?;
        self.used.borrow_mut().insert(key.to_string());
        Some(v)
    }

    pub fn string(&self, key: &str) -> Result<Option<String>, Failure> {
        match self.take(key) {
            None => Ok(None),
            Some(Value::String(s)) => Ok(Some(s.clone())),
            Some(v) => Err(self.err(key, format!("a string is needed, got {}", kind(v)))),
        }
    }

    pub fn required_string(&self, key: &str) -> Result<String, Failure> {
        self.string(key)?
            .ok_or_else(|| self.err("", format!("`{key}` is required")))
    }

    /// A number (an integer is taken as a float).
    pub fn number(&self, key: &str) -> Result<Option<f64>, Failure> {
        match self.take(key) {
            None => Ok(None),
            Some(Value::Float(f)) if f.is_finite() => Ok(Some(*f)),
            Some(Value::Integer(i)) => Ok(Some(*i as f64)),
            Some(Value::Float(f)) => Err(self.err(key, format!("{f} is not a finite number"))),
            Some(v) => Err(self.err(key, format!("a number is needed, got {}", kind(v)))),
        }
    }

    /// A number within `[lo, hi]` (both inclusive).
    pub fn number_in(&self, key: &str, lo: f64, hi: f64) -> Result<Option<f64>, Failure> {
        match self.number(key)? {
            Some(v) if !(lo..=hi).contains(&v) => {
                Err(self.err(key, format!("{v} is outside [{lo}, {hi}]")))
            }
            v => Ok(v),
        }
    }

    pub fn integer(&self, key: &str) -> Result<Option<u64>, Failure> {
        match self.take(key) {
            None => Ok(None),
            Some(Value::Integer(i)) if *i >= 0 => Ok(Some(*i as u64)),
            Some(Value::Integer(i)) => Err(self.err(key, format!("{i} is negative"))),
            Some(v) => Err(self.err(
                key,
                format!("a non-negative integer is needed, got {}", kind(v)),
            )),
        }
    }

    pub fn boolean(&self, key: &str) -> Result<Option<bool>, Failure> {
        match self.take(key) {
            None => Ok(None),
            Some(Value::Boolean(b)) => Ok(Some(*b)),
            Some(v) => Err(self.err(key, format!("true or false is needed, got {}", kind(v)))),
        }
    }

    /// A string that must be one of `allowed`.
    pub fn choice(&self, key: &str, allowed: &[&str]) -> Result<Option<String>, Failure> {
        match self.string(key)? {
            Some(s) if !allowed.contains(&s.as_str()) => Err(self.err(
                key,
                format!("unknown value \"{s}\" (one of: {})", allowed.join(", ")),
            )),
            s => Ok(s),
        }
    }

    /// An array of two numbers `[lo, hi]` with `lo <= hi`.
    pub fn pair(&self, key: &str) -> Result<Option<(f64, f64)>, Failure> {
        let Some(v) = self.take(key) else {
            return Ok(None);
        };
        let nums: Option<Vec<f64>> = v.as_array().map(|a| {
            a.iter()
                .filter_map(|x| x.as_float().or_else(|| x.as_integer().map(|i| i as f64)))
                .collect()
        });
        match nums.as_deref() {
            Some([lo, hi]) if v.as_array().is_some_and(|a| a.len() == 2) => {
                if lo.is_finite() && hi.is_finite() && lo <= hi {
                    Ok(Some((*lo, *hi)))
                } else {
                    Err(self.err(
                        key,
                        format!("[{lo}, {hi}]: the first must be <= the second"),
                    ))
                }
            }
            _ => Err(self.err(key, "an array of two numbers [low, high] is needed")),
        }
    }

    pub fn strings(&self, key: &str) -> Result<Option<Vec<String>>, Failure> {
        let Some(v) = self.take(key) else {
            return Ok(None);
        };
        let Some(a) = v.as_array() else {
            return Err(self.err(
                key,
                format!("an array of strings is needed, got {}", kind(v)),
            ));
        };
        a.iter()
            .map(|x| {
                x.as_str().map(str::to_string).ok_or_else(|| {
                    self.err(
                        key,
                        format!("an array of strings is needed, got {}", kind(x)),
                    )
                })
            })
            .collect::<Result<Vec<_>, _>>()
            .map(Some)
    }

    /// A sub-table (`[gate.evidence]` or an inline `{ … }`).
    pub fn table(&self, key: &str) -> Result<Option<Table<'s, 'v>>, Failure> {
        let Some(v) = self.take(key) else {
            return Ok(None);
        };
        let Some(t) = v.as_table() else {
            return Err(self.err(key, format!("a table is needed, got {}", kind(v))));
        };
        let spans = self.spans.and_then(|s| {
            s.iter()
                .find(|(k, _)| k.get_ref().as_ref() == key)
                .and_then(|(_, v)| match v.get_ref() {
                    DeValue::Table(t) => Some(t),
                    _ => None,
                })
        });
        let label = if self.label.starts_with('[') {
            format!("[{}.{key}]", self.label.trim_matches(['[', ']']))
        } else {
            format!("{} {key}", self.label)
        };
        Ok(Some(Table::new(
            self.src,
            label,
            t,
            spans,
            self.offset(key),
        )))
    }

    /// The keys of this table (for maps such as `slo` and `margins`), each with a reader of
    /// its value's line.
    pub fn keys(&self) -> Vec<String> {
        self.values.keys().cloned().collect()
    }

    /// Marks every key read (for a map whose keys are data).
    pub fn take_all(&self) {
        let mut u = self.used.borrow_mut();
        for k in self.values.keys() {
            u.insert(k.clone());
        }
    }

    /// Marks `key` read (a table read through its own reader).
    pub fn mark(&self, key: &str) {
        if self.values.contains_key(key) {
            self.used.borrow_mut().insert(key.to_string());
        }
    }

    pub fn raw(&self, key: &str) -> Option<&'v Value> {
        self.values.get(key)
    }

    /// Every key was read; the first unknown one (in file order) is the error.
    pub fn finish(&self, known: &str) -> Result<(), Failure> {
        let used = self.used.borrow();
        let mut unknown: Vec<(usize, &String)> = self
            .values
            .keys()
            .filter(|k| !used.contains(*k))
            .map(|k| (self.offset(k), k))
            .collect();
        unknown.sort();
        match unknown.first() {
            None => Ok(()),
            Some((_, k)) => Err(self.err(k, format!("unknown field (known: {known})"))),
        }
    }
}

pub fn kind(v: &Value) -> &'static str {
    match v {
        Value::String(_) => "a string",
        Value::Integer(_) => "an integer",
        Value::Float(_) => "a float",
        Value::Boolean(_) => "a boolean",
        Value::Datetime(_) => "a date",
        Value::Array(_) => "an array",
        Value::Table(_) => "a table",
    }
}

/// The spans of the `[[rule]]` array's elements, in order, and each element's table.
pub fn array_spans<'v>(root: &'v DeTable<'v>, key: &str) -> Vec<(usize, Option<&'v DeTable<'v>>)> {
    root.iter()
        .find(|(k, _)| k.get_ref().as_ref() == key)
        .and_then(|(_, v)| match v.get_ref() {
            DeValue::Array(a) => Some(
                a.iter()
                    .map(|e| {
                        let t = match e.get_ref() {
                            DeValue::Table(t) => Some(t),
                            _ => None,
                        };
                        (e.span().start, t)
                    })
                    .collect(),
            ),
            _ => None,
        })
        .unwrap_or_default()
}

/// The span table of a top-level key (`gate`).
pub fn sub_spans<'v>(root: &'v DeTable<'v>, key: &str) -> Option<(usize, &'v DeTable<'v>)> {
    root.iter()
        .find(|(k, _)| k.get_ref().as_ref() == key)
        .and_then(|(k, v)| match v.get_ref() {
            DeValue::Table(t) => Some((k.span().start, t)),
            _ => None,
        })
}
