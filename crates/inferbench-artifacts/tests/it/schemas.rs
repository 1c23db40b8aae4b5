//! Generated files validate against the JSON Schemas in `docs/schemas/`.

use crate::common;
use crate::sample;

use std::path::Path;

use inferbench_artifacts::{EvidenceWriter, write_manifest, write_records_jsonl};
use inferbench_core::evidence::EVIDENCE_FILE;
use inferbench_core::plan::{Target, TokenizerSpec};
use inferbench_core::{EvidenceEnd, Phase, StopReason};
use serde_json::Value;

fn schema(name: &str) -> jsonschema::Validator {
    let path = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../../docs/schemas")
        .join(name);
    let v: Value = serde_json::from_str(&std::fs::read_to_string(&path).unwrap()).unwrap();
    jsonschema::validator_for(&v).unwrap_or_else(|e| panic!("{name}: {e}"))
}

fn assert_valid(v: &jsonschema::Validator, instance: &Value, what: &str) {
    let errors: Vec<String> = v.iter_errors(instance).map(|e| e.to_string()).collect();
    assert!(errors.is_empty(), "{what}: {errors:?}\n{instance}");
}

#[test]
fn evidence_lines_validate() {
    let (_tmp, dir) = common::tmpdir("schema-ev");
    let mut w = EvidenceWriter::create(&dir, &sample::header()).unwrap();
    for r in sample::records() {
        w.write_record(&r).unwrap();
    }
    w.write_phase(&sample::window(Phase::Profiling)).unwrap();
    w.finish(EvidenceEnd {
        stop_reason: StopReason::Interrupted,
        end_ns: 4_000,
        records: 4,
    })
    .unwrap();

    let v = schema("evidence-line.schema.json");
    let text = std::fs::read_to_string(dir.join(EVIDENCE_FILE)).unwrap();
    let lines: Vec<Value> = text
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    assert_eq!(lines.len(), 7);
    let kinds: Vec<&str> = lines.iter().map(|l| l["line"].as_str().unwrap()).collect();
    assert_eq!(
        kinds,
        [
            "header", "record", "record", "record", "record", "phase", "end"
        ]
    );
    for (i, l) in lines.iter().enumerate() {
        assert_valid(&v, l, &format!("line {}", i + 1));
    }

    // The schema is not vacuous: a record without an id, or with an unknown key, fails.
    let mut bad = lines[1].clone();
    bad.as_object_mut().unwrap().remove("id");
    assert!(!v.is_valid(&bad));
    let mut bad = lines[1].clone();
    bad["surprise"] = Value::Bool(true);
    assert!(!v.is_valid(&bad));
    let mut bad = lines[0].clone();
    bad["line"] = "headr".into();
    assert!(!v.is_valid(&bad));
}

#[test]
fn manifest_validates_and_never_holds_a_secret() {
    let v = schema("manifest.schema.json");
    let (_tmp, dir) = common::tmpdir("schema-man");
    let path = write_manifest(&dir, &common::manifest()).unwrap();
    let text = std::fs::read_to_string(path).unwrap();
    assert!(text.ends_with("}\n"));
    assert!(!text.contains("sk-test-secret"));
    let value: Value = serde_json::from_str(&text).unwrap();
    assert_valid(&v, &value, "manifest");

    let mut m = common::manifest();
    m.plan.target = Target::Simulated {
        ttft_ms: 20.0,
        itl_ms: 5.0,
        error_rate: 0.0,
        answer_accuracy: None,
        serving: Default::default(),
    };
    m.plan.tokenizer = TokenizerSpec::HuggingFace {
        path: "/tok".into(),
    };
    m.plan.api_key = None;
    m.plan.osl = None;
    m.ended_at = None;
    m.stop_reason = StopReason::Interrupted;
    m.partial = true;
    assert_valid(&v, &serde_json::to_value(&m).unwrap(), "manifest variant");

    // An API key in clear text is rejected by the schema.
    let mut leaked = value.clone();
    leaked["plan"]["api_key"] = "sk-test-secret".into();
    assert!(!v.is_valid(&leaked));
}

#[test]
fn profile_export_lines_validate_ours_and_aiperfs() {
    let v = schema("profile_export_record.schema.json");
    let (_tmp, dir) = common::tmpdir("schema-rec");
    let mut w = EvidenceWriter::create(&dir, &sample::header()).unwrap();
    for r in sample::records() {
        w.write_record(&r).unwrap();
    }
    w.flush().unwrap();
    let ev = inferbench_artifacts::read_evidence(&dir.join(EVIDENCE_FILE)).unwrap();
    let path = write_records_jsonl(
        &dir,
        "profile_export.jsonl",
        &ev,
        Phase::Profiling,
        &sample::record_metrics(),
    )
    .unwrap();
    let ours = std::fs::read_to_string(path).unwrap();
    assert_eq!(ours.lines().count(), 3);
    for l in ours.lines() {
        assert_valid(&v, &serde_json::from_str(l).unwrap(), "ours");
    }
    for name in ["s1_profile_export.jsonl", "s6_profile_export_errors.jsonl"] {
        for l in common::read(name).lines() {
            assert_valid(&v, &serde_json::from_str(l).unwrap(), name);
        }
    }
}
