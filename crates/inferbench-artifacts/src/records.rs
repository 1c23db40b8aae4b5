//! `profile_export.jsonl`: one AIPerf `MetricRecordInfo` line per request of a phase.

use std::collections::HashMap;
use std::io::Write;
use std::path::{Path, PathBuf};

use inferbench_core::summary::{RecordMetric, RecordMetricValue};
use inferbench_core::{Evidence, Phase, Record};
use serde::Serialize;
use serde::ser::Serializer;

use crate::atomic::AtomicFile;
use crate::json_out::{
    field_bool, field_int, field_str, float, int, key, opt_int, opt_serde, opt_str, string,
    via_serde,
};
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

impl Metadata<'_> {
    /// The object as serde writes it (tested), by hand: it is written once per request.
    fn write_json(&self, out: &mut Vec<u8>) {
        let Metadata {
            session_num,
            x_request_id,
            x_correlation_id,
            conversation_id,
            turn_index,
            credit_issued_ns,
            request_start_ns,
            request_ack_ns,
            request_end_ns,
            worker_id,
            record_processor_id,
            benchmark_phase,
            phase_index,
            profiling_index,
            phase_name,
            phase_kind,
            was_cancelled,
            cancellation_time_ns,
            context_overflow_skip,
            agent_depth,
            parent_correlation_id,
            root_correlation_id,
        } = self;
        key(out, true, "session_num");
        int(out, *session_num);
        field_str(out, "x_request_id", x_request_id);
        field_str(out, "x_correlation_id", x_correlation_id);
        field_str(out, "conversation_id", conversation_id);
        field_int(out, "turn_index", *turn_index);
        field_int(out, "credit_issued_ns", *credit_issued_ns);
        field_int(out, "request_start_ns", *request_start_ns);
        opt_int(out, "request_ack_ns", *request_ack_ns);
        field_int(out, "request_end_ns", *request_end_ns);
        key(out, false, "worker_id");
        out.extend_from_slice(b"\"worker_");
        int(out, worker_id.0);
        out.push(b'"');
        field_str(out, "record_processor_id", record_processor_id);
        field_str(out, "benchmark_phase", benchmark_phase);
        field_int(out, "phase_index", *phase_index);
        opt_int(out, "profiling_index", *profiling_index);
        field_str(out, "phase_name", phase_name);
        field_str(out, "phase_kind", phase_kind);
        field_bool(out, "was_cancelled", *was_cancelled);
        opt_int(out, "cancellation_time_ns", *cancellation_time_ns);
        field_bool(out, "context_overflow_skip", *context_overflow_skip);
        field_int(out, "agent_depth", *agent_depth);
        opt_str(out, "parent_correlation_id", *parent_correlation_id);
        field_str(out, "root_correlation_id", root_correlation_id);
    }
}

/// `{tag: {"value": v, "unit": u}, ...}` in the given order, as serde writes the map (an
/// `Int` as an integer, a `Float` as serde's float, a `List` as an array of them).
fn write_metrics(out: &mut Vec<u8>, metrics: &[RecordMetric]) {
    out.push(b'{');
    for (i, rm) in metrics.iter().enumerate() {
        if i > 0 {
            out.push(b',');
        }
        // A tag is a metric name from our own tables, but it is escaped like any string.
        string(out, &rm.tag);
        out.extend_from_slice(b":{\"value\":");
        match &rm.value {
            RecordMetricValue::Int(v) => int(out, *v),
            RecordMetricValue::Float(v) => float(out, *v),
            RecordMetricValue::List(vs) => {
                out.push(b'[');
                for (j, v) in vs.iter().enumerate() {
                    if j > 0 {
                        out.push(b',');
                    }
                    float(out, *v);
                }
                out.push(b']');
            }
        }
        out.extend_from_slice(b",\"unit\":");
        string(out, &rm.unit);
        out.push(b'}');
    }
    out.push(b'}');
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
/// (`--export-http-trace`, see [`crate::http_trace`]). Written by hand, once per request:
/// the same bytes as serde's `{metadata, metrics, trace_data?, error?}` (tested).
pub fn render_record_line_traced(
    out: &mut Vec<u8>,
    anchor_unix_ns: u64,
    idx: PhaseIndices,
    record: &Record,
    metrics: &[RecordMetric],
    http_trace: bool,
) {
    out.extend_from_slice(b"{\"metadata\":{");
    Metadata::new(anchor_unix_ns, idx, record).write_json(out);
    out.extend_from_slice(b"},\"metrics\":");
    write_metrics(out, metrics);
    if http_trace && let Some(t) = crate::http_trace::trace_data(anchor_unix_ns, record) {
        key(out, false, "trace_data");
        via_serde(out, &t);
    }
    opt_serde(out, "error", ErrorOut::of(record).as_ref());
    out.extend_from_slice(b"}\n");
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

#[cfg(test)]
mod tests {
    use super::*;
    use inferbench_core::record::RecordError;
    use proptest::option::of;
    use proptest::prelude::*;
    use serde::ser::SerializeMap;

    /// The serde form the hand-written line must equal, as the line was written before.
    #[derive(Serialize)]
    struct RecordLine<'a> {
        metadata: Metadata<'a>,
        metrics: MetricsRef<'a>,
        #[serde(skip_serializing_if = "Option::is_none")]
        trace_data: Option<serde_json::Value>,
        #[serde(skip_serializing_if = "Option::is_none")]
        error: Option<ErrorOut<'a>>,
    }

    struct MetricsRef<'a>(&'a [RecordMetric]);

    impl Serialize for MetricsRef<'_> {
        fn serialize<S: Serializer>(&self, s: S) -> std::result::Result<S::Ok, S::Error> {
            #[derive(Serialize)]
            struct Entry<'a> {
                value: &'a RecordMetricValue,
                unit: &'a str,
            }
            let mut m = s.serialize_map(Some(self.0.len()))?;
            for rm in self.0 {
                m.serialize_entry(
                    &rm.tag,
                    &Entry {
                        value: &rm.value,
                        unit: &rm.unit,
                    },
                )?;
            }
            m.end()
        }
    }

    fn by_serde(
        anchor: u64,
        idx: PhaseIndices,
        r: &Record,
        m: &[RecordMetric],
        trace: bool,
    ) -> String {
        let line = RecordLine {
            metadata: Metadata::new(anchor, idx, r),
            metrics: MetricsRef(m),
            trace_data: trace
                .then(|| crate::http_trace::trace_data(anchor, r))
                .flatten(),
            error: ErrorOut::of(r),
        };
        serde_json::to_string(&line).unwrap() + "\n"
    }

    fn by_hand(
        anchor: u64,
        idx: PhaseIndices,
        r: &Record,
        m: &[RecordMetric],
        trace: bool,
    ) -> String {
        let mut out = Vec::new();
        render_record_line_traced(&mut out, anchor, idx, r, m, trace);
        String::from_utf8(out).unwrap()
    }

    fn text() -> impl Strategy<Value = String> {
        prop_oneof![any::<String>(), "[ a-z_\"\\\\\\n\\x01]{0,10}"]
    }

    fn metric() -> impl Strategy<Value = RecordMetric> {
        let value = prop_oneof![
            any::<i64>().prop_map(RecordMetricValue::Int),
            any::<f64>().prop_map(RecordMetricValue::Float),
            proptest::collection::vec(any::<f64>(), 0..4).prop_map(RecordMetricValue::List),
        ];
        (text(), value, text()).prop_map(|(tag, value, unit)| RecordMetric {
            tag: tag.into(),
            value,
            unit: unit.into(),
        })
    }

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(512))]

        #[test]
        fn any_line_is_serdes_line(
            (session_num, turn_index, worker, agent_depth) in (any::<u64>(), any::<u32>(), any::<u32>(), any::<u32>()),
            (request_id, correlation_id, conversation_id) in (text(), text(), text()),
            (planned, start, end) in (0u64..1 << 60, 0u64..1 << 60, 0u64..1 << 60),
            (ack, cancel, cancelled) in (of(0u64..1 << 60), of(0u64..1 << 60), any::<bool>()),
            (parent, root) in (of(text()), of(text())),
            (error, trace, warmup) in (of((of(any::<u16>()), text(), text())), any::<bool>(), any::<bool>()),
            metrics in proptest::collection::vec(metric(), 0..5),
            anchor in 0u64..1 << 62,
        ) {
            let r = Record {
                session_num,
                turn_index,
                worker,
                agent_depth,
                request_id,
                correlation_id,
                conversation_id,
                planned_ns: planned,
                start_ns: start,
                end_ns: end,
                ack_ns: ack,
                cancel_ns: cancel,
                cancelled,
                parent_correlation_id: parent,
                root_correlation_id: root,
                error: error.map(|(code, error_type, message)| RecordError {
                    kind: inferbench_core::ErrorKind::Http,
                    code,
                    error_type,
                    message,
                }),
                connection: trace.then(|| inferbench_core::record::ConnectionEvidence {
                    reused: true,
                    send_start_ns: Some(start),
                    ..Default::default()
                }),
                sent_ns: Some(start),
                ..Default::default()
            };
            let idx = if warmup {
                PhaseIndices { phase: Phase::Warmup, phase_index: 0, profiling_index: None }
            } else {
                PhaseIndices { phase: Phase::Profiling, phase_index: 1, profiling_index: Some(0) }
            };
            prop_assert_eq!(
                by_hand(anchor, idx, &r, &metrics, trace),
                by_serde(anchor, idx, &r, &metrics, trace)
            );
        }
    }
}
