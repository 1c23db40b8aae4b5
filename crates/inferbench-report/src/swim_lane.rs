//! `analyze swim-lane`: the per-record export (`profile_export.jsonl`, AIPerf's shape, which
//! inferbench writes too) read into sessions, laid out by `swim_lane_layout`, and drawn by
//! `swim_lane_draw` as a PNG or an SVG viewer page.
//!
//! Records AIPerf skips are skipped here too: cancelled ones and ones without a start or an
//! end. A line that is not JSON is an error naming `file:line`.

use serde_json::Value;

use crate::swim_lane_layout::{
    LaneGroup, SessionKey, Span, lane_groups, merged, step_counts, subtract_steps,
};

/// One drawn request.
#[derive(Clone, Debug, Default)]
pub struct Request {
    pub start_ns: i64,
    pub end_ns: i64,
    /// `x_correlation_id`, else `conversation_id`: the session the request belongs to.
    pub session: String,
    pub conversation: String,
    pub request_id: Option<String>,
    pub turn_index: i64,
    pub agent_depth: i64,
    pub root: Option<String>,
    pub parent: Option<String>,
    pub ttft_ms: Option<f64>,
    pub latency_ms: Option<f64>,
    pub isl: Option<f64>,
    pub osl: Option<f64>,
    pub error: bool,
}

fn text(v: &Value) -> Option<String> {
    v.as_str().filter(|s| !s.is_empty()).map(str::to_string)
}

fn int(v: &Value) -> Option<i64> {
    v.as_i64()
        .or_else(|| v.as_u64().map(|u| u.min(i64::MAX as u64) as i64))
        .or_else(|| v.as_f64().map(|f| f as i64))
}

/// A metric's value from `{"metrics": {name: {"value": v, "unit": u}}}`.
fn metric(r: &Value, name: &str) -> Option<f64> {
    r["metrics"][name]["value"].as_f64()
}

/// Milliseconds, whatever time unit the record states (AIPerf writes `ms`).
fn metric_ms(r: &Value, name: &str) -> Option<f64> {
    let v = metric(r, name)?;
    let scale = match r["metrics"][name]["unit"].as_str().unwrap_or("ms") {
        "ns" => 1e-6,
        "us" => 1e-3,
        "s" | "sec" => 1e3,
        _ => 1.0,
    };
    Some(v * scale)
}

/// One record line, or `None` when AIPerf would skip it.
pub fn request_of(r: &Value) -> Option<Request> {
    let m = &r["metadata"];
    if m["was_cancelled"].as_bool() == Some(true) {
        return None;
    }
    let start_ns = int(&m["request_start_ns"])?;
    let end_ns = int(&m["request_end_ns"])?;
    let conversation = text(&m["conversation_id"]).unwrap_or_else(|| "(none)".into());
    Some(Request {
        start_ns,
        end_ns,
        session: text(&m["x_correlation_id"]).unwrap_or_else(|| conversation.clone()),
        conversation,
        request_id: text(&m["x_request_id"]),
        turn_index: int(&m["turn_index"]).unwrap_or(0),
        agent_depth: int(&m["agent_depth"]).unwrap_or(0),
        root: text(&m["root_correlation_id"]),
        parent: text(&m["parent_correlation_id"]),
        ttft_ms: metric_ms(r, "time_to_first_token"),
        latency_ms: metric_ms(r, "request_latency"),
        isl: metric(r, "input_sequence_length"),
        osl: metric(r, "output_sequence_length"),
        error: !r["error"].is_null(),
    })
}

/// The drawable requests of a `profile_export.jsonl`; `label` names the file in errors.
pub fn parse_records(jsonl: &str, label: &str) -> Result<Vec<Request>, String> {
    let mut out = Vec::new();
    for v in crate::jsonl::json_lines(jsonl) {
        let v = v.map_err(|(n, e)| format!("{label}:{n}: {e}"))?;
        out.extend(request_of(&v));
    }
    Ok(out)
}

/// The vertical markers: end of the concurrency ramp and end of the benchmark, in seconds.
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct Marks {
    pub ramp_s: Option<f64>,
    pub bench_end_s: Option<f64>,
}

/// From `profile_export_aiperf.json`: the first non-excluded phase's
/// `concurrency_ramp.duration` (else the older `loadgen.concurrency_ramp_duration`), and the
/// top-level `benchmark_duration` (its `avg` when it is a metric object).
pub fn marks(doc: &Value) -> Marks {
    let ic = &doc["input_config"];
    let ramp = ic["phases"]
        .as_array()
        .into_iter()
        .flatten()
        .filter(|p| p["exclude_from_results"].as_bool() != Some(true))
        .find_map(|p| p["concurrency_ramp"]["duration"].as_f64())
        .or_else(|| ic["loadgen"]["concurrency_ramp_duration"].as_f64());
    let bench = match &doc["benchmark_duration"] {
        Value::Null => &ic["loadgen"]["benchmark_duration"],
        b => b,
    };
    let bench = bench.as_f64().or_else(|| bench["avg"].as_f64());
    Marks {
        ramp_s: ramp,
        bench_end_s: bench,
    }
}

/// One session: its requests sorted by turn index, times relative to the run's first start.
#[derive(Clone, Debug)]
pub struct Session {
    pub id: String,
    pub requests: Vec<Request>,
    pub key: SessionKey,
}

/// Everything the chart shows, in nanoseconds since the first request start.
#[derive(Clone, Debug)]
pub struct SwimLane {
    pub title: String,
    pub sessions: Vec<Session>,
    pub groups: Vec<LaneGroup>,
    pub slots: usize,
    /// Rows each slot takes (its tallest lane, at least 1) and the slot's first row.
    pub slot_rows: Vec<usize>,
    pub slot_offset: Vec<usize>,
    pub total_rows: usize,
    pub t0_ns: i64,
    pub t_max_ns: i64,
    /// Requests in flight, and sessions alive but between requests: `(t_ns, count)` steps.
    pub active: Vec<(i64, i64)>,
    pub idle: Vec<(i64, i64)>,
    pub target: Option<u64>,
    pub marks: Marks,
    pub subagent_sessions: usize,
}

/// Groups the requests into sessions (first appearance order) and lays them out. `None`
/// when there is nothing to draw.
pub fn build(
    title: &str,
    requests: Vec<Request>,
    target: Option<u64>,
    marks: Marks,
) -> Option<SwimLane> {
    let t0 = requests.iter().map(|r| r.start_ns).min()?;
    let t_max = requests.iter().map(|r| r.end_ns - t0).max().unwrap_or(0);
    let mut index: std::collections::HashMap<String, usize> = Default::default();
    let mut sessions: Vec<Session> = Vec::new();
    for mut r in requests {
        r.start_ns -= t0;
        r.end_ns -= t0;
        let i = *index.entry(r.session.clone()).or_insert_with(|| {
            sessions.push(Session {
                id: r.session.clone(),
                requests: Vec::new(),
                key: SessionKey::default(),
            });
            sessions.len() - 1
        });
        sessions[i].requests.push(r);
    }
    for s in &mut sessions {
        s.requests.sort_by_key(|r| r.turn_index);
        s.key = SessionKey {
            id: s.id.clone(),
            root: s.requests.iter().find_map(|r| r.root.clone()),
            parent: s.requests.iter().find_map(|r| r.parent.clone()),
            is_sub: s.requests.iter().any(|r| r.agent_depth > 0),
            turns: s.requests.iter().map(|r| (r.start_ns, r.end_ns)).collect(),
        };
    }
    let keys: Vec<SessionKey> = sessions.iter().map(|s| s.key.clone()).collect();
    let groups = lane_groups(&keys);
    let slots = groups.iter().map(|g| g.slot + 1).max().unwrap_or(1);
    let mut slot_rows = vec![1; slots];
    for g in &groups {
        slot_rows[g.slot] = slot_rows[g.slot].max(g.rows);
    }
    let slot_offset: Vec<usize> = slot_rows
        .iter()
        .scan(0, |acc, &r| {
            let o = *acc;
            *acc += r;
            Some(o)
        })
        .collect();
    let total_rows = slot_rows.iter().sum();
    let spans: Vec<Span> = keys.iter().flat_map(|k| k.turns.iter().copied()).collect();
    let alive: Vec<Span> = keys.iter().map(SessionKey::span).collect();
    let active = step_counts(&spans);
    let idle = subtract_steps(&step_counts(&alive), &active);
    Some(SwimLane {
        title: title.to_string(),
        subagent_sessions: keys.iter().filter(|k| k.is_sub).count(),
        sessions,
        groups,
        slots,
        slot_rows,
        slot_offset,
        total_rows,
        t0_ns: t0,
        t_max_ns: t_max,
        active,
        idle,
        target,
        marks,
    })
}

impl SwimLane {
    /// "N sessions" or "N sessions + M subagents", as the title states it.
    pub fn counts(&self) -> String {
        let n = self.sessions.len() - self.subagent_sessions;
        if self.subagent_sessions > 0 {
            format!("{n} sessions + {} subagents", self.subagent_sessions)
        } else {
            format!("{n} sessions")
        }
    }

    /// The highest number of requests in flight at once.
    pub fn peak_active(&self) -> i64 {
        self.active.iter().map(|p| p.1).max().unwrap_or(0)
    }

    /// Each slot's lane start times after its first: where a new session took the slot.
    pub fn reuse_marks(&self) -> Vec<(usize, i64)> {
        let mut per_slot: Vec<Vec<i64>> = vec![Vec::new(); self.slots];
        for g in &self.groups {
            per_slot[g.slot].push(g.span.0);
        }
        per_slot
            .into_iter()
            .enumerate()
            .flat_map(|(slot, mut v)| {
                v.sort_unstable();
                v.into_iter().skip(1).map(move |t| (slot, t))
            })
            .collect()
    }

    /// The waits between a session's requests (gaps of the union of its spans).
    pub fn waits(&self, session: usize) -> Vec<Span> {
        merged(&self.sessions[session].key.turns)
            .windows(2)
            .map(|w| (w[0].1, w[1].0))
            .collect()
    }

    /// Times in a slot when no lane occupies it, over `[0, t_max]`.
    pub fn empty_slot_spans(&self, slot: usize) -> Vec<Span> {
        let mut spans: Vec<Span> = self
            .groups
            .iter()
            .filter(|g| g.slot == slot)
            .map(|g| g.span)
            .collect();
        spans.sort_unstable();
        let mut out = Vec::new();
        let mut at = 0;
        for (s, e) in spans {
            if s > at {
                out.push((at, s));
            }
            at = at.max(e);
        }
        if at < self.t_max_ns {
            out.push((at, self.t_max_ns));
        }
        out
    }
}

/// Where the first token arrived, clamped into the request (its end when TTFT is missing):
/// the bar's prefill part ends there and its decode part begins.
pub fn first_token_ns(r: &Request) -> i64 {
    match r.ttft_ms {
        Some(ms) => (r.start_ns + (ms * 1e6) as i64).clamp(r.start_ns, r.end_ns),
        None => r.end_ns,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn cancelled_and_unfinished_records_are_skipped_and_bad_lines_named() {
        let jsonl = concat!(
            r#"{"metadata":{"x_correlation_id":"a","conversation_id":"c","turn_index":1,"request_start_ns":10,"request_end_ns":20},"metrics":{"time_to_first_token":{"value":0.000004,"unit":"ms"}}}"#,
            "\n\n",
            r#"{"metadata":{"conversation_id":"c","request_start_ns":5,"request_end_ns":9,"was_cancelled":true}}"#,
            "\n",
            r#"{"metadata":{"conversation_id":"c","request_start_ns":5}}"#,
            "\n",
            r#"{"metadata":{"conversation_id":"d","turn_index":0,"request_start_ns":0,"request_end_ns":8}}"#,
            "\n",
        );
        let r = parse_records(jsonl, "f.jsonl").unwrap();
        assert_eq!(r.len(), 2);
        assert_eq!((r[0].session.as_str(), r[0].turn_index), ("a", 1));
        // No x_correlation_id: the conversation is the session.
        assert_eq!(r[1].session, "d");
        // 0.000004 ms = 4 ns after the start at 10.
        assert_eq!(first_token_ns(&r[0]), 14);
        assert_eq!(first_token_ns(&r[1]), 8);
        let e = parse_records("{}\n{oops\n", "f.jsonl").unwrap_err();
        assert!(e.starts_with("f.jsonl:2: "), "{e}");
    }

    #[test]
    fn marks_read_the_phase_ramp_then_the_loadgen_one() {
        let doc: Value = serde_json::json!({
            "benchmark_duration": {"avg": 12.5, "unit": "sec"},
            "input_config": {"phases": [
                {"exclude_from_results": true, "concurrency_ramp": {"duration": 1.0}},
                {"concurrency_ramp": {"duration": 3.0}}
            ]}
        });
        assert_eq!(
            marks(&doc),
            Marks {
                ramp_s: Some(3.0),
                bench_end_s: Some(12.5)
            }
        );
        let old: Value = serde_json::json!({
            "input_config": {"loadgen": {"concurrency_ramp_duration": 2, "benchmark_duration": 9}}
        });
        assert_eq!(
            marks(&old),
            Marks {
                ramp_s: Some(2.0),
                bench_end_s: Some(9.0)
            }
        );
        assert_eq!(marks(&Value::Null), Marks::default());
    }

    #[test]
    fn build_counts_slots_rows_reuse_and_empty_spans() {
        let req = |s: &str, t: i64, a: i64, b: i64| Request {
            session: s.into(),
            turn_index: t,
            start_ns: 100 + a,
            end_ns: 100 + b,
            ..Request::default()
        };
        // x: [0,4) and [6,8) (waits 4..6); y: [1,3); z: [3,10) reuses y's slot 1.
        let lane = build(
            "run",
            vec![
                req("x", 1, 6, 8),
                req("x", 0, 0, 4),
                req("y", 0, 1, 3),
                req("z", 0, 3, 10),
            ],
            Some(2),
            Marks::default(),
        )
        .unwrap();
        assert_eq!((lane.t0_ns, lane.t_max_ns, lane.slots), (100, 10, 2));
        assert_eq!(lane.total_rows, 2);
        assert_eq!(lane.slot_offset, vec![0, 1]);
        assert_eq!(lane.sessions[0].requests[0].start_ns, 0);
        assert_eq!(lane.waits(0), vec![(4, 6)]);
        assert_eq!(lane.reuse_marks(), vec![(1, 3)]);
        assert_eq!(lane.empty_slot_spans(0), vec![(8, 10)]);
        assert_eq!(lane.empty_slot_spans(1), vec![(0, 1)]);
        assert_eq!(lane.peak_active(), 2);
        assert_eq!(lane.counts(), "3 sessions");
        assert!(build("run", Vec::new(), None, Marks::default()).is_none());
    }
}
