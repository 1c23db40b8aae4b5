//! The identity a GenAI-Perf artifact lets us recover: `input_config` of the summary JSON,
//! the payloads of `inputs.json` (or of Perf Analyzer's export), and the responses.

use inferbench_core::Record;
use inferbench_core::identity::Identity;
use serde_json::{Map, Value, json};

use super::{DetectedVersion, PA_EXPORT, RunFiles};
use crate::SourceTool;
use crate::identity::{
    NOT_IN_ARTIFACT, base, from_key, name_of, placement_of, reasoning_pin, recovered, workload_pins,
};

pub(super) fn recover(
    files: &RunFiles,
    summary: Option<&Value>,
    det: &DetectedVersion,
    sent: &[Map<String, Value>],
    records: &[Record],
) -> Identity {
    let summary_file = files.summary_json.as_deref().map(name_of);
    let version_from = match (&summary_file, &files.summary_csv) {
        (Some(f), _) => (f.clone(), "(the metric keys)".to_string()),
        (None, Some(c)) => (name_of(c), "(the columns)".to_string()),
        (None, None) => (PA_EXPORT.to_string(), "(no summary: unknown)".to_string()),
    };
    let mut id = base(
        SourceTool::GenaiPerf,
        &det.version,
        (&version_from.0, &version_from.1),
    );
    if det.version == "unknown" {
        id.pins.remove("harness");
    }
    recovered(
        &mut id,
        "definition_set",
        json!(det.set),
        &version_from.0,
        &version_from.1,
    );
    let inputs = files
        .inputs
        .as_deref()
        .and_then(|p| Some((p, std::fs::read(p).ok()?)));
    workload_pins(
        &mut id,
        inputs.as_ref().map(|(p, b)| (*p, b.as_slice())),
        (
            sent,
            PA_EXPORT,
            "experiments[*].requests[*].request_inputs.payload",
        ),
    );
    reasoning_pin(&mut id, records, PA_EXPORT);
    recovered(
        &mut id,
        "clock_source",
        json!("wall clock (Perf Analyzer system_clock)"),
        PA_EXPORT,
        "experiments[*].requests[*].timestamp",
    );
    if let (Some(file), Some(c)) = (&summary_file, summary.and_then(|s| s.get("input_config"))) {
        if c.get("perf_analyzer").is_some() {
            nested_config(&mut id, c, file);
        } else {
            input_config(&mut id, c, file);
        }
    }
    id.finish(NOT_IN_ARTIFACT);
    id
}

/// The pins `input_config` names (GenAI-Perf's parsed command line).
fn input_config(id: &mut Identity, c: &Value, file: &str) {
    let key = |k: &str| format!("input_config.{k}");
    for (name, k) in [
        ("model", "model"),
        ("streaming", "streaming"),
        ("random_seed", "random_seed"),
        ("request_count", "request_count"),
        ("tokenizer_revision", "tokenizer_revision"),
    ] {
        from_key(id, name, c, file, "input_config.", k);
    }
    if let Some(n) = c.get("warmup_request_count").and_then(Value::as_u64) {
        let v = if n == 0 {
            json!("none")
        } else {
            json!(format!("{n} requests"))
        };
        recovered(id, "warmup", v, file, &key("warmup_request_count"));
    }
    let get = |k: &str| c.get(k).cloned().unwrap_or(Value::Null);
    if c.get("request_count").is_some() || c.get("measurement_interval").is_some() {
        recovered(
            id,
            "stop_rule",
            json!({
                "request_count": get("request_count"),
                "measurement_interval_ms": get("measurement_interval"),
                "stability_percentage": get("stability_percentage"),
            }),
            file,
            &key("request_count, measurement_interval, stability_percentage"),
        );
    }
    match (c.get("request_rate"), c.get("concurrency")) {
        (Some(r), _) if !r.is_null() => recovered(
            id,
            "arrival_policy",
            json!({"mode": "rate", "rate": r}),
            file,
            &key("request_rate"),
        ),
        (_, Some(n)) if !n.is_null() => recovered(
            id,
            "arrival_policy",
            json!({"mode": "concurrency", "concurrency": n}),
            file,
            &key("concurrency"),
        ),
        _ => {}
    }
    if c.get("synthetic_input_tokens_mean").is_some() {
        let synthetic = c.get("prompt_source").and_then(Value::as_str) != Some("file");
        let v = if synthetic {
            json!({
                "isl": {"mean": get("synthetic_input_tokens_mean"), "stddev": get("synthetic_input_tokens_stddev")},
                "osl": {"mean": get("output_tokens_mean"), "stddev": get("output_tokens_stddev"),
                        "deterministic": get("output_tokens_mean_deterministic")},
            })
        } else {
            json!("the dataset's own lengths")
        };
        recovered(
            id,
            "length_spec",
            v,
            file,
            &key("synthetic_input_tokens_*, output_tokens_*"),
        );
    }
    if let Some(src) = c.get("prompt_source") {
        recovered(
            id,
            "dataset_source",
            json!({
                "prompt_source": src,
                "input_file": get("input_file"),
                "synthetic_input_files": get("synthetic_input_files"),
                "num_dataset_entries": get("num_dataset_entries"),
            }),
            file,
            &key("prompt_source"),
        );
    }
    if let Some(t) = c.get("tokenizer").and_then(Value::as_str) {
        recovered(
            id,
            "token_count_source",
            json!(format!("tokenizer:{t}")),
            file,
            &key("tokenizer"),
        );
    }
    if let Some(p) = c.get("u").and_then(Value::as_str).and_then(placement_of) {
        recovered(id, "client_placement", json!(p), file, &key("u"));
    }
}

/// The pins of the nested `input_config` GenAI-Perf 0.0.13 and later write (its YAML
/// configuration: `endpoint`, `perf_analyzer`, `input`, `tokenizer`).
fn nested_config(id: &mut Identity, c: &Value, file: &str) {
    let at = |p: &str| c.pointer(p).filter(|v| !v.is_null()).cloned();
    let key = |p: &str| format!("input_config{}", p.replace('/', "."));
    let put = |id: &mut Identity, name: &str, p: &str| {
        if let Some(v) = at(p) {
            recovered(id, name, v, file, &key(p));
        }
    };
    put(id, "model", "/model_names");
    put(id, "streaming", "/endpoint/streaming");
    put(id, "random_seed", "/input/random_seed");
    put(id, "tokenizer_revision", "/tokenizer/revision");
    put(id, "arrival_policy", "/perf_analyzer/stimulus");
    if let Some(m) = at("/perf_analyzer/measurement") {
        if m.get("mode").and_then(Value::as_str) == Some("request_count")
            && let Some(n) = m.get("num")
        {
            recovered(
                id,
                "request_count",
                n.clone(),
                file,
                &key("/perf_analyzer/measurement/num"),
            );
        }
        recovered(
            id,
            "stop_rule",
            json!({"measurement": m, "stability_percentage": at("/perf_analyzer/stability_percentage")}),
            file,
            &key("/perf_analyzer/measurement"),
        );
    }
    if let Some(n) = at("/perf_analyzer/warmup_request_count").and_then(|v| v.as_u64()) {
        let v = if n == 0 {
            json!("none")
        } else {
            json!(format!("{n} requests"))
        };
        recovered(
            id,
            "warmup",
            v,
            file,
            &key("/perf_analyzer/warmup_request_count"),
        );
    }
    if let Some(src) = at("/input/prompt_source") {
        let synthetic = src.as_str() != Some("file");
        let v = if synthetic {
            json!({"isl": at("/input/synthetic_tokens"), "osl": at("/input/output_tokens")})
        } else {
            json!("the dataset's own lengths")
        };
        recovered(
            id,
            "length_spec",
            v,
            file,
            &key("/input/synthetic_tokens, /input/output_tokens"),
        );
        recovered(
            id,
            "dataset_source",
            json!({
                "prompt_source": src,
                "file": at("/input/file"),
                "synthetic_files": at("/input/synthetic_files"),
                "num_dataset_entries": at("/input/num_dataset_entries"),
            }),
            file,
            &key("/input/prompt_source"),
        );
    }
    if let Some(t) = at("/tokenizer/name").and_then(|v| v.as_str().map(str::to_string)) {
        recovered(
            id,
            "token_count_source",
            json!(format!("tokenizer:{t}")),
            file,
            &key("/tokenizer/name"),
        );
    }
    if let Some(p) = at("/endpoint/url").and_then(|v| v.as_str().and_then(placement_of)) {
        recovered(
            id,
            "client_placement",
            json!(p),
            file,
            &key("/endpoint/url"),
        );
    }
}
