//! The bridge through the binary: `metrics` on imported GenAI-Perf and AIPerf directories
//! (re-scored under their own sets and others, written in GenAI-Perf's file shapes),
//! `crosswalk`, and `inspect`. Fixture copies live in the importer crate's test data.

use crate::common;

use std::path::PathBuf;

use common::*;

fn data(rel: &str) -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join("../inferbench-import/tests/data")
        .join(rel)
}

fn tokenizer() -> String {
    data("genai_perf/tokenizer").display().to_string()
}

#[test]
fn an_imported_genai_perf_run_rescores_exactly_and_writes_its_own_files_back() {
    let src = data("genai_perf/S3-chat-stream-3-tokens-per-chunk");
    let out = tmpdir("gp-format");
    let o = run(&[
        "metrics",
        src.to_str().unwrap(),
        "--tokenizer",
        &tokenizer(),
        "--format",
        "genai-perf",
        "--output-dir",
        out.to_str().unwrap(),
    ]);
    let err = stderr(&o);
    assert!(o.status.success(), "{err}");
    assert!(err.contains("imported genai-perf 0.0.15-0.0.16"), "{err}");
    assert!(err.contains("reproduced under genai-perf-0.0.13"), "{err}");
    assert!(err.contains("not recoverable from these files"), "{err}");
    // The files written from the re-scored summary are GenAI-Perf's, byte for byte.
    let run_dir = src.join("mock-model-openai-chat-concurrency4");
    for f in [
        "profile_export_genai_perf.json",
        "profile_export_genai_perf.csv",
    ] {
        let want = std::fs::read(run_dir.join(f)).unwrap();
        let got = std::fs::read(out.join(f)).unwrap();
        assert!(got == want, "{f} differs from GenAI-Perf's own");
    }
}

#[test]
fn an_aiperf_run_scores_under_every_set_and_its_own_exactly() {
    let src = data("aiperf/s2");
    let o = run(&[
        "metrics",
        src.to_str().unwrap(),
        "--tokenizer",
        &tokenizer(),
    ]);
    let err = stderr(&o);
    assert!(o.status.success(), "{err}");
    assert!(err.contains("reproduced under aiperf-0.13"), "{err}");
    for set in [
        "genai-perf-0.0.13",
        "genai-perf-0.0.10",
        "genai-perf-0.0.4",
        "genai-perf-0.0.1",
        "vllm-bench",
        "mlperf-loadgen",
    ] {
        let o = run(&[
            "metrics",
            src.to_str().unwrap(),
            "--tokenizer",
            &tokenizer(),
            "--definitions",
            set,
        ]);
        assert!(o.status.success(), "{set}: {}", stderr(&o));
        let table = String::from_utf8_lossy(&o.stdout);
        assert!(table.contains(&format!("inferbench | {set}")), "{table}");
    }
}

#[test]
fn crosswalk_of_a_reasoning_run_maps_ttft_to_ttfo_and_flags_itl() {
    // S2: 8 reasoning tokens in reasoning_content, then 8 content tokens.
    let src = data("aiperf/s2");
    let out = tmpdir("crosswalk");
    let o = run(&[
        "crosswalk",
        src.to_str().unwrap(),
        "--tokenizer",
        &tokenizer(),
        "--output-dir",
        out.to_str().unwrap(),
    ]);
    assert!(o.status.success(), "{}", stderr(&o));
    let c = read_json(&out.join("crosswalk.json"));
    assert_eq!(c["from"], "genai-perf-0.0.13");
    assert_eq!(c["to"], "aiperf-0.13");
    assert_eq!(c["facts"]["records"], 60);
    assert_eq!(c["facts"]["reasoning_separate"], 60);
    let rows = c["mappings"].as_array().unwrap();
    let row = |from: &str, stat: &str| {
        rows.iter()
            .find(|m| m["from_metric"] == from && m["stat"] == stat)
            .unwrap_or_else(|| panic!("no row {from} {stat}"))
    };
    let ttft = row("time_to_first_token", "avg");
    assert_eq!(ttft["to_metric"], "time_to_first_output_token");
    assert_eq!(ttft["comparable"], true);
    // GenAI-Perf drops reasoning chunks, so its TTFT is the first content token: the same
    // instant as AIPerf's TTFO on the same records.
    assert_eq!(ttft["difference"], 0.0);
    let osl = row("output_sequence_length", "avg");
    assert_eq!(osl["to_metric"], "output_token_count");
    assert_eq!(osl["from_value"], 8.0);
    assert_eq!(osl["to_value"], 8.0);
    let itl = row("inter_token_latency", "avg");
    assert_eq!(itl["comparable"], false);
    assert!(
        itl["reasons"][0]
            .as_str()
            .unwrap()
            .contains("separate field"),
        "{itl}"
    );
    // The file follows its published schema.
    let schema = read_json(
        &PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../docs/schemas/crosswalk.schema.json"),
    );
    let v = jsonschema::validator_for(&schema).unwrap();
    let errors: Vec<String> = v.iter_errors(&c).map(|e| e.to_string()).collect();
    assert!(errors.is_empty(), "{errors:?}");
    let md = std::fs::read_to_string(out.join("crosswalk.md")).unwrap();
    assert!(md.starts_with("# Crosswalk: genai-perf-0.0.13 → aiperf-0.13"));
    assert!(md.contains("| inter_token_latency | inter_token_latency | avg | ms |"));
}

#[test]
fn bad_inputs_name_what_is_wrong() {
    let empty = tmpdir("not-a-run");
    let o = run(&["metrics", empty.to_str().unwrap()]);
    assert_eq!(o.status.code(), Some(2));
    assert!(
        stderr(&o).contains("not a GenAI-Perf or AIPerf artifact directory"),
        "{}",
        stderr(&o)
    );
    let src = data("aiperf/s1");
    let o = run(&["metrics", src.to_str().unwrap(), "--definitions", "nope"]);
    let err = stderr(&o);
    assert_eq!(o.status.code(), Some(2), "{err}");
    assert!(
        err.contains("unknown metric definitions 'nope'") && err.contains("genai-perf-0.0.13"),
        "{err}"
    );
    // A truncated Perf Analyzer export: the error names the file.
    let d = tmpdir("truncated-gp");
    let full = std::fs::read_to_string(data(
        "genai_perf/S1-chat-stream/mock-model-openai-chat-concurrency4/profile_export.json",
    ))
    .unwrap();
    std::fs::write(d.join("profile_export.json"), &full[..full.len() / 2]).unwrap();
    let o = run(&["metrics", d.to_str().unwrap()]);
    let err = stderr(&o);
    assert_eq!(o.status.code(), Some(2), "{err}");
    assert!(err.contains("profile_export.json"), "{err}");
}

#[test]
fn a_live_run_scores_under_genai_perf_and_crosswalks_name_to_name() {
    let d = tmpdir("live-bridge");
    let o = run(&[
        "profile",
        "--streaming",
        "--request-count",
        "12",
        "--concurrency",
        "2",
        "--isl",
        "16",
        "--osl",
        "8",
        "--extra-inputs",
        "ignore_eos:true",
        "--random-seed",
        "3",
        "--ui",
        "none",
        "--sim-ttft-ms",
        "2",
        "--sim-itl-ms",
        "1",
        "--artifact-dir",
        d.to_str().unwrap(),
    ]);
    assert!(o.status.success(), "{}", stderr(&o));
    let o = run(&[
        "metrics",
        d.to_str().unwrap(),
        "--definitions",
        "genai-perf-0.0.13",
        "--format",
        "genai-perf",
    ]);
    assert!(o.status.success(), "{}", stderr(&o));
    let gp = read_json(&d.join("profile_export_genai_perf.json"));
    assert_eq!(gp["request_count"]["avg"], 12.0);
    assert_eq!(gp["output_sequence_length"]["avg"], 8.0);
    // --goodput on metrics replaces the run's SLOs: with a 100 s latency bound on a
    // millisecond run, every one of the 12 requests is good.
    let o = run(&[
        "metrics",
        d.to_str().unwrap(),
        "--goodput",
        "request_latency:100000",
        "--format",
        "json",
        "--output-dir",
        d.join("slo").to_str().unwrap(),
    ]);
    assert!(o.status.success(), "{}", stderr(&o));
    let slo = read_json(&d.join("slo/inferbench_summary.json"));
    assert_eq!(slo["good_request_count"]["avg"], 12.0, "{slo}");
    let o = run(&[
        "metrics",
        d.to_str().unwrap(),
        "--goodput",
        "request_latency:100000",
    ]);
    assert!(o.status.success(), "{}", stderr(&o));
    assert!(stderr(&o).contains("not compared with the stored summary"));
    let o = run(&["crosswalk", d.to_str().unwrap()]);
    assert!(o.status.success(), "{}", stderr(&o));
    let c = read_json(&d.join("crosswalk.json"));
    assert_eq!(c["facts"]["reasoning_separate"], 0);
    let ttft = c["mappings"]
        .as_array()
        .unwrap()
        .iter()
        .find(|m| m["from_metric"] == "time_to_first_token")
        .unwrap();
    assert_eq!(ttft["to_metric"], "time_to_first_token");
}

#[test]
fn inspect_shows_the_events_and_warns_about_the_shapes_that_mislead() {
    // Reasoning in a separate field, a role-only first chunk, three tokens per chunk.
    let mock = MockServer::start(&[
        "--fast",
        "--role-first-chunk",
        "--reasoning-tokens",
        "3",
        "--tokens-per-chunk",
        "3",
    ]);
    let o = run(&[
        "inspect",
        "--url",
        &mock.url,
        "-m",
        "mock-model",
        "--streaming",
        "--isl",
        "8",
        "--osl",
        "12",
    ]);
    let out = String::from_utf8_lossy(&o.stdout);
    assert!(o.status.success(), "{}\n{out}", stderr(&o));
    assert!(out.contains("-- request body"), "{out}");
    assert!(out.contains("\"max_completion_tokens\": 12"), "{out}");
    assert!(out.contains("<= first token"), "{out}");
    assert!(out.contains("first output token"), "{out}");
    assert!(out.contains("last content"), "{out}");
    assert!(out.contains("server usage: prompt"), "{out}");
    assert!(
        out.contains("reasoning arrived in a separate field"),
        "{out}"
    );
    assert!(out.contains("role-only"), "{out}");
    assert!(out.contains("more than one token"), "{out}");
}
