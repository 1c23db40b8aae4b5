//! `outputs.json` (`--export-outputs-json`): AIPerf's file of every profiling response's text,
//! `{"schema_version": "1.0", "data": [...]}`, one entry per profiling record in
//! (session_num, turn_index) order, with three of the record's metrics in display units.

use inferbench_core::Record;
use inferbench_core::summary::RecordMetric;
use serde::Serialize;

/// The file's name (AIPerf's `outputs_json_file`).
pub const OUTPUTS_JSON: &str = "outputs.json";

/// The per-record metrics AIPerf copies into the file, in its order.
pub const OUTPUT_METRICS: [&str; 3] = [
    "output_token_count",
    "output_sequence_length",
    "request_latency",
];

/// One response, in AIPerf's key order.
#[derive(Serialize, Clone, Debug, PartialEq)]
pub struct OutputEntry {
    pub session_num: u64,
    pub conversation_id: String,
    pub turn_index: u32,
    pub x_request_id: String,
    /// Wall clock, ns (as `profile_export.jsonl`'s metadata).
    pub request_start_ns: u64,
    pub request_end_ns: u64,
    /// `{tag: value}` for those of [`OUTPUT_METRICS`] the record has, in display units.
    pub metrics: serde_json::Map<String, serde_json::Value>,
    /// The generated text, joined; `null` when there was none.
    pub response_text: Option<String>,
}

impl OutputEntry {
    /// The entry of a profiling record, given its metrics (as the records export has them).
    pub fn of(anchor_unix_ns: u64, r: &Record, metrics: &[RecordMetric]) -> OutputEntry {
        let mut m = serde_json::Map::new();
        for tag in OUTPUT_METRICS {
            if let Some(rm) = metrics.iter().find(|rm| rm.tag == tag) {
                let v = serde_json::to_value(&rm.value).unwrap_or(serde_json::Value::Null);
                m.insert(tag.to_string(), v);
            }
        }
        // What AIPerf joins: each response's text (reasoning first, then the content and
        // any tool-call text, as the event carried it).
        let mut text = String::new();
        for e in &r.events {
            for part in [&e.reasoning, &e.content, &e.tool].into_iter().flatten() {
                text.push_str(part);
            }
        }
        OutputEntry {
            session_num: r.session_num,
            conversation_id: r.conversation_id.clone(),
            turn_index: r.turn_index,
            x_request_id: r.request_id.clone(),
            request_start_ns: anchor_unix_ns + r.start_ns,
            request_end_ns: anchor_unix_ns + r.end_ns,
            metrics: m,
            response_text: (!text.is_empty()).then_some(text),
        }
    }
}

#[derive(Serialize)]
struct File<'a> {
    schema_version: &'static str,
    data: &'a [OutputEntry],
}

/// The file's bytes: entries sorted by (session_num, turn_index), two-space indented as
/// AIPerf writes it.
pub fn render(mut entries: Vec<OutputEntry>) -> Vec<u8> {
    entries.sort_by_key(|e| (e.session_num, e.turn_index));
    let f = File {
        schema_version: "1.0",
        data: &entries,
    };
    // Plain data: serializing cannot fail.
    serde_json::to_vec_pretty(&f).unwrap_or_default()
}

#[cfg(test)]
mod tests {
    use super::*;
    use inferbench_core::Event;
    use inferbench_core::summary::RecordMetricValue;

    fn record(session: u64, text: &[&str]) -> Record {
        let mut r = Record {
            session_num: session,
            request_id: format!("r{session}"),
            conversation_id: format!("c{session}"),
            start_ns: 10,
            end_ns: 30,
            ..Default::default()
        };
        for t in text {
            r.events.push(Event {
                content: Some(t.to_string()),
                ..Default::default()
            });
        }
        r
    }

    #[test]
    fn entries_sort_by_session_and_join_their_text() {
        let m = vec![RecordMetric {
            tag: "request_latency".into(),
            unit: "ms".into(),
            value: RecordMetricValue::Float(2.5),
        }];
        let a = OutputEntry::of(1000, &record(1, &["Hel", "lo"]), &m);
        let b = OutputEntry::of(1000, &record(0, &[]), &[]);
        assert_eq!(a.response_text.as_deref(), Some("Hello"));
        assert_eq!(a.request_start_ns, 1010);
        assert_eq!(a.request_end_ns, 1030);
        let v: serde_json::Value = serde_json::from_slice(&render(vec![a, b])).unwrap();
        assert_eq!(v["schema_version"], "1.0");
        assert_eq!(v["data"][0]["session_num"], 0);
        assert_eq!(v["data"][0]["response_text"], serde_json::Value::Null);
        assert_eq!(v["data"][0]["metrics"], serde_json::json!({}));
        assert_eq!(v["data"][1]["metrics"]["request_latency"], 2.5);
        let keys: Vec<&String> = v["data"][1].as_object().unwrap().keys().collect();
        assert_eq!(
            keys,
            [
                "session_num",
                "conversation_id",
                "turn_index",
                "x_request_id",
                "request_start_ns",
                "request_end_ns",
                "metrics",
                "response_text"
            ]
        );
    }
}
