//! Parity with real GenAI-Perf runs (fixtures copied from `shared/fixtures`, see
//! `tests/data/genai_perf/`): import the artifact directory, score it under the definition set
//! of the release that wrote it, and get back every value of its
//! `profile_export_genai_perf.json` (bit for bit: the file prints Python's shortest repr), and
//! the JSON and CSV files byte for byte.

use std::path::{Path, PathBuf};

use inferbench_artifacts::genai_perf_export::{genai_perf_csv, genai_perf_json};
use inferbench_core::{MetricValue, Phase};
use inferbench_import::{ImportedRun, SourceTool, detect, genai_perf};
use inferbench_metrics::genai_perf as gp;
use inferbench_workload::Tokenizer;
use serde_json::Value;

fn data(rel: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("tests/data/genai_perf")
        .join(rel)
}

fn tokenizer() -> Tokenizer {
    Tokenizer::from_path(data("tokenizer").to_str().expect("utf-8 path"))
        .expect("fixture tokenizer loads")
}

fn import(name: &str, tok: &Tokenizer) -> ImportedRun {
    let count = |t: &str| tok.count(t) as u64;
    genai_perf::import(&data(name), &count).expect("fixture imports")
}

/// Scores `run` under its native set and checks it against the original files.
fn check(name: &str, version: &str, set: &str) {
    let tok = tokenizer();
    let run = import(name, &tok);
    assert_eq!(run.version, version, "{name}: version");
    assert_eq!(run.native_definitions, set, "{name}: set");
    let count = |t: &str| tok.count(t) as u64;
    let computed = gp::compute(set, &run.evidence, Phase::Profiling, &count).expect("set known");
    let summary = &computed.summary;
    assert_eq!(summary.definitions, set);

    let original = run.original_summary.as_ref().expect("summary kept");
    let obj = original.as_object().expect("object");
    let mut compared = 0;
    for (key, m) in obj {
        if key == "input_config" {
            continue;
        }
        let ours = summary
            .get(key)
            .unwrap_or_else(|| panic!("{name}: {key} missing"));
        for (stat, v) in m.as_object().expect("metric object") {
            if stat == "unit" {
                assert_eq!(Value::String(ours.unit.clone()), *v, "{name}: {key}.unit");
                continue;
            }
            let expected = v.as_f64().expect("number");
            let got = match &ours.value {
                MetricValue::Scalar { value } if stat == "avg" => Some(*value),
                MetricValue::Scalar { .. } => None,
                MetricValue::Distribution { stats } => stats.get(stat),
            };
            assert_eq!(got, Some(expected), "{name}: {key}.{stat}");
            compared += 1;
        }
    }
    // Nothing more than GenAI-Perf wrote.
    for m in &summary.metrics {
        assert!(obj.contains_key(&m.tag), "{name}: extra metric {}", m.tag);
    }
    assert!(compared > 30, "{name}: only {compared} values compared");

    let dir = &run.dir;
    let json = std::fs::read_to_string(dir.join("profile_export_genai_perf.json")).expect("json");
    let ours = genai_perf_json(summary, &run.version, original.get("input_config"));
    assert_eq!(ours, json, "{name}: JSON bytes");
    let csv = std::fs::read_to_string(dir.join("profile_export_genai_perf.csv")).expect("csv");
    let ours = genai_perf_csv(summary, &run.version, run.evidence.header.streaming);
    assert_eq!(ours, csv, "{name}: CSV bytes");
}

#[test]
fn s1_chat_stream() {
    check("S1-chat-stream", "0.0.15-0.0.16", gp::SET_0_0_13);
}

#[test]
fn s2_role_and_reasoning_chunks_are_dropped() {
    check(
        "S2-chat-stream-role-reasoning",
        "0.0.15-0.0.16",
        gp::SET_0_0_13,
    );
}

#[test]
fn s3_several_tokens_per_chunk() {
    check(
        "S3-chat-stream-3-tokens-per-chunk",
        "0.0.15-0.0.16",
        gp::SET_0_0_13,
    );
}

#[test]
fn s4_completions_stream() {
    check("S4-completions-stream", "0.0.15-0.0.16", gp::SET_0_0_13);
}

#[test]
fn s5_chat_without_streaming() {
    check("S5-chat-nonstream", "0.0.15-0.0.16", gp::SET_0_0_13);
}

#[test]
fn g12_chat_stream() {
    check("G12-chat-stream", "0.0.12", gp::SET_0_0_10);
}

#[test]
fn g12_several_tokens_per_chunk() {
    check(
        "G12-chat-stream-3-tokens-per-chunk",
        "0.0.12",
        gp::SET_0_0_10,
    );
}

#[test]
fn import_rebuilds_the_timeline() {
    let tok = tokenizer();
    let run = import("S2-chat-stream-role-reasoning", &tok);
    // The importer descended into the single run folder.
    assert!(run.dir.ends_with("mock-model-openai-chat-concurrency4"));
    assert_eq!(
        detect(&data("S2-chat-stream-role-reasoning")),
        Some(SourceTool::GenaiPerf)
    );
    let ev = &run.evidence;
    assert_eq!(ev.records.len(), 60);
    assert_eq!(ev.header.endpoint_type, "chat");
    assert!(ev.header.streaming);
    assert_eq!(ev.header.tokenizer, "TOKENIZER_DIR");
    let r = &ev.records[0];
    // Role-only event, 8 reasoning, 8 content, [DONE]: 18 responses, one event each.
    assert_eq!(r.frames.len(), 18);
    assert_eq!(r.events.len(), 18);
    assert_eq!(r.events[0].content.as_deref(), Some(""));
    assert!(r.events[1].reasoning.is_some());
    assert_eq!(r.events[17].kind(), inferbench_core::EventKind::Done);
    assert_eq!(r.tokens.output, Some(8));
    assert_eq!(r.tokens.reasoning, Some(8));
    assert_eq!(r.tokens.input, Some(32));
    assert_eq!(r.requested_output_tokens, Some(16));
    assert_eq!(r.status, Some(200));
    assert_eq!(r.end_ns, r.frames[17].t_ns);
    // The anchor is the earliest timestamp: some record starts at 0.
    assert_eq!(ev.records.iter().map(|r| r.start_ns).min(), Some(0));
    let w = ev.window(Phase::Profiling).expect("window");
    assert_eq!(
        w.requests_end_ns,
        ev.records.iter().map(|r| r.end_ns).max().unwrap()
    );
    assert!(run.losses.iter().any(|l| l.contains("read callback")));
    assert!(run.losses.iter().any(|l| l.contains("no inputs.json")));
}

#[test]
fn payload_indices_come_from_inputs_json() {
    let tok = tokenizer();
    let run = import("S1-chat-stream", &tok);
    assert!(!run.losses.iter().any(|l| l.contains("inputs.json")));
    // 60 requests over 100 dataset entries, issued in order.
    let idx: Vec<u64> = run
        .evidence
        .records
        .iter()
        .map(|r| r.payload_index)
        .collect();
    assert!(idx.iter().all(|&i| i < 100));
    assert_eq!(idx[0], 0);
}

#[test]
fn the_aiperf_set_can_score_an_imported_run() {
    let tok = tokenizer();
    let run = import("S2-chat-stream-role-reasoning", &tok);
    let c = inferbench_metrics::compute("aiperf-0.13", &run.evidence, Phase::Profiling)
        .expect("aiperf set");
    // AIPerf counts reasoning: OSL 16 against GenAI-Perf's 8.
    let osl = c.summary.get("output_sequence_length").expect("osl");
    assert_eq!(osl.avg(), Some(16.0));
}
