//! The generation controls a run actually sent, read from its request bodies: shared by the
//! live run (the frozen workload) and the importers (`inputs.json`, Perf Analyzer payloads),
//! so that both summarize them the same way.

use std::collections::BTreeMap;

use serde_json::{Map, Value, json};

/// Sampling parameters recorded in the `sampling` pin.
pub const SAMPLING_KEYS: &[&str] = &[
    "temperature",
    "top_p",
    "top_k",
    "min_p",
    "seed",
    "frequency_penalty",
    "presence_penalty",
    "repetition_penalty",
    "n",
];

/// What a pin says when no body carried the field.
pub const ABSENT: &str = "absent";

/// One field over every body: the value when all bodies agree (`"absent"` when none sent
/// it), `{"min", "max"}` when numbers vary, else the distinct values (first five) and how
/// many bodies lacked it.
pub fn summarize(values: &[Option<&Value>]) -> Value {
    let first = values.first().copied().flatten();
    if values.iter().all(|v| *v == first) {
        return first.cloned().unwrap_or_else(|| json!(ABSENT));
    }
    let absent = values.iter().filter(|v| v.is_none()).count();
    let nums: Vec<f64> = values.iter().flatten().filter_map(|v| v.as_f64()).collect();
    if absent == 0 && nums.len() == values.len() {
        let min = nums.iter().copied().fold(f64::INFINITY, f64::min);
        let max = nums.iter().copied().fold(f64::NEG_INFINITY, f64::max);
        return json!({"min": min, "max": max});
    }
    let mut distinct: Vec<&Value> = Vec::new();
    for v in values.iter().flatten() {
        if !distinct.contains(v) {
            distinct.push(v);
        }
    }
    distinct.truncate(5);
    json!({"values": distinct, "absent": absent})
}

/// The generation-control pins (`max_tokens`, `min_tokens`, `ignore_eos`, `stop`,
/// `sampling`) of a set of request bodies, in that order. `max_tokens` is
/// `{"max_completion_tokens": …}` when the bodies used that name. With no bodies at all the
/// controls are unknown: nothing is returned.
pub fn generation_pins(bodies: &[&Map<String, Value>]) -> Vec<(&'static str, Value)> {
    if bodies.is_empty() {
        return Vec::new();
    }
    let field = |k: &str| -> Vec<Option<&Value>> { bodies.iter().map(|b| b.get(k)).collect() };
    let uses_completion = bodies
        .iter()
        .any(|b| b.contains_key("max_completion_tokens"));
    let max_tokens = if uses_completion {
        json!({"max_completion_tokens": summarize(&field("max_completion_tokens"))})
    } else {
        summarize(&field("max_tokens"))
    };
    let mut sampling = BTreeMap::new();
    for k in SAMPLING_KEYS {
        let s = summarize(&field(k));
        if s != json!(ABSENT) {
            sampling.insert(*k, s);
        }
    }
    let sampling = if sampling.is_empty() {
        json!(ABSENT)
    } else {
        json!(sampling)
    };
    vec![
        ("max_tokens", max_tokens),
        ("min_tokens", summarize(&field("min_tokens"))),
        ("ignore_eos", summarize(&field("ignore_eos"))),
        ("stop", summarize(&field("stop"))),
        ("sampling", sampling),
    ]
}

#[cfg(test)]
mod tests {
    use super::*;

    fn obj(v: Value) -> Map<String, Value> {
        v.as_object().unwrap().clone()
    }

    #[test]
    fn equal_values_varying_numbers_and_absence_summarize_by_hand() {
        let a = obj(json!({"max_tokens": 16, "ignore_eos": true, "temperature": 0.5}));
        let b = obj(json!({"max_tokens": 32, "ignore_eos": true, "temperature": 0.5}));
        let pins: BTreeMap<_, _> = generation_pins(&[&a, &b]).into_iter().collect();
        assert_eq!(pins["max_tokens"], json!({"min": 16.0, "max": 32.0}));
        assert_eq!(pins["ignore_eos"], json!(true));
        assert_eq!(pins["min_tokens"], json!("absent"));
        assert_eq!(pins["stop"], json!("absent"));
        assert_eq!(pins["sampling"], json!({"temperature": 0.5}));
        let c = obj(json!({"max_completion_tokens": 8, "stop": ["\n"]}));
        let d = obj(json!({"max_completion_tokens": 8}));
        let pins: BTreeMap<_, _> = generation_pins(&[&c, &d]).into_iter().collect();
        assert_eq!(pins["max_tokens"], json!({"max_completion_tokens": 8}));
        assert_eq!(pins["stop"], json!({"values": [["\n"]], "absent": 1}));
        assert_eq!(pins["sampling"], json!("absent"));
        assert!(generation_pins(&[]).is_empty());
    }
}
