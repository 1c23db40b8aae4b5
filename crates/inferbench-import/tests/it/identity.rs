//! The identity importers recover from the fixtures: each pin with the file and key it came
//! from, values read by hand from the fixtures' files.

use std::path::{Path, PathBuf};

use inferbench_core::identity::{Identity, Provenance};
use serde_json::{Value, json};

fn data(p: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("tests/data")
        .join(p)
}

fn identity(dir: &str) -> Identity {
    let count = |t: &str| t.split_whitespace().count() as u64;
    inferbench_import::import(&data(dir), &count)
        .unwrap()
        .identity
}

fn pin(id: &Identity, name: &str) -> (Value, String, String) {
    let p = id
        .get(name)
        .unwrap_or_else(|| panic!("{name} not recovered"));
    match &p.provenance {
        Provenance::Recovered { file, key } => (p.value.clone(), file.clone(), key.clone()),
        other => (p.value.clone(), format!("{other:?}"), String::new()),
    }
}

#[test]
fn genai_perf_flat_input_config_and_inputs_json() {
    let id = identity("genai_perf/G12-chat-stream");
    let summary = "profile_export_genai_perf.json";
    assert_eq!(
        pin(&id, "random_seed"),
        (json!(1), summary.into(), "input_config.random_seed".into())
    );
    assert_eq!(pin(&id, "streaming").0, json!(true));
    assert_eq!(pin(&id, "model").0, json!(["mock-model"]));
    assert_eq!(
        pin(&id, "arrival_policy").0,
        json!({"mode": "concurrency", "concurrency": 4})
    );
    assert_eq!(pin(&id, "client_placement").0, json!("same-host"));
    assert_eq!(pin(&id, "warmup").0, json!("none"));
    assert_eq!(pin(&id, "request_count").0, json!(60));
    // The bodies of inputs.json: max_tokens 16 and ignore_eos true in every one.
    let (v, file, key) = pin(&id, "ignore_eos");
    assert_eq!((v, file.as_str()), (json!(true), "inputs.json"));
    assert!(key.ends_with(".ignore_eos"), "{key}");
    assert_eq!(pin(&id, "max_tokens").0, json!(16));
    assert_eq!(pin(&id, "min_tokens").0, json!("absent"));
    let (w, file, _) = pin(&id, "workload_digest");
    assert!(w.as_str().unwrap().starts_with("sha256:"));
    assert_eq!(file, "inputs.json");
    assert!(
        pin(&id, "harness")
            .0
            .as_str()
            .unwrap()
            .starts_with("genai-perf/0.0.")
    );
    assert_eq!(
        id.get("parser").unwrap().value,
        json!(format!(
            "inferbench-import-genai-perf/{}",
            inferbench_core::TOOL_VERSION
        ))
    );
    for name in [
        "image_digest",
        "model_revision",
        "chat_template_digest",
        "stop_reason",
    ] {
        assert_eq!(id.missing[name], "not in the artifact", "{name}");
    }
}

#[test]
fn genai_perf_nested_input_config_and_the_sent_payloads() {
    // No inputs.json here: the controls and the workload come from Perf Analyzer's export.
    let id = identity("genai_perf/S2-chat-stream-role-reasoning");
    assert_eq!(
        pin(&id, "arrival_policy"),
        (
            json!({"concurrency": 4}),
            "profile_export_genai_perf.json".into(),
            "input_config.perf_analyzer.stimulus".into()
        )
    );
    assert_eq!(pin(&id, "request_count").0, json!(60));
    assert_eq!(pin(&id, "random_seed").0, json!(1));
    let (v, file, _) = pin(&id, "ignore_eos");
    assert_eq!((v, file.as_str()), (json!(true), "profile_export.json"));
    assert_eq!(pin(&id, "min_tokens").0, json!(16));
    assert_eq!(pin(&id, "workload_digest").1, "profile_export.json");
    // The responses carry a reasoning field.
    assert_eq!(pin(&id, "reasoning_accounting").0, json!("separate_field"));
}

#[test]
fn aiperf_input_config_run_info_and_inputs_json() {
    let id = identity("aiperf/s1");
    let summary = "profile_export_aiperf.json";
    assert_eq!(
        pin(&id, "random_seed"),
        (json!(1), summary.into(), "run_info.random_seed".into())
    );
    assert_eq!(pin(&id, "harness").0, json!("aiperf/0.13.0"));
    assert_eq!(pin(&id, "model").0, json!(["mock-model"]));
    assert_eq!(pin(&id, "stop_reason").0, json!("completed"));
    assert_eq!(pin(&id, "request_count").0, json!(60));
    assert_eq!(
        pin(&id, "arrival_policy").0,
        json!({"type": "concurrency", "concurrency": 4})
    );
    assert_eq!(pin(&id, "client_placement").0, json!("same-host"));
    assert_eq!(
        pin(&id, "max_tokens").0,
        json!({"max_completion_tokens": 16})
    );
    assert_eq!(pin(&id, "min_tokens").0, json!(16));
    assert_eq!(pin(&id, "ignore_eos").1, "inputs.json");
    assert_eq!(id.missing["image_digest"], "not in the artifact");
}
