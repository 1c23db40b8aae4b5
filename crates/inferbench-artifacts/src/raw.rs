//! `profile_export_raw.jsonl` (`--export-level raw`): each request as sent and each response
//! message as received, in AIPerf's `RawRecordInfo` shape.

use std::io::Write;
use std::path::{Path, PathBuf};

use inferbench_core::plan::{REDACTED, is_sensitive_header};
use inferbench_core::record::EventKind;
use inferbench_core::workload::Workload;
use inferbench_core::{Event, Evidence, Phase, Record};
use serde::Serialize;
use serde::ser::{SerializeMap, Serializer};

use crate::atomic::AtomicFile;
use crate::records::{ErrorOut, Metadata, PhaseIndices};
use crate::{ArtifactError, Result};

/// Request headers in the order sent, values of sensitive names replaced by `<redacted>`.
struct Headers<'a>(&'a [(String, String)]);

impl Serialize for Headers<'_> {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        let mut m = s.serialize_map(Some(self.0.len()))?;
        for (k, v) in self.0 {
            let v = if is_sensitive_header(k) {
                REDACTED
            } else {
                v.as_str()
            };
            m.serialize_entry(k, v)?;
        }
        m.end()
    }
}

#[derive(Serialize)]
struct Packet<'a> {
    name: &'static str,
    value: &'a str,
}

#[derive(Serialize)]
#[serde(untagged)]
enum Response<'a> {
    /// One SSE message: its fields as packets (`data`, and `event` for error events).
    Sse {
        perf_ns: u64,
        packets: Vec<Packet<'a>>,
    },
    /// A whole non-streaming body.
    Text {
        perf_ns: u64,
        text: &'a str,
        content_type: &'static str,
    },
}

fn response(streaming: bool, e: &Event) -> Response<'_> {
    if !streaming || e.kind() == EventKind::Body {
        return Response::Text {
            perf_ns: e.t_ns,
            text: e.raw.as_deref().unwrap_or(""),
            content_type: "application/json",
        };
    }
    // Without `raw` (export level below raw) only the terminator can be restored exactly.
    let data = match (&e.raw, e.kind()) {
        (Some(raw), _) => Some(raw.as_str()),
        (None, EventKind::Done) => Some("[DONE]"),
        (None, _) => None,
    };
    let mut packets = Vec::with_capacity(2);
    if e.kind() == EventKind::Error {
        packets.push(Packet {
            name: "event",
            value: "error",
        });
    }
    if let Some(value) = data {
        packets.push(Packet {
            name: "data",
            value,
        });
    }
    Response::Sse {
        perf_ns: e.t_ns,
        packets,
    }
}

#[derive(Serialize)]
struct RawLine<'a> {
    metadata: Metadata<'a>,
    /// Monotonic ns (our run anchor is the origin; AIPerf's is `perf_counter_ns`).
    start_perf_ns: u64,
    request_headers: Headers<'a>,
    status: Option<u16>,
    responses: Vec<Response<'a>>,
    #[serde(skip_serializing_if = "Option::is_none")]
    error: Option<ErrorOut<'a>>,
}

/// Append one raw line (with `\n`) to `out`. `body` is the request body as sent; it is
/// spliced in verbatim as `payload` when it is JSON, else written as a JSON string.
pub fn render_raw_line(
    out: &mut Vec<u8>,
    anchor_unix_ns: u64,
    idx: PhaseIndices,
    record: &Record,
    headers: &[(String, String)],
    body: Option<&str>,
) {
    let line = RawLine {
        metadata: Metadata::new(anchor_unix_ns, idx, record),
        start_perf_ns: record.start_ns,
        request_headers: Headers(headers),
        status: record.status,
        responses: record
            .events
            .iter()
            .map(|e| response(record.streaming, e))
            .collect(),
        error: ErrorOut::of(record),
    };
    serde_json::to_writer(&mut *out, &line).expect("serializing a raw line to memory");
    // Splice the body in as is: re-serializing it through a Value could reorder or reformat
    // what actually went on the wire.
    debug_assert_eq!(out.last(), Some(&b'}'));
    out.pop();
    out.extend_from_slice(b",\"payload\":");
    match body {
        Some(b) if serde_json::from_str::<serde::de::IgnoredAny>(b).is_ok() => {
            out.extend_from_slice(b.trim().as_bytes())
        }
        Some(b) => serde_json::to_writer(&mut *out, b).expect("a string serializes"),
        None => out.extend_from_slice(b"null"),
    }
    out.extend_from_slice(b"}\n");
}

/// Write `dir/name` (`profile_export_raw.jsonl`) for the records of `phase`. `headers` gives
/// the headers sent with a record (sensitive values are redacted here); the payload is the
/// record's body in `workload` (`payload_index`).
pub fn write_raw_jsonl(
    dir: &Path,
    name: &str,
    evidence: &Evidence,
    phase: Phase,
    workload: &Workload,
    headers: &dyn Fn(&Record) -> Vec<(String, String)>,
) -> Result<PathBuf> {
    let idx = PhaseIndices::for_phase(evidence, phase);
    let anchor = evidence.header.anchor_unix_ns;
    let mut f = AtomicFile::create(dir, name)?;
    let path = f.path().to_path_buf();
    let mut line = Vec::with_capacity(16 * 1024);
    for r in evidence.records_of(phase) {
        line.clear();
        // The body as sent: the record keeps it when it was not the payload's.
        let body = r.sent_body.as_deref().or_else(|| {
            usize::try_from(r.payload_index)
                .ok()
                .and_then(|i| workload.payloads.get(i))
                .map(|p| p.body.as_str())
        });
        render_raw_line(&mut line, anchor, idx, r, &headers(r), body);
        f.writer()
            .write_all(&line)
            .map_err(|e| ArtifactError::io(&path, e))?;
    }
    f.commit()
}
