//! `profile_export.jsonl`: one AIPerf `MetricRecordInfo` line per request of a phase.

use std::collections::HashMap;
use std::io::Write;
use std::path::{Path, PathBuf};

use inferbench_core::summary::{RecordMetric, RecordMetricValue};
use inferbench_core::{Evidence, Phase, Record};
use serde::Serialize;
use serde::ser::{SerializeMap, Serializer};

use crate::atomic::AtomicFile;
use crate::{ArtifactError, Result};

/// The only record processor we have; AIPerf names its processes `record_processor_<hex>`.
const RECORD_PROCESSOR_ID: &str = "record_processor_0";

/// AIPerf's phase numbering: phases count from 0 in run order (warmup first when there is one),
/// and `profiling_index` counts profiling phases only (absent on warmup records).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct PhaseIndices {
    pub phase: Phase,
    pub phase_index: u32,
    pub profiling_index: Option<u32>,
}

impl PhaseIndices {
    pub fn for_phase(evidence: &Evidence, phase: Phase) -> Self {
        let has_warmup = evidence.phases.iter().any(|w| w.phase == Phase::Warmup)
            || evidence.records_of(Phase::Warmup).next().is_some();
        match phase {
            Phase::Warmup => PhaseIndices {
                phase,
                phase_index: 0,
                profiling_index: None,
            },
            Phase::Profiling => PhaseIndices {
                phase,
                phase_index: u32::from(has_warmup),
                profiling_index: Some(0),
            },
        }
    }
}

/// `worker_<n>`, serialized without an intermediate `String`.
struct WorkerId(u32);

impl Serialize for WorkerId {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        s.collect_str(&format_args!("worker_{}", self.0))
    }
}

/// AIPerf's `MetricRecordMetadata`, in its key order; `None` keys are left out as AIPerf does.
#[derive(Serialize)]
pub(crate) struct Metadata<'a> {
    session_num: u64,
    x_request_id: &'a str,
    x_correlation_id: &'a str,
    conversation_id: &'a str,
    turn_index: u32,
    credit_issued_ns: u64,
    request_start_ns: u64,
    #[serde(skip_serializing_if = "Option::is_none")]
    request_ack_ns: Option<u64>,
    request_end_ns: u64,
    worker_id: WorkerId,
    record_processor_id: &'static str,
    benchmark_phase: &'static str,
    phase_index: u32,
    #[serde(skip_serializing_if = "Option::is_none")]
    profiling_index: Option<u32>,
    phase_name: &'static str,
    phase_kind: &'static str,
    was_cancelled: bool,
    #[serde(skip_serializing_if = "Option::is_none")]
    cancellation_time_ns: Option<u64>,
    context_overflow_skip: bool,
    agent_depth: u32,
    #[serde(skip_serializing_if = "Option::is_none")]
    parent_correlation_id: Option<&'a str>,
    root_correlation_id: &'a str,
}

impl<'a> Metadata<'a> {
    /// Times become wall clock: `anchor_unix_ns + t_ns`. The credit is issued when the
    /// schedule meant the request to go (`planned_ns`), so AIPerf's
    /// `credit_to_start_latency = request_start_ns − credit_issued_ns` is the queue wait.
    pub(crate) fn new(anchor_unix_ns: u64, idx: PhaseIndices, r: &'a Record) -> Self {
        let wall = |t: u64| anchor_unix_ns + t;
        Metadata {
            session_num: r.session_num,
            x_request_id: &r.request_id,
            x_correlation_id: &r.correlation_id,
            conversation_id: &r.conversation_id,
            turn_index: r.turn_index,
            credit_issued_ns: wall(r.planned_ns),
            request_start_ns: wall(r.start_ns),
            request_ack_ns: r.ack_ns.map(wall),
            request_end_ns: wall(r.end_ns),
            worker_id: WorkerId(r.worker),
            record_processor_id: RECORD_PROCESSOR_ID,
            benchmark_phase: idx.phase.as_str(),
            phase_index: idx.phase_index,
            profiling_index: idx.profiling_index,
            phase_name: idx.phase.as_str(),
            phase_kind: idx.phase.as_str(),
            was_cancelled: r.cancelled,
            cancellation_time_ns: if r.cancelled {
                r.cancel_ns.map(wall)
            } else {
                None
            },
            context_overflow_skip: false,
            // A child session names its parent and its tree's root (AIPerf's fields); a
            // root is its own root.
            agent_depth: r.agent_depth,
            parent_correlation_id: r.parent_correlation_id.as_deref(),
            root_correlation_id: r
                .root_correlation_id
                .as_deref()
                .unwrap_or(&r.correlation_id),
        }
    }
}

/// AIPerf's `ErrorDetails` as it serializes it: `null` fields (`code`, `cause`,
/// `cause_chain`, `details`) are left out. We have no cause chain, so only code/type/message.
#[derive(Serialize)]
pub(crate) struct ErrorOut<'a> {
    #[serde(skip_serializing_if = "Option::is_none")]
    code: Option<u16>,
    #[serde(rename = "type")]
    error_type: &'a str,
    message: &'a str,
}

impl<'a> ErrorOut<'a> {
    pub(crate) fn of(r: &'a Record) -> Option<Self> {
        r.error.as_ref().map(|e| ErrorOut {
            code: e.code,
            error_type: &e.error_type,
            message: &e.message,
        })
    }
}

#[derive(Serialize)]
struct MetricEntry<'a> {
    value: &'a RecordMetricValue,
    unit: &'a str,
}

/// `{tag: {"value": v, "unit": u}, ...}` in the given order.
struct MetricsRef<'a>(&'a [RecordMetric]);

impl Serialize for MetricsRef<'_> {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        let mut m = s.serialize_map(Some(self.0.len()))?;
        for rm in self.0 {
            m.serialize_entry(
                &rm.tag,
                &MetricEntry {
                    value: &rm.value,
                    unit: &rm.unit,
                },
            )?;
        }
        m.end()
    }
}

#[derive(Serialize)]
struct RecordLine<'a> {
    metadata: Metadata<'a>,
    metrics: MetricsRef<'a>,
    #[serde(skip_serializing_if = "Option::is_none")]
    trace_data: Option<serde_json::Value>,
    #[serde(skip_serializing_if = "Option::is_none")]
    error: Option<ErrorOut<'a>>,
}

/// Append one `profile_export.jsonl` line (with its `\n`) for `record` to `out`.
pub fn render_record_line(
    out: &mut Vec<u8>,
    anchor_unix_ns: u64,
    idx: PhaseIndices,
    record: &Record,
    metrics: &[RecordMetric],
) {
    render_record_line_traced(out, anchor_unix_ns, idx, record, metrics, false)
}

/// [`render_record_line`], with AIPerf's `trace_data` when `http_trace`
/// (`--export-http-trace`, see [`crate::http_trace`]).
pub fn render_record_line_traced(
    out: &mut Vec<u8>,
    anchor_unix_ns: u64,
    idx: PhaseIndices,
    record: &Record,
    metrics: &[RecordMetric],
    http_trace: bool,
) {
    let line = RecordLine {
        metadata: Metadata::new(anchor_unix_ns, idx, record),
        metrics: MetricsRef(metrics),
        trace_data: http_trace
            .then(|| crate::http_trace::trace_data(anchor_unix_ns, record))
            .flatten(),
        error: ErrorOut::of(record),
    };
    // Writing into a Vec cannot fail, and every key is a string.
    serde_json::to_writer(&mut *out, &line).expect("serializing a record line to memory");
    out.push(b'\n');
}

/// Write `dir/name` (`profile_export.jsonl`): one line per record of `phase`, in evidence
/// order. `metrics` holds each record's per-record metrics by record id; a record without an
/// entry gets `"metrics":{}`.
pub fn write_records_jsonl(
    dir: &Path,
    name: &str,
    evidence: &Evidence,
    phase: Phase,
    metrics: &[(u64, Vec<RecordMetric>)],
) -> Result<PathBuf> {
    let by_id: HashMap<u64, &[RecordMetric]> =
        metrics.iter().map(|(id, m)| (*id, m.as_slice())).collect();
    let idx = PhaseIndices::for_phase(evidence, phase);
    let anchor = evidence.header.anchor_unix_ns;
    let mut f = AtomicFile::create(dir, name)?;
    let path = f.path().to_path_buf();
    let mut line = Vec::with_capacity(4096);
    for r in evidence.records_of(phase) {
        line.clear();
        render_record_line(
            &mut line,
            anchor,
            idx,
            r,
            by_id.get(&r.id).copied().unwrap_or(&[]),
        );
        f.writer()
            .write_all(&line)
            .map_err(|e| ArtifactError::io(&path, e))?;
    }
    f.commit()
}
