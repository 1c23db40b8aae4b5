//! The two per-request files of an AIPerf run, line by line:
//! `profile_export.jsonl` (`{metadata, metrics, error?}`) and `profile_export_raw.jsonl`
//! (`{metadata, start_perf_ns, status, responses, payload, error?}`).

use std::borrow::Cow;
use std::io::BufRead;
use std::path::Path;

use inferbench_core::Phase;
use inferbench_core::summary::{RecordMetric, RecordMetricValue};
use serde_json::{Map, Value};

use super::json::{At, found, get, object, opt_bool, opt_str, opt_u64, req_u64};
use crate::ImportError;

/// AIPerf's `MetricRecordMetadata`: the part both files share. Times are wall-clock ns.
#[derive(Clone, Debug)]
pub(super) struct Meta {
    pub request_id: String,
    pub correlation_id: String,
    pub conversation_id: String,
    pub session_num: u64,
    pub turn_index: u32,
    pub credit_ns: Option<u64>,
    pub start_ns: u64,
    pub ack_ns: Option<u64>,
    pub end_ns: u64,
    pub worker: String,
    pub phase: Phase,
    pub cancelled: bool,
    pub cancel_ns: Option<u64>,
}

/// AIPerf's `ErrorDetails` (its `cause` and `cause_chain` are not kept).
#[derive(Clone, Debug)]
pub(super) struct ErrorIn {
    pub code: Option<u16>,
    pub error_type: String,
    pub message: String,
}

/// One line of `profile_export.jsonl`.
#[derive(Clone, Debug)]
pub(super) struct MetricsLine {
    pub line: usize,
    pub meta: Meta,
    pub metrics: Vec<RecordMetric>,
    pub error: Option<ErrorIn>,
}

/// One response of a raw line: an SSE message (its `event` and joined `data` fields) or a
/// whole body.
#[derive(Clone, Debug)]
pub(super) enum RawResponse {
    Sse {
        perf_ns: u64,
        event: Option<String>,
        data: Option<String>,
    },
    Text {
        perf_ns: u64,
        text: String,
    },
}

/// One line of `profile_export_raw.jsonl`.
#[derive(Clone, Debug)]
pub(super) struct RawLine {
    pub line: usize,
    pub meta: Meta,
    pub start_perf_ns: u64,
    pub status: Option<u16>,
    pub responses: Vec<RawResponse>,
    pub payload: Option<Value>,
    pub error: Option<ErrorIn>,
    /// The `User-Agent` sent (`aiperf/0.13.0`), which names the version.
    pub user_agent: Option<String>,
}

/// Reads a JSON Lines file: one parsed object per non-blank line, with its 1-based number.
/// A last line cut short (no newline at the end, not valid JSON) is dropped and reported, as
/// a run killed mid-write leaves it; any other bad line is an error naming its number.
pub(super) fn read_json_lines(
    path: &Path,
    mut each: impl FnMut(usize, Value) -> Result<(), ImportError>,
) -> Result<bool, ImportError> {
    let file = std::fs::File::open(path).map_err(|e| ImportError::Io {
        path: path.to_path_buf(),
        message: e.to_string(),
    })?;
    let mut reader = std::io::BufReader::new(file);
    let mut buf = Vec::new();
    let mut n = 0usize;
    loop {
        buf.clear();
        let read = reader
            .read_until(b'\n', &mut buf)
            .map_err(|e| ImportError::Io {
                path: path.to_path_buf(),
                message: e.to_string(),
            })?;
        if read == 0 {
            return Ok(false);
        }
        n += 1;
        let complete = buf.last() == Some(&b'\n');
        let text = match std::str::from_utf8(&buf) {
            Ok(t) => t,
            Err(_) if !complete => return Ok(true),
            Err(e) => return Err(At::line(path, n).err("", format!("not UTF-8: {e}"))),
        };
        if text.trim().is_empty() {
            continue;
        }
        let value: Value = match serde_json::from_str(text) {
            Ok(v) => v,
            Err(_) if !complete => return Ok(true),
            Err(e) => return Err(At::line(path, n).err("", format!("not a JSON object: {e}"))),
        };
        each(n, value)?;
    }
}

fn meta(at: At<'_>, line: &Map<String, Value>) -> Result<Meta, ImportError> {
    let m = object(
        at,
        get(line, "metadata").ok_or_else(|| at.err("metadata", "missing"))?,
        "metadata",
    )?;
    const P: &str = "metadata";
    let s = |key: &str| -> Result<String, ImportError> {
        Ok(opt_str(at, m, P, key)?.unwrap_or_default().to_string())
    };
    let phase = match opt_str(at, m, P, "benchmark_phase")? {
        None | Some("profiling") => Phase::Profiling,
        Some("warmup") => Phase::Warmup,
        Some(other) => {
            return Err(at.err(
                "metadata.benchmark_phase",
                format!("expected \"warmup\" or \"profiling\", found {other:?}"),
            ));
        }
    };
    let turn_index = opt_u64(at, m, P, "turn_index")?.unwrap_or(0);
    Ok(Meta {
        request_id: s("x_request_id")?,
        correlation_id: s("x_correlation_id")?,
        conversation_id: s("conversation_id")?,
        session_num: opt_u64(at, m, P, "session_num")?.unwrap_or(0),
        turn_index: u32::try_from(turn_index)
            .map_err(|_| at.err("metadata.turn_index", "too large"))?,
        credit_ns: opt_u64(at, m, P, "credit_issued_ns")?,
        start_ns: req_u64(at, m, P, "request_start_ns")?,
        ack_ns: opt_u64(at, m, P, "request_ack_ns")?,
        end_ns: req_u64(at, m, P, "request_end_ns")?,
        worker: s("worker_id")?,
        phase,
        cancelled: opt_bool(at, m, P, "was_cancelled")?.unwrap_or(false),
        cancel_ns: opt_u64(at, m, P, "cancellation_time_ns")?,
    })
}

fn error(at: At<'_>, line: &Map<String, Value>) -> Result<Option<ErrorIn>, ImportError> {
    let Some(e) = get(line, "error") else {
        return Ok(None);
    };
    let e = object(at, e, "error")?;
    let code = match opt_u64(at, e, "error", "code")? {
        None => None,
        Some(c) => Some(
            u16::try_from(c).map_err(|_| at.err("error.code", format!("{c} is not a status")))?,
        ),
    };
    Ok(Some(ErrorIn {
        code,
        error_type: opt_str(at, e, "error", "type")?
            .unwrap_or("Error")
            .to_string(),
        message: opt_str(at, e, "error", "message")?
            .unwrap_or_default()
            .to_string(),
    }))
}

fn top(at: At<'_>, v: Value) -> Result<Map<String, Value>, ImportError> {
    match v {
        Value::Object(o) => Ok(o),
        other => Err(at.err(
            "",
            format!("expected a JSON object, found {}", found(&other)),
        )),
    }
}

/// Parses one `profile_export.jsonl` line.
pub(super) fn metrics_line(path: &Path, n: usize, v: Value) -> Result<MetricsLine, ImportError> {
    let at = At::line(path, n);
    let line = top(at, v)?;
    let mut metrics = Vec::new();
    if let Some(ms) = get(&line, "metrics") {
        for (tag, entry) in object(at, ms, "metrics")? {
            let field = format!("metrics.{tag}");
            let entry = object(at, entry, &field)?;
            let unit = opt_str(at, entry, &field, "unit")?.unwrap_or_default();
            let value = match get(entry, "value") {
                None => continue,
                Some(v) => metric_value(at, &field, v)?,
            };
            metrics.push(RecordMetric {
                tag: Cow::Owned(tag.clone()),
                unit: Cow::Owned(unit.to_string()),
                value,
            });
        }
    }
    Ok(MetricsLine {
        line: n,
        meta: meta(at, &line)?,
        metrics,
        error: error(at, &line)?,
    })
}

fn metric_value(at: At<'_>, field: &str, v: &Value) -> Result<RecordMetricValue, ImportError> {
    let bad = || {
        at.err(
            &format!("{field}.value"),
            format!("expected a number or a list of numbers, found {}", found(v)),
        )
    };
    match v {
        Value::Number(n) => Ok(match n.as_i64() {
            Some(i) => RecordMetricValue::Int(i),
            None => RecordMetricValue::Float(n.as_f64().ok_or_else(bad)?),
        }),
        Value::Array(items) => items
            .iter()
            .map(|x| x.as_f64().ok_or_else(bad))
            .collect::<Result<Vec<f64>, _>>()
            .map(RecordMetricValue::List),
        _ => Err(bad()),
    }
}

/// Parses one `profile_export_raw.jsonl` line.
pub(super) fn raw_line(path: &Path, n: usize, v: Value) -> Result<RawLine, ImportError> {
    let at = At::line(path, n);
    let mut line = top(at, v)?;
    let status = match opt_u64(at, &line, "", "status")? {
        None => None,
        Some(s) => {
            Some(u16::try_from(s).map_err(|_| at.err("status", format!("{s} is not a status")))?)
        }
    };
    let mut responses = Vec::new();
    if let Some(rs) = get(&line, "responses") {
        let rs = rs
            .as_array()
            .ok_or_else(|| at.err("responses", format!("expected a list, found {}", found(rs))))?;
        for (i, r) in rs.iter().enumerate() {
            let field = format!("responses[{i}]");
            let r = object(at, r, &field)?;
            let perf_ns = req_u64(at, r, &field, "perf_ns")?;
            if let Some(packets) = get(r, "packets") {
                let packets = packets.as_array().ok_or_else(|| {
                    at.err(
                        &format!("{field}.packets"),
                        format!("expected a list, found {}", found(packets)),
                    )
                })?;
                let (mut event, mut data): (Option<String>, Option<String>) = (None, None);
                for (j, p) in packets.iter().enumerate() {
                    let pf = format!("{field}.packets[{j}]");
                    let p = object(at, p, &pf)?;
                    let name = opt_str(at, p, &pf, "name")?.unwrap_or_default();
                    let value = opt_str(at, p, &pf, "value")?.unwrap_or_default();
                    match name {
                        "event" => event = Some(value.to_string()),
                        // SSE joins the data fields of one message with newlines.
                        "data" => match &mut data {
                            Some(d) => {
                                d.push('\n');
                                d.push_str(value);
                            }
                            None => data = Some(value.to_string()),
                        },
                        _ => {}
                    }
                }
                responses.push(RawResponse::Sse {
                    perf_ns,
                    event,
                    data,
                });
            } else if let Some(text) = opt_str(at, r, &field, "text")? {
                responses.push(RawResponse::Text {
                    perf_ns,
                    text: text.to_string(),
                });
            } else {
                return Err(at.err(&field, "neither packets nor text"));
            }
        }
    }
    Ok(RawLine {
        line: n,
        meta: meta(at, &line)?,
        start_perf_ns: req_u64(at, &line, "", "start_perf_ns")?,
        status,
        responses,
        error: error(at, &line)?,
        user_agent: line
            .get("request_headers")
            .and_then(|h| h.get("User-Agent"))
            .and_then(Value::as_str)
            .map(str::to_string),
        payload: line.remove("payload").filter(|p| !p.is_null()),
    })
}
