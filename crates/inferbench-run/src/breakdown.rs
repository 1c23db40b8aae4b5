//! The per-URL and per-model breakdown of a run with several URLs or models
//! (`inferbench_breakdown.json`, and a "By endpoint" table on the console): a view of the
//! profiling records, computed the same way live and offline (docs/routing.md).

use std::collections::BTreeMap;

use inferbench_core::evidence::PhaseWindow;
use inferbench_core::plan::RunPlan;
use inferbench_core::record::{Phase, Record};
use inferbench_core::summary::{RecordMetric, RecordMetricValue};
use serde_json::{Map, Value, json};

pub const SCHEMA_VERSION: u32 = 1;

/// The per-record metrics a group summarizes (tag, unit), in the file's order.
const STAT_METRICS: [(&str, &str); 3] = [
    ("request_latency", "ms"),
    ("time_to_first_token", "ms"),
    ("inter_token_latency", "ms"),
];

#[derive(Default, Clone, Debug)]
struct Group {
    requests: u64,
    errors: u64,
    output_tokens: u64,
    values: [Vec<f64>; 3],
}

impl Group {
    fn push(&mut self, r: &Record, metrics: &[RecordMetric]) {
        self.requests += 1;
        if r.is_error() {
            self.errors += 1;
            return;
        }
        for m in metrics {
            let v = match m.value {
                RecordMetricValue::Int(i) => i as f64,
                RecordMetricValue::Float(f) => f,
                RecordMetricValue::List(_) => continue,
            };
            if m.tag == "output_sequence_length" {
                self.output_tokens += v.max(0.0) as u64;
            } else if let Some(k) = STAT_METRICS.iter().position(|(t, _)| *t == m.tag) {
                self.values[k].push(v);
            }
        }
    }

    fn json(&self, window_s: Option<f64>) -> Map<String, Value> {
        let mut o = Map::new();
        o.insert("request_count".into(), json!(self.requests));
        o.insert("error_count".into(), json!(self.errors));
        for (k, (tag, unit)) in STAT_METRICS.iter().enumerate() {
            if let Some(s) = stats(&self.values[k], unit) {
                o.insert((*tag).into(), s);
            }
        }
        // Over the run's profiling window, as AIPerf's output_token_throughput: the groups'
        // values add up to the run's.
        if let Some(w) = window_s.filter(|w| *w > 0.0) {
            o.insert(
                "output_token_throughput".into(),
                json!({"unit": "tokens/sec", "avg": self.output_tokens as f64 / w}),
            );
        }
        o
    }
}

/// avg, min, max and the p50/p90/p99 percentiles (linear between closest ranks, numpy's
/// default) of `v`; None when empty.
fn stats(v: &[f64], unit: &str) -> Option<Value> {
    if v.is_empty() {
        return None;
    }
    let mut s = v.to_vec();
    s.sort_by(f64::total_cmp);
    let pct = |q: f64| {
        let h = (s.len() - 1) as f64 * q;
        let lo = h.floor() as usize;
        let hi = h.ceil() as usize;
        s[lo] + (s[hi] - s[lo]) * (h - lo as f64)
    };
    Some(json!({
        "unit": unit,
        "count": s.len(),
        "avg": s.iter().sum::<f64>() / s.len() as f64,
        "min": s[0],
        "max": s[s.len() - 1],
        "p50": pct(0.50),
        "p90": pct(0.90),
        "p99": pct(0.99),
    }))
}

/// Folds the profiling records by URL and by model.
#[derive(Default, Clone, Debug)]
pub struct Breakdown {
    by_url: BTreeMap<u32, Group>,
    by_model: BTreeMap<String, Group>,
    /// The model of records that name none (a run with one model).
    default_model: String,
}

impl Breakdown {
    /// Whether the plan has anything to break down (several URLs or several models).
    pub fn wanted(plan: &RunPlan) -> bool {
        plan.routing.urls.len() > 1 || plan.models.len() > 1
    }

    /// An empty breakdown for `plan`'s records.
    pub fn for_plan(plan: &RunPlan) -> Breakdown {
        Breakdown {
            default_model: plan.models.first().cloned().unwrap_or_default(),
            ..Default::default()
        }
    }

    pub fn push(&mut self, r: &Record, metrics: &[RecordMetric]) {
        if r.phase() != Phase::Profiling {
            return;
        }
        self.by_url
            .entry(r.url_index.unwrap_or(0))
            .or_default()
            .push(r, metrics);
        let model = r
            .model
            .clone()
            .unwrap_or_else(|| self.default_model.clone());
        self.by_model.entry(model).or_default().push(r, metrics);
    }

    /// The file's JSON: `{schema_version, breakdown: {by_url: [...], by_model: [...]}}`.
    /// URLs are the plan's (credentials were never kept in them).
    pub fn to_json(&self, plan: &RunPlan, window: Option<PhaseWindow>) -> Value {
        let window_s = window.map(|w| w.requests_end_ns.saturating_sub(w.start_ns) as f64 / 1e9);
        let urls = plan.routing.urls_or(&plan.url);
        let by_url: Vec<Value> = self
            .by_url
            .iter()
            .map(|(i, g)| {
                let mut o = Map::new();
                o.insert("url_index".into(), json!(i));
                o.insert("url".into(), json!(urls.get(*i as usize).copied()));
                o.extend(g.json(window_s));
                Value::Object(o)
            })
            .collect();
        let by_model: Vec<Value> = self
            .by_model
            .iter()
            .map(|(m, g)| {
                let mut o = Map::new();
                o.insert("model".into(), json!(m));
                o.extend(g.json(window_s));
                Value::Object(o)
            })
            .collect();
        json!({
            "schema_version": SCHEMA_VERSION,
            "breakdown": {"by_url": by_url, "by_model": by_model},
        })
    }

    /// The console's "By endpoint" table: one row per URL, then one per model.
    pub fn console(&self, plan: &RunPlan) -> String {
        let urls = plan.routing.urls_or(&plan.url);
        let mut rows: Vec<[String; 6]> = Vec::new();
        let fmt = |g: &Group, k: usize| {
            stats(&g.values[k], "ms")
                .and_then(|s| s.get("avg").and_then(Value::as_f64))
                .map_or("N/A".to_string(), |v| format!("{v:.2}"))
        };
        for (i, g) in &self.by_url {
            let name = urls.get(*i as usize).copied().unwrap_or("?");
            rows.push([
                format!("url #{i} {name}"),
                g.requests.to_string(),
                g.errors.to_string(),
                fmt(g, 0),
                fmt(g, 1),
                fmt(g, 2),
            ]);
        }
        for (m, g) in &self.by_model {
            rows.push([
                format!("model {m}"),
                g.requests.to_string(),
                g.errors.to_string(),
                fmt(g, 0),
                fmt(g, 1),
                fmt(g, 2),
            ]);
        }
        let head = [
            "By endpoint",
            "Requests",
            "Errors",
            "Latency avg (ms)",
            "TTFT avg (ms)",
            "ITL avg (ms)",
        ];
        let mut width = head.map(str::len);
        for r in &rows {
            for (w, c) in width.iter_mut().zip(r) {
                *w = (*w).max(c.chars().count());
            }
        }
        let line = |cells: Vec<&str>| {
            let mut s = String::new();
            for (k, c) in cells.iter().enumerate() {
                let pad = width[k] - c.chars().count();
                if k == 0 {
                    s.push_str(c);
                    s.push_str(&" ".repeat(pad));
                } else {
                    s.push_str("  ");
                    s.push_str(&" ".repeat(pad));
                    s.push_str(c);
                }
            }
            s.trim_end().to_string() + "\n"
        };
        let mut out = String::from("\n");
        out.push_str(&line(head.to_vec()));
        for r in &rows {
            out.push_str(&line(r.iter().map(String::as_str).collect()));
        }
        out
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn percentiles_interpolate_between_ranks() {
        // 1..=5: p50 = 3, p90 at rank 3.6 = 4.6, p99 at rank 3.96 = 4.96.
        let s = stats(&[5.0, 1.0, 4.0, 2.0, 3.0], "ms").unwrap();
        assert_eq!(s["avg"], 3.0);
        assert_eq!(s["min"], 1.0);
        assert_eq!(s["max"], 5.0);
        assert_eq!(s["p50"], 3.0);
        assert!((s["p90"].as_f64().unwrap() - 4.6).abs() < 1e-12);
        assert!((s["p99"].as_f64().unwrap() - 4.96).abs() < 1e-12);
        assert!(stats(&[], "ms").is_none());
    }

    fn rec(url: u32, model: &str, error: bool, latency_ms: f64) -> (Record, Vec<RecordMetric>) {
        let mut r = Record {
            url_index: Some(url),
            model: Some(model.into()),
            ..Default::default()
        };
        if error {
            r.error = Some(inferbench_core::record::RecordError {
                kind: inferbench_core::record::ErrorKind::Http,
                code: Some(500),
                error_type: "x".into(),
                message: "x".into(),
            });
        }
        let m = vec![
            RecordMetric {
                tag: "request_latency".into(),
                unit: "ms".into(),
                value: RecordMetricValue::Float(latency_ms),
            },
            RecordMetric {
                tag: "output_sequence_length".into(),
                unit: "tokens".into(),
                value: RecordMetricValue::Int(10),
            },
        ];
        (r, m)
    }

    #[test]
    fn groups_count_requests_errors_and_tokens() {
        let mut b = Breakdown::default();
        for (u, m, e, l) in [
            (0, "a", false, 10.0),
            (1, "b", true, 0.0),
            (0, "b", false, 30.0),
        ] {
            let (r, ms) = rec(u, m, e, l);
            b.push(&r, &ms);
        }
        let plan = crate::test_plan::plan();
        let w = PhaseWindow {
            phase: Phase::Profiling,
            start_ns: 0,
            sent_end_ns: 0,
            requests_end_ns: 2_000_000_000,
            scheduled: 3,
            completed: 3,
            errors: 1,
            cancelled: false,
        };
        let v = b.to_json(&plan, Some(w));
        let urls = v["breakdown"]["by_url"].as_array().unwrap();
        assert_eq!(urls[0]["request_count"], 2);
        assert_eq!(urls[0]["error_count"], 0);
        assert_eq!(urls[0]["request_latency"]["avg"], 20.0);
        // 20 tokens over 2 s.
        assert_eq!(urls[0]["output_token_throughput"]["avg"], 10.0);
        assert_eq!(urls[1]["request_count"], 1);
        assert_eq!(urls[1]["error_count"], 1);
        assert!(urls[1].get("request_latency").is_none());
        let models = v["breakdown"]["by_model"].as_array().unwrap();
        assert_eq!(models[1]["model"], "b");
        assert_eq!(models[1]["request_count"], 2);
        assert!(b.console(&plan).contains("By endpoint"));
    }
}
