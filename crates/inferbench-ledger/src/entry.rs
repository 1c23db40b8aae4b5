//! One ledger entry: a canonical (RFC 8785) JSON object on one line, hash-chained to the
//! line before it. The parser here names the line and the field of any error and never
//! panics, whatever the bytes (it is what the `ledger_line` fuzz target drives).

use inferbench_core::canonical;
use serde::{Deserialize, Serialize};
use serde_json::{Map, Value};

/// The entry format this build writes and reads. A ledger line with a larger `v` is refused.
pub const FORMAT_VERSION: u64 = 1;

/// `prev` of the first line: there is no previous hash, so a fixed all-zero one.
pub const GENESIS: &str = "sha256:0000000000000000000000000000000000000000000000000000000000000000";

/// Every kind of entry (reference ledger-gate.md §3.2, plus `ledger.init`).
pub const KINDS: &[&str] = &[
    "ledger.init",
    "run.record",
    "run.import",
    "run.classify",
    "epoch.declare",
    "bridge.record",
    "baseline.pin",
    "comparison.record",
    "gate.verdict",
    "amend",
    "retire",
];

const FIELDS: &[&str] = &[
    "v", "seq", "prev", "kind", "at", "by", "body", "cid", "hash",
];

#[derive(Serialize, Deserialize, Clone, Debug, PartialEq)]
pub struct Entry {
    pub v: u64,
    /// 1 for the first line, then +1 per line: a line's `seq` is its line number.
    pub seq: u64,
    pub prev: String,
    pub kind: String,
    /// RFC 3339 UTC, to the second (`2026-12-01T12:30:00Z`).
    pub at: String,
    pub by: String,
    pub body: Value,
    /// `sha256:` of the canonical body: the id other entries refer to.
    pub cid: String,
    /// `sha256:` of the canonical entry without `hash`.
    pub hash: String,
}

/// When and by whom an entry is written (injected, so tests fix the clock).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Stamp {
    pub at: String,
    pub by: String,
}

impl Stamp {
    /// The wall clock, to the second, in UTC.
    pub fn now(by: &str) -> Stamp {
        let ns = std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .map_or(0, |d| d.as_nanos() as u64);
        Stamp {
            at: inferbench_core::time::iso_utc_seconds(ns),
            by: by.to_string(),
        }
    }
}

/// A line that is not a valid entry: where, which field, and why.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("line {line}: {field}: {message}")]
pub struct LineError {
    pub line: usize,
    pub field: String,
    pub message: String,
}

impl Entry {
    /// A new entry after `prev` (its `seq` and `hash`, or `None` for the first line), with
    /// `cid` and `hash` computed.
    pub fn seal(
        prev: Option<(u64, &str)>,
        kind: &str,
        stamp: &Stamp,
        body: Value,
    ) -> Result<Entry, String> {
        if !KINDS.contains(&kind) {
            return Err(format!("unknown entry kind '{kind}'"));
        }
        if !body.is_object() {
            return Err("an entry body must be a JSON object".into());
        }
        let (seq, prev) = match prev {
            Some((s, h)) => (s + 1, h.to_string()),
            None => (1, GENESIS.to_string()),
        };
        let mut e = Entry {
            v: FORMAT_VERSION,
            seq,
            prev,
            kind: kind.to_string(),
            at: stamp.at.clone(),
            by: stamp.by.clone(),
            cid: canonical::digest(&body)?,
            body,
            hash: String::new(),
        };
        e.hash = e.expected_hash()?;
        Ok(e)
    }

    /// The same entry re-linked after another predecessor (`ledger merge`): `cid` is kept,
    /// `seq`, `prev` and `hash` are recomputed.
    pub fn relink(&self, prev: Option<(u64, &str)>) -> Result<Entry, String> {
        let stamp = Stamp {
            at: self.at.clone(),
            by: self.by.clone(),
        };
        Entry::seal(prev, &self.kind, &stamp, self.body.clone())
    }

    pub fn expected_cid(&self) -> Result<String, String> {
        canonical::digest(&self.body)
    }

    /// The digest of the canonical entry without its `hash` field.
    pub fn expected_hash(&self) -> Result<String, String> {
        let mut v = serde_json::to_value(self).map_err(|e| e.to_string())?;
        if let Value::Object(o) = &mut v {
            o.remove("hash");
        }
        canonical::digest(&v)
    }

    /// The canonical line, without the newline.
    pub fn to_line(&self) -> Result<String, String> {
        canonical::to_string(self)
    }
}

fn err(line: usize, field: &str, message: impl Into<String>) -> LineError {
    LineError {
        line,
        field: field.to_string(),
        message: message.into(),
    }
}

fn string_field(o: &Map<String, Value>, line: usize, field: &str) -> Result<String, LineError> {
    match o.get(field) {
        Some(Value::String(s)) => Ok(s.clone()),
        Some(other) => Err(err(
            line,
            field,
            format!("expected a string, found {other}"),
        )),
        None => Err(err(line, field, "missing")),
    }
}

fn id_field(o: &Map<String, Value>, line: usize, field: &str) -> Result<String, LineError> {
    let s = string_field(o, line, field)?;
    if !canonical::is_sha256_id(&s) {
        return Err(err(
            line,
            field,
            format!("'{s}' is not sha256: followed by 64 lowercase hex digits"),
        ));
    }
    Ok(s)
}

fn uint_field(o: &Map<String, Value>, line: usize, field: &str) -> Result<u64, LineError> {
    match o.get(field) {
        Some(Value::Number(n)) => n.as_u64().ok_or_else(|| {
            err(
                line,
                field,
                format!("expected a whole number ≥ 0, found {n}"),
            )
        }),
        Some(other) => Err(err(
            line,
            field,
            format!("expected a number, found {other}"),
        )),
        None => Err(err(line, field, "missing")),
    }
}

/// `YYYY-MM-DDTHH:MM:SS` with an optional fraction, then `Z`: RFC 3339 in UTC.
pub fn is_rfc3339_utc(s: &str) -> bool {
    let b = s.as_bytes();
    let digits =
        |r: std::ops::Range<usize>| b.get(r).is_some_and(|d| d.iter().all(u8::is_ascii_digit));
    if b.len() < 20 || b.last() != Some(&b'Z') {
        return false;
    }
    let shape = digits(0..4)
        && b[4] == b'-'
        && digits(5..7)
        && b[7] == b'-'
        && digits(8..10)
        && b[10] == b'T'
        && digits(11..13)
        && b[13] == b':'
        && digits(14..16)
        && b[16] == b':'
        && digits(17..19);
    let rest = &b[19..b.len() - 1];
    let fraction = rest.is_empty()
        || (rest[0] == b'.' && rest.len() > 1 && rest[1..].iter().all(u8::is_ascii_digit));
    shape && fraction
}

/// Parses one line (without its newline) as an entry. `line` is the 1-based line number for
/// the error. Checks types and shapes only; `verify` recomputes the digests and the chain.
pub fn parse_line(bytes: &[u8], line: usize) -> Result<Entry, LineError> {
    let text =
        std::str::from_utf8(bytes).map_err(|e| err(line, "line", format!("not UTF-8: {e}")))?;
    let value: Value =
        serde_json::from_str(text).map_err(|e| err(line, "line", format!("not JSON: {e}")))?;
    let Value::Object(o) = value else {
        return Err(err(line, "line", "not a JSON object"));
    };
    // The version first: a newer ledger is refused before any field it may have changed.
    let v = uint_field(&o, line, "v")?;
    if v > FORMAT_VERSION {
        return Err(err(
            line,
            "v",
            format!(
                "format version {v} is newer than this build reads ({FORMAT_VERSION}): upgrade inferbench"
            ),
        ));
    }
    if v == 0 {
        return Err(err(line, "v", "format version 0 does not exist"));
    }
    if let Some(k) = o.keys().find(|k| !FIELDS.contains(&k.as_str())) {
        return Err(err(line, k, "unknown field"));
    }
    let seq = uint_field(&o, line, "seq")?;
    let prev = id_field(&o, line, "prev")?;
    let kind = string_field(&o, line, "kind")?;
    if !KINDS.contains(&kind.as_str()) {
        return Err(err(line, "kind", format!("unknown kind '{kind}'")));
    }
    let at = string_field(&o, line, "at")?;
    if !is_rfc3339_utc(&at) {
        return Err(err(
            line,
            "at",
            format!("'{at}' is not an RFC 3339 UTC time"),
        ));
    }
    let by = string_field(&o, line, "by")?;
    let body = match o.get("body") {
        Some(b @ Value::Object(_)) => b.clone(),
        Some(other) => {
            return Err(err(
                line,
                "body",
                format!("expected an object, found {other}"),
            ));
        }
        None => return Err(err(line, "body", "missing")),
    };
    let cid = id_field(&o, line, "cid")?;
    let hash = id_field(&o, line, "hash")?;
    Ok(Entry {
        v,
        seq,
        prev,
        kind,
        at,
        by,
        body,
        cid,
        hash,
    })
}

#[cfg(test)]
mod tests;
