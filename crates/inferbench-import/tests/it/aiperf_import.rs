//! The AIPerf importer on small hand-written directories: the raw-only path (tokens counted
//! on import), errors that name the file, line and field, a cut last line.

use std::path::{Path, PathBuf};

use inferbench_core::{EventKind, Phase};
use inferbench_import::ImportError;
use inferbench_import::aiperf::{PLACEHOLDER_TEXT, import, import_full};

fn dir(name: &str, files: &[(&str, &str)]) -> PathBuf {
    let d = Path::new(env!("CARGO_TARGET_TMPDIR")).join(format!("aiperf-import-{name}"));
    let _ = std::fs::remove_dir_all(&d);
    std::fs::create_dir_all(&d).unwrap();
    for (f, text) in files {
        std::fs::write(d.join(f), text).unwrap();
    }
    d
}

fn words(s: &str) -> u64 {
    s.split_whitespace().count() as u64
}

fn meta(id: &str, start: u64, end: u64) -> String {
    format!(
        r#"{{"session_num":0,"x_request_id":"{id}","x_correlation_id":"c-{id}","conversation_id":"session_000000","turn_index":0,"credit_issued_ns":{c},"request_start_ns":{start},"request_end_ns":{end},"worker_id":"worker_a","benchmark_phase":"profiling","was_cancelled":false}}"#,
        c = start - 1000
    )
}

fn chunk(content: &str) -> String {
    let v = serde_json::json!({"choices": [{"index": 0, "delta": {"content": content}}]});
    serde_json::to_string(&v.to_string()).unwrap()
}

/// One streamed request: start at wall 1_000_000 (perf 500), "one two" at perf +100,
/// " three" at +300, [DONE] in the same read as " three".
fn raw_line() -> String {
    format!(
        r#"{{"metadata":{m},"start_perf_ns":500,"request_headers":{{"User-Agent":"aiperf/0.14.1"}},"status":200,"responses":[{{"perf_ns":600,"packets":[{{"name":"data","value":{a}}}]}},{{"perf_ns":800,"packets":[{{"name":"data","value":{b}}}]}},{{"perf_ns":800,"packets":[{{"name":"data","value":"[DONE]"}}]}}],"payload":{{"messages":[{{"role":"user","content":"a b c"}}],"model":"m","stream":true,"max_tokens":7}}}}"#,
        m = meta("r1", 1_000_000, 1_000_400),
        a = chunk("one two"),
        b = chunk(" three"),
    )
}

#[test]
fn raw_only_counts_tokens_with_the_given_tokenizer() {
    let d = dir(
        "raw-only",
        &[("profile_export_raw.jsonl", &format!("{}\n", raw_line()))],
    );
    let imp = import_full(&d, &words).unwrap();
    let run = &imp.run;
    assert!(imp.record_metrics.is_empty());
    // No summary: the version from the User-Agent; chat inferred from `messages`.
    assert_eq!(run.version, "0.14.1");
    assert!(run.losses.iter().any(|l| l.contains("0.14.1")));
    assert_eq!(run.evidence.header.endpoint_type, "chat");
    assert!(run.evidence.header.streaming);
    let r = &run.evidence.records[0];
    // Anchor: the credit at 999_000, so start = 1000; responses at 1000 + 100 and + 300.
    assert_eq!(run.evidence.header.anchor_unix_ns, 999_000);
    assert_eq!(r.start_ns, 1000);
    assert_eq!(r.planned_ns, 0);
    let times: Vec<u64> = r.events.iter().map(|e| e.t_ns).collect();
    assert_eq!(times, vec![1100, 1300, 1300]);
    // The last two share a read: one frame.
    assert_eq!(r.frames.len(), 2);
    assert_eq!(r.events[2].frame, 1);
    assert_eq!(r.events[2].kind(), EventKind::Done);
    // Words: input "a b c" = 3; output "one two three" = 3; no reasoning.
    assert_eq!(r.tokens.input, Some(3));
    assert_eq!(r.tokens.output, Some(3));
    assert_eq!(r.tokens.reasoning, None);
    assert_eq!(r.requested_output_tokens, Some(7));
    assert!(run.losses.iter().any(|l| l.contains("importing tokenizer")));
    assert!(
        run.losses
            .iter()
            .any(|l| l.contains("derived from the records"))
    );
}

#[test]
fn records_level_rebuilds_reasoning_then_output() {
    // TTFT 1 ms, gaps 2 and 3 ms, first output at 3 ms: the first event is reasoning, the
    // next two content; usage on the last one.
    let line = format!(
        r#"{{"metadata":{m},"metrics":{{"request_latency":{{"value":6.0,"unit":"ms"}},"time_to_first_token":{{"value":1.0,"unit":"ms"}},"time_to_first_output_token":{{"value":3.0,"unit":"ms"}},"inter_chunk_latency":{{"value":[2.0,3.0],"unit":"ms"}},"input_sequence_length":{{"value":5,"unit":"tokens"}},"output_token_count":{{"value":2,"unit":"tokens"}},"reasoning_token_count":{{"value":1,"unit":"tokens"}},"usage_completion_tokens":{{"value":3,"unit":"tokens"}}}}}}"#,
        m = meta("r1", 10_000_000, 17_000_000)
    );
    let d = dir("records", &[("profile_export.jsonl", &format!("{line}\n"))]);
    let run = import(&d, &words).unwrap();
    let r = &run.evidence.records[0];
    let start = r.start_ns;
    let times: Vec<u64> = r.events.iter().map(|e| e.t_ns - start).collect();
    assert_eq!(times, vec![1_000_000, 3_000_000, 6_000_000]);
    assert_eq!(r.events[0].reasoning.as_deref(), Some(PLACEHOLDER_TEXT));
    assert_eq!(r.events[0].content, None);
    assert_eq!(r.events[1].content.as_deref(), Some(PLACEHOLDER_TEXT));
    assert_eq!(r.events[2].usage.as_ref().unwrap()["completion_tokens"], 3);
    assert_eq!(
        (r.tokens.input, r.tokens.output, r.tokens.reasoning),
        (Some(5), Some(2), Some(1))
    );
    assert_eq!(r.phase(), Phase::Profiling);
}

fn format_error(e: ImportError) -> String {
    assert!(matches!(e, ImportError::Format { .. }), "{e:?}");
    e.to_string()
}

#[test]
fn bad_fields_name_file_line_and_field() {
    let good = raw_line();
    let bad_start = good.replace(
        "\"request_start_ns\":1000000",
        "\"request_start_ns\":\"soon\"",
    );
    let d = dir(
        "bad-start",
        &[(
            "profile_export_raw.jsonl",
            &format!("{good}\n{bad_start}\n"),
        )],
    );
    let e = format_error(import(&d, &words).unwrap_err());
    assert!(
        e.contains("profile_export_raw.jsonl:2: metadata.request_start_ns"),
        "{e}"
    );

    let early = good.replace("\"perf_ns\":600", "\"perf_ns\":400");
    let d = dir(
        "early",
        &[("profile_export_raw.jsonl", &format!("{early}\n"))],
    );
    let e = format_error(import(&d, &words).unwrap_err());
    assert!(
        e.contains(":1: responses[0].perf_ns: 400 is before start_perf_ns 500"),
        "{e}"
    );

    let d = dir(
        "not-json",
        &[("profile_export.jsonl", "{\"metadata\":\n[1]\n")],
    );
    let e = format_error(import(&d, &words).unwrap_err());
    assert!(
        e.contains("profile_export.jsonl:1: not a JSON object"),
        "{e}"
    );

    let no_meta = r#"{"metrics":{}}"#;
    let d = dir(
        "no-meta",
        &[("profile_export.jsonl", &format!("{no_meta}\n"))],
    );
    let e = format_error(import(&d, &words).unwrap_err());
    assert!(e.contains(":1: metadata: missing"), "{e}");

    let bad_value = format!(
        r#"{{"metadata":{m},"metrics":{{"request_latency":{{"value":"x","unit":"ms"}}}}}}"#,
        m = meta("r", 5000, 6000)
    );
    let d = dir(
        "bad-value",
        &[("profile_export.jsonl", &format!("{bad_value}\n"))],
    );
    let e = format_error(import(&d, &words).unwrap_err());
    assert!(e.contains(":1: metrics.request_latency.value"), "{e}");

    let d = dir(
        "bad-endpoint",
        &[
            ("profile_export.jsonl", ""),
            (
                "profile_export_aiperf.json",
                r#"{"input_config":{"endpoint":{"type":"fax"}}}"#,
            ),
        ],
    );
    let e = format_error(import(&d, &words).unwrap_err());
    assert!(
        e.contains("profile_export_aiperf.json: input_config.endpoint.type"),
        "{e}"
    );
}

#[test]
fn a_cut_last_line_is_dropped_and_reported() {
    let good = raw_line();
    let cut = &good[..good.len() / 2];
    let d = dir(
        "cut",
        &[("profile_export_raw.jsonl", &format!("{good}\n{cut}"))],
    );
    let run = import(&d, &words).unwrap();
    assert_eq!(run.evidence.records.len(), 1);
    assert!(run.losses.iter().any(|l| l.contains("cut short")));
}

#[test]
fn a_summary_alone_is_not_enough() {
    let d = dir("summary-only", &[("profile_export_aiperf.json", "{}")]);
    let e = format_error(import(&d, &words).unwrap_err());
    assert!(e.contains("no per-request file"), "{e}");
}
