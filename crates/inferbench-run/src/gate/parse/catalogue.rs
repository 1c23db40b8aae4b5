//! Which metrics a definition set has, with their display units and whether they are
//! distributions (per request) or run-level values: found by scoring a small built-in
//! evidence under the set once, so the catalogue is the scorer's own and cannot drift.

use std::collections::BTreeMap;
use std::sync::LazyLock;

use inferbench_core::Phase;
use inferbench_core::evidence::{Evidence, EvidenceHeader, PhaseWindow};
use inferbench_core::record::EVIDENCE_SCHEMA_VERSION;
use inferbench_core::record::{Event, EventKind, EventKindOpt, Frame, Record, TokenCounts};
use inferbench_core::summary::MetricValue;
use inferbench_metrics::Goodput;

/// One metric of a set.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Known {
    pub unit: String,
    /// A distribution (per request, or pooled over chunk gaps), not a run-level scalar.
    pub distribution: bool,
}

/// inferbench's schedule evidence (`inferbench_metrics::schedule`), computed for every run
/// whatever the set: the gate reads them from the records.
const SCHEDULE: &[(&str, &str, bool)] = &[
    ("schedule_lag", "ms", true),
    ("time_to_first_token_from_planned", "ms", true),
    ("time_to_first_output_token_from_planned", "ms", true),
    ("request_latency_from_planned", "ms", true),
    ("achieved_request_rate", "requests/sec", false),
    ("scheduled_request_rate", "requests/sec", false),
];

static CATALOGUE: LazyLock<BTreeMap<&'static str, BTreeMap<String, Known>>> = LazyLock::new(|| {
    let ev = sample();
    let count = |s: &str| s.split_whitespace().count() as u64;
    inferbench_metrics::registry()
        .iter()
        .map(|set| {
            let mut m: BTreeMap<String, Known> = set
                .score(&ev, Phase::Profiling, &count, &Goodput::None, 0.95)
                .map(|c| {
                    c.summary
                        .metrics
                        .into_iter()
                        .map(|r| {
                            let distribution = matches!(r.value, MetricValue::Distribution { .. });
                            (
                                r.tag,
                                Known {
                                    unit: r.unit,
                                    distribution,
                                },
                            )
                        })
                        .collect()
                })
                .unwrap_or_default();
            for (tag, unit, distribution) in SCHEDULE {
                m.entry(tag.to_string()).or_insert(Known {
                    unit: unit.to_string(),
                    distribution: *distribution,
                });
            }
            (set.name, m)
        })
        .collect()
});

/// The metrics of `set` (empty for an unknown set).
pub fn metrics(set: &str) -> Option<&'static BTreeMap<String, Known>> {
    CATALOGUE.get(set)
}

/// A pooled population (every chunk gap of every request), not one value per request.
pub fn is_pooled(tag: &str) -> bool {
    tag.contains("inter_chunk")
}

/// Three streamed records with reasoning, content and usage, and one error: enough for
/// every scorer to emit each metric it has.
fn sample() -> Evidence {
    let header = EvidenceHeader {
        schema_version: EVIDENCE_SCHEMA_VERSION,
        tool: "inferbench".into(),
        tool_version: "catalogue".into(),
        anchor_unix_ns: 0,
        benchmark_id: "catalogue".into(),
        endpoint_type: "chat".into(),
        streaming: true,
        tokenizer: "builtin".into(),
        use_server_token_count: false,
        per_chunk_usage: false,
    };
    let ms = 1_000_000u64;
    let record = |id: u64| {
        let t0 = id * 100 * ms;
        let ev = |i: u64, content: Option<&str>, reasoning: Option<&str>| Event {
            frame: i as u32,
            t_ns: t0 + (10 + 5 * i) * ms,
            kind: EventKindOpt(EventKind::Data),
            content: content.map(str::to_string),
            reasoning: reasoning.map(str::to_string),
            ..Default::default()
        };
        let mut events = vec![
            ev(0, None, Some("think")),
            ev(1, Some("a"), None),
            ev(2, Some("b"), None),
            ev(3, Some("c"), None),
        ];
        events.push(Event {
            frame: 4,
            t_ns: t0 + 40 * ms,
            usage: Some(serde_json::json!({"prompt_tokens": 4, "completion_tokens": 4, "total_tokens": 8, "completion_tokens_details": {"reasoning_tokens": 1}})),
            ..Default::default()
        });
        events.push(Event {
            frame: 5,
            t_ns: t0 + 41 * ms,
            kind: EventKindOpt(EventKind::Done),
            ..Default::default()
        });
        Record {
            id,
            request_id: format!("r{id}"),
            planned_ns: t0,
            start_ns: t0,
            sent_ns: Some(t0 + ms),
            ack_ns: Some(t0 + 2 * ms),
            end_ns: t0 + 41 * ms,
            status: Some(200),
            streaming: true,
            request_bytes: 10,
            requested_output_tokens: Some(3),
            frames: (0..6)
                .map(|i| Frame {
                    t_ns: events[i].t_ns,
                    bytes: 10,
                })
                .collect(),
            events,
            tokens: TokenCounts {
                input: Some(4),
                output: Some(3),
                reasoning: Some(1),
            },
            ..Default::default()
        }
    };
    let records: Vec<Record> = (0..3).map(record).collect();
    let window = PhaseWindow {
        phase: Phase::Profiling,
        start_ns: 0,
        sent_end_ns: 200 * ms,
        requests_end_ns: 241 * ms,
        scheduled: 3,
        completed: 3,
        errors: 0,
        cancelled: false,
    };
    Evidence {
        header,
        records,
        phases: vec![window],
        end: None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_set_has_its_latencies_and_throughputs() {
        let a = metrics("aiperf-0.13").unwrap();
        assert_eq!(a["time_to_first_token"].unit, "ms");
        assert!(a["time_to_first_token"].distribution);
        assert!(a["time_to_first_output_token"].distribution);
        assert_eq!(a["output_token_throughput"].unit, "tokens/sec");
        assert!(!a["output_token_throughput"].distribution);
        assert!(a.contains_key("time_to_first_token_from_planned"));
        for set in inferbench_metrics::registry() {
            let m = metrics(set.name).unwrap();
            assert!(
                m.values().any(|k| k.unit == "ms" && k.distribution),
                "{} has no latency distribution: {m:?}",
                set.name
            );
        }
    }
}
