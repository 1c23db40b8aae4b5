//! The identity an AIPerf artifact lets us recover: `input_config` and `run_info` of
//! `profile_export_aiperf.json`, the payloads of `inputs.json`, and the responses.

use inferbench_core::Record;
use inferbench_core::identity::Identity;
use serde_json::{Value, json};

use super::files::RunFiles;
use crate::SourceTool;
use crate::identity::{
    NOT_IN_ARTIFACT, base, from_key, name_of, placement_of, reasoning_pin, recovered, workload_pins,
};

pub(super) fn recover(
    files: &RunFiles,
    summary: Option<&Value>,
    version: &str,
    server_tokens: bool,
    records: &[Record],
) -> Identity {
    let summary_file = files
        .summary
        .as_deref()
        .map_or("profile_export_aiperf.json".to_string(), name_of);
    let mut id = base(
        SourceTool::Aiperf,
        version,
        (&summary_file, "aiperf_version"),
    );
    recovered(
        &mut id,
        "definition_set",
        json!(super::NATIVE_DEFINITIONS),
        &summary_file,
        "aiperf_version",
    );
    let inputs = files
        .inputs
        .as_deref()
        .and_then(|p| Some((p, std::fs::read(p).ok()?)));
    workload_pins(
        &mut id,
        inputs.as_ref().map(|(p, b)| (*p, b.as_slice())),
        (&[], "", ""),
    );
    let records_file = files
        .raw
        .as_deref()
        .or(files.records.as_deref())
        .map_or_else(String::new, name_of);
    reasoning_pin(&mut id, records, &records_file);
    if let Some(s) = summary {
        from_summary(&mut id, s, &summary_file, server_tokens);
    }
    id.finish(NOT_IN_ARTIFACT);
    id
}

fn from_summary(id: &mut Identity, s: &Value, file: &str, server_tokens: bool) {
    from_key(id, "random_seed", s, file, "", "run_info.random_seed");
    if let Some(done) = s.get("is_complete").and_then(Value::as_bool) {
        let cancelled = s.get("was_cancelled").and_then(Value::as_bool) == Some(true);
        let v = match (done, cancelled) {
            (_, true) => "interrupted",
            (true, false) => "completed",
            (false, false) => "unfinished",
        };
        recovered(
            id,
            "stop_reason",
            json!(v),
            file,
            "is_complete, was_cancelled",
        );
    }
    let Some(c) = s.get("input_config") else {
        return;
    };
    let key = |k: &str| format!("input_config.{k}");
    if let Some(items) = c.pointer("/models/items").and_then(Value::as_array) {
        let names: Vec<&Value> = items.iter().filter_map(|m| m.get("name")).collect();
        recovered(
            id,
            "model",
            json!(names),
            file,
            &key("models.items[*].name"),
        );
    }
    from_key(
        id,
        "streaming",
        c,
        file,
        "input_config.",
        "endpoint.streaming",
    );
    if let Some(p) = c
        .pointer("/endpoint/urls/0")
        .and_then(Value::as_str)
        .and_then(placement_of)
    {
        recovered(
            id,
            "client_placement",
            json!(p),
            file,
            &key("endpoint.urls[0]"),
        );
    }
    if let Some(d) = c.pointer("/datasets/0") {
        if id.get("random_seed").is_none() {
            from_key(
                id,
                "random_seed",
                d,
                file,
                "input_config.datasets[0].",
                "random_seed",
            );
        }
        if let Some(p) = d.get("prompts") {
            recovered(
                id,
                "length_spec",
                p.clone(),
                file,
                &key("datasets[0].prompts"),
            );
        }
        recovered(
            id,
            "dataset_source",
            json!({"name": d.get("name"), "type": d.get("type"), "entries": d.get("entries")}),
            file,
            &key("datasets[0]"),
        );
    }
    for (i, ph) in c
        .get("phases")
        .and_then(Value::as_array)
        .into_iter()
        .flatten()
        .enumerate()
    {
        let at = key(&format!("phases[{i}]"));
        let mut policy = ph.clone();
        if let Some(o) = policy.as_object_mut() {
            o.remove("name");
            o.remove("kind");
            o.remove("requests");
        }
        match ph.get("kind").and_then(Value::as_str) {
            Some("profiling") => {
                recovered(id, "arrival_policy", policy, file, &at);
                if let Some(n) = ph.get("requests") {
                    recovered(
                        id,
                        "request_count",
                        n.clone(),
                        file,
                        &format!("{at}.requests"),
                    );
                    recovered(
                        id,
                        "stop_rule",
                        json!(format!("request count {n}")),
                        file,
                        &format!("{at}.requests"),
                    );
                }
            }
            Some("warmup") => recovered(id, "warmup", ph.clone(), file, &at),
            _ => {}
        }
    }
    if id.get("warmup").is_none() && c.get("phases").is_some() {
        recovered(id, "warmup", json!("none"), file, &key("phases"));
    }
    if server_tokens {
        recovered(
            id,
            "token_count_source",
            json!("server_usage"),
            file,
            &key("endpoint"),
        );
    } else if let Some(t) = c.pointer("/tokenizer/name").and_then(Value::as_str) {
        recovered(
            id,
            "token_count_source",
            json!(format!("tokenizer:{t}")),
            file,
            &key("tokenizer.name"),
        );
    }
}
