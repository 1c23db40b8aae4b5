//! AIPerf's `sagemaker_data_capture`: the JSONL that Amazon SageMaker's data capture writes
//! for a real-time endpoint, one request per line, replayed with its literal chat messages
//! at its recorded time. A file, or a directory searched recursively for `*.jsonl`.
//!
//! A record: `eventMetadata.inferenceTime` (ISO 8601), `captureData.endpointInput`
//! `{data, encoding}` holding the request body (encoding `JSON` or `BASE64`, the default),
//! optionally `captureData.endpointOutput` (the response; its `usage` is informational).
//! The body must hold `messages`; `tools` is kept; `max_tokens`, else
//! `max_completion_tokens`, is the output limit.

use std::path::{Path, PathBuf};

use inferbench_core::plan::RunPlan;
use serde_json::{Map, Value};

use super::error::DatasetError;
use super::mooncake::check_messages;
use super::row::{Row, kind, parse_jsonl, read_text};
use super::synth::OslDraws;
use super::{Conv, TurnSpec, session_id};
use crate::error::WorkloadError;

/// True when a row has the two keys every capture record has.
pub(crate) fn looks_sagemaker(row: &Map<String, Value>) -> bool {
    row.contains_key("captureData") && row.contains_key("eventMetadata")
}

/// Milliseconds since the Unix epoch of an ISO 8601 date-time:
/// `YYYY-MM-DD[T| ]HH:MM[:SS[.fraction]][Z|±HH[:MM]]`. A time without an offset is read as
/// UTC (Python reads it as local time; the loader only uses differences, so this matters
/// only across a daylight-saving change).
pub(crate) fn iso8601_ms(s: &str) -> Option<f64> {
    let s = s.trim();
    let b = s.as_bytes();
    let num = |r: std::ops::Range<usize>| -> Option<i64> {
        let t = s.get(r)?;
        if t.is_empty() || !t.bytes().all(|c| c.is_ascii_digit()) {
            return None;
        }
        t.parse().ok()
    };
    if b.len() < 16 || b[4] != b'-' || b[7] != b'-' || !(b[10] == b'T' || b[10] == b' ') {
        return None;
    }
    let (y, mo, d) = (num(0..4)?, num(5..7)?, num(8..10)?);
    let (h, mi) = (num(11..13)?, num(14..16)?);
    if b[13] != b':' {
        return None;
    }
    let mut i = 16;
    let mut sec = 0.0;
    if b.get(i) == Some(&b':') {
        sec = num(i + 1..i + 3)? as f64;
        i += 3;
        if matches!(b.get(i), Some(b'.') | Some(b',')) {
            let start = i + 1;
            let mut j = start;
            while j < b.len() && b[j].is_ascii_digit() {
                j += 1;
            }
            if j == start {
                return None;
            }
            sec += format!("0.{}", &s[start..j]).parse::<f64>().ok()?;
            i = j;
        }
    }
    let offset_min = match b.get(i) {
        None => 0,
        Some(b'Z') | Some(b'z') if i + 1 == b.len() => 0,
        Some(&c @ (b'+' | b'-')) => {
            let oh = num(i + 1..i + 3)?;
            let om = match b.get(i + 3) {
                None => 0,
                Some(b':') if i + 6 == b.len() => num(i + 4..i + 6)?,
                Some(_) if i + 5 == b.len() => num(i + 3..i + 5)?,
                _ => return None,
            };
            let sign = if c == b'+' { 1 } else { -1 };
            sign * (oh * 60 + om)
        }
        _ => return None,
    };
    if !(1..=12).contains(&mo) || !(1..=31).contains(&d) || h > 23 || mi > 59 || sec >= 61.0 {
        return None;
    }
    let days = days_from_civil(y, mo, d);
    let secs = days * 86_400 + h * 3600 + mi * 60 - offset_min * 60;
    Some((secs as f64 + sec) * 1000.0)
}

/// Days since 1970-01-01 of a proleptic Gregorian date (Howard Hinnant's algorithm).
fn days_from_civil(y: i64, m: i64, d: i64) -> i64 {
    let y = if m <= 2 { y - 1 } else { y };
    let era = y.div_euclid(400);
    let yoe = y - era * 400;
    let mp = (m + 9) % 12;
    let doy = (153 * mp + 2) / 5 + d - 1;
    let doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;
    era * 146_097 + doe - 719_468
}

/// Standard base64 (RFC 4648, padding optional, whitespace ignored).
pub(crate) fn base64_decode(s: &str) -> Option<Vec<u8>> {
    let mut out = Vec::with_capacity(s.len() * 3 / 4);
    let mut acc = 0u32;
    let mut bits = 0;
    let mut pad = 0;
    for c in s.bytes() {
        let v = match c {
            b'A'..=b'Z' => c - b'A',
            b'a'..=b'z' => c - b'a' + 26,
            b'0'..=b'9' => c - b'0' + 52,
            b'+' => 62,
            b'/' => 63,
            b'=' => {
                pad += 1;
                continue;
            }
            b' ' | b'\n' | b'\r' | b'\t' => continue,
            _ => return None,
        };
        if pad > 0 {
            return None;
        }
        acc = (acc << 6) | u32::from(v);
        bits += 6;
        if bits >= 8 {
            bits -= 8;
            out.push((acc >> bits) as u8);
            acc &= (1 << bits) - 1;
        }
    }
    (pad <= 2 && bits < 6).then_some(out)
}

/// The decoded body of a `captureData` entry, or an error naming `field`.
fn decode(r: &Row<'_>, field: &str, entry: &Value) -> Result<Value, DatasetError> {
    let Some(e) = entry.as_object() else {
        return Err(r.err(field, format!("expected an object, got {}", kind(entry))));
    };
    let data = match e.get("data") {
        Some(Value::String(s)) => s,
        Some(v) => {
            return Err(r.err(
                &format!("{field}.data"),
                format!("expected a string, got {}", kind(v)),
            ));
        }
        None => return Err(r.err(&format!("{field}.data"), "required")),
    };
    let encoding = match e.get("encoding") {
        None | Some(Value::Null) => "BASE64",
        Some(Value::String(s)) => s.as_str(),
        Some(v) => {
            return Err(r.err(
                &format!("{field}.encoding"),
                format!("expected a string, got {}", kind(v)),
            ));
        }
    };
    let bytes = match encoding {
        "JSON" => data.as_bytes().to_vec(),
        "BASE64" => base64_decode(data)
            .ok_or_else(|| r.err(&format!("{field}.data"), "not valid base64"))?,
        other => {
            return Err(r.err(
                &format!("{field}.encoding"),
                format!("{other:?} is not supported (JSON or BASE64; a CSV capture has no chat messages)"),
            ));
        }
    };
    serde_json::from_slice(&bytes)
        .map_err(|e| r.err(&format!("{field}.data"), format!("not valid JSON: {e}")))
}

struct Capture {
    timestamp_ms: f64,
    /// The response's `usage.prompt_tokens`, when the capture holds a readable response
    /// (AIPerf's `input_length`: only `--synthesis-max-isl` reads it).
    prompt_tokens: Option<u64>,
    turn: TurnSpec,
}

/// `usage.prompt_tokens` of a capture's decoded response; None when absent or unreadable
/// (the response is not otherwise used, so it is never an error).
fn prompt_tokens(r: &Row<'_>, capture: &Map<String, Value>) -> Option<u64> {
    let out = capture.get("endpointOutput")?;
    let body = decode(r, "captureData.endpointOutput", out).ok()?;
    body.get("usage")?.get("prompt_tokens")?.as_u64()
}

fn parse_record(r: &Row<'_>) -> Result<Capture, DatasetError> {
    let meta = r
        .opt_object("eventMetadata")?
        .ok_or_else(|| r.err("eventMetadata", "required"))?;
    let time = match meta.get("inferenceTime") {
        Some(Value::String(s)) => s,
        Some(v) => {
            return Err(r.err(
                "eventMetadata.inferenceTime",
                format!("expected an ISO 8601 string, got {}", kind(v)),
            ));
        }
        None => return Err(r.err("eventMetadata.inferenceTime", "required")),
    };
    let timestamp_ms = iso8601_ms(time).ok_or_else(|| {
        r.err(
            "eventMetadata.inferenceTime",
            format!("{time:?} is not an ISO 8601 date-time"),
        )
    })?;
    let capture = r
        .opt_object("captureData")?
        .ok_or_else(|| r.err("captureData", "required"))?;
    let input = capture
        .get("endpointInput")
        .ok_or_else(|| r.err("captureData.endpointInput", "required"))?;
    let body = decode(r, "captureData.endpointInput", input)?;
    let Value::Object(body) = body else {
        return Err(r.err(
            "captureData.endpointInput.data",
            format!("expected a JSON object, got {}", kind(&body)),
        ));
    };
    let inner = r.nested("captureData.endpointInput.data.".into(), &body);
    let Some(Value::Array(ms)) = inner.get("messages") else {
        return Err(inner.err(
            "messages",
            "required: only OpenAI-compatible chat requests can be replayed",
        ));
    };
    check_messages(&inner, "messages", ms)?;
    let tools = match inner.get("tools") {
        None => None,
        Some(t @ Value::Array(_)) => Some(t.clone()),
        Some(v) => {
            return Err(inner.err("tools", format!("expected a list, got {}", kind(v))));
        }
    };
    let max_tokens = match inner.opt_u64("max_tokens")? {
        Some(n) => Some(n),
        None => inner.opt_u64("max_completion_tokens")?,
    };
    Ok(Capture {
        timestamp_ms,
        prompt_tokens: prompt_tokens(r, capture),
        turn: TurnSpec {
            messages: Some(ms.clone()),
            tools,
            max_tokens,
            origin: Some((r.file.to_string(), r.line.unwrap_or(0))),
            ..Default::default()
        },
    })
}

/// Checks the capture records of one text without building turns; the record count.
pub(crate) fn check_text(file: &str, text: &str) -> Result<usize, DatasetError> {
    let rows = parse_jsonl(file, text)?;
    for (no, obj) in &rows {
        parse_record(&Row::new(file, *no, obj))?;
    }
    Ok(rows.len())
}

pub(crate) fn jsonl_files(dir: &Path, out: &mut Vec<PathBuf>) -> Result<(), DatasetError> {
    let entries = std::fs::read_dir(dir)
        .map_err(|e| DatasetError::file(dir.display().to_string(), format!("cannot read: {e}")))?;
    for entry in entries.flatten() {
        let p = entry.path();
        if p.is_dir() {
            jsonl_files(&p, out)?;
        } else if p.extension().is_some_and(|e| e == "jsonl") {
            out.push(p);
        }
    }
    Ok(())
}

/// Reads every capture record (a file, or all `*.jsonl` under a directory in path order),
/// shifts the times so the earliest is 0, and orders the requests by time (ties keep read
/// order). Each request is its own session; one without an output limit takes `--osl`.
/// `--synthesis-*` applies as AIPerf applies it to captures (docs/datasets.md).
pub(crate) fn load(path: &Path, plan: &RunPlan, seed: u64) -> Result<Vec<Conv>, WorkloadError> {
    let files = if path.is_dir() {
        let mut v = Vec::new();
        jsonl_files(path, &mut v)?;
        v.sort();
        if v.is_empty() {
            return Err(DatasetError::file(
                path.display().to_string(),
                "no .jsonl files in this directory",
            )
            .into());
        }
        v
    } else {
        vec![path.to_path_buf()]
    };
    let mut caps = Vec::new();
    for f in &files {
        let file = f.display().to_string();
        let text = read_text(f)?;
        for (no, obj) in parse_jsonl(&file, &text)? {
            caps.push(parse_record(&Row::new(&file, no, &obj))?);
        }
    }
    let first = caps
        .iter()
        .map(|c| c.timestamp_ms)
        .fold(f64::INFINITY, f64::min);
    for c in caps.iter_mut() {
        c.timestamp_ms -= first;
    }
    // AIPerf's pipeline: the max-ISL filter on the zero-aligned captures, time order, then
    // its synthesizer (no hash ids here: the speed-up, the output multiplier and the ISL
    // cap), then the max-OSL cap on recorded outputs.
    let syn = &plan.dataset.replay.synthesis;
    caps.retain(|c| super::synthesis::keep_row(syn, c.prompt_tokens));
    caps.sort_by(|a, b| a.timestamp_ms.total_cmp(&b.timestamp_ms));
    if syn.transforms() {
        let mut rows: Vec<super::synthesis::SynthRow> = caps
            .iter()
            .map(|c| super::synthesis::SynthRow {
                hash_ids: None,
                input_length: c.prompt_tokens,
                timestamp_ms: Some(c.timestamp_ms),
                output_length: c.turn.max_tokens,
            })
            .collect();
        let mut rng = crate::synthetic::rng_for(seed, super::purpose::SYNTHESIS);
        // No hash ids: nothing can be shorter than its prefix, so no row error.
        super::synthesis::synthesize(&mut rows, syn, 1, &mut rng)
            .map_err(|(_, m)| DatasetError::file(path.display().to_string(), m))?;
        for (c, r) in caps.iter_mut().zip(rows) {
            c.timestamp_ms = r.timestamp_ms.unwrap_or(c.timestamp_ms);
            c.turn.max_tokens = r.output_length;
        }
    }
    for c in caps.iter_mut() {
        c.turn.max_tokens = super::synthesis::cap_output(syn, c.turn.max_tokens);
    }
    let mut osl = OslDraws::new(plan, seed)?;
    Ok(caps
        .into_iter()
        .enumerate()
        .map(|(i, c)| {
            let mut turn = c.turn;
            turn.timestamp_ms = Some(c.timestamp_ms);
            if turn.max_tokens.is_none() {
                turn.max_tokens = osl.next();
            }
            Conv {
                id: session_id(i),
                history: false,
                turns: vec![turn],
            }
        })
        .collect())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn iso_times_by_hand() {
        // 2026-04-29T00:03:18Z: AIPerf's own example, 1777420998000 ms.
        assert_eq!(
            iso8601_ms("2026-04-29T00:03:18Z"),
            Some(1_777_420_998_000.0)
        );
        assert_eq!(iso8601_ms("1970-01-01T00:00:00Z"), Some(0.0));
        // One hour east of UTC is one hour earlier in UTC.
        assert_eq!(iso8601_ms("1970-01-01T01:00:00+01:00"), Some(0.0));
        assert_eq!(iso8601_ms("1970-01-01 00:00:01.250"), Some(1250.0));
        assert_eq!(iso8601_ms("2000-03-01T00:00"), Some(951_868_800_000.0));
        assert_eq!(iso8601_ms("2026-13-01T00:00:00Z"), None);
        assert_eq!(iso8601_ms("yesterday"), None);
    }

    #[test]
    fn base64_by_hand() {
        assert_eq!(base64_decode("aGk=").unwrap(), b"hi");
        assert_eq!(base64_decode("aGk").unwrap(), b"hi");
        assert_eq!(base64_decode("eyJhIjoxfQ==").unwrap(), b"{\"a\":1}");
        assert!(base64_decode("a*b").is_none());
        assert!(base64_decode("aG=k").is_none());
    }
}
