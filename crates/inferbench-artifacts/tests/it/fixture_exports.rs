//! Our exports against real AIPerf 0.13.0 files (copied from the shared fixtures into
//! `tests/data/`): byte-for-byte where the content is the same, shape and order elsewhere.

use crate::common;

use common::{read, summary_from_fixture, tmpdir};
use inferbench_artifacts::records::PhaseIndices;
use inferbench_artifacts::summary_json::SummaryInfo;
use inferbench_artifacts::{
    render_console, render_raw_line, render_record_line, render_summary_csv, render_summary_json,
    write_inputs_json, write_results_ready,
};
use inferbench_core::record::{ErrorKind, EventKind, EventKindOpt, RecordError};
use inferbench_core::summary::{RecordMetric, RecordMetricValue};
use inferbench_core::{Event, Phase, Record};
use serde_json::Value;

// ---------------------------------------------------------------- CSV

fn csv_case(scenario: &str) {
    let summary = summary_from_fixture(&read(&format!("{scenario}_profile_export_aiperf.json")));
    let want = read(&format!("{scenario}_profile_export_aiperf.csv"));
    let got = render_summary_csv(&summary);
    for (i, (g, w)) in got.split("\r\n").zip(want.split("\r\n")).enumerate() {
        assert_eq!(g, w, "{scenario} CSV line {}", i + 1);
    }
    assert_eq!(got, want, "{scenario}: whole file");
}

#[test]
fn csv_reproduces_s1_byte_for_byte() {
    csv_case("s1");
}

#[test]
fn csv_reproduces_s2_reasoning_byte_for_byte() {
    csv_case("s2");
}

#[test]
fn csv_reproduces_s6_errors_and_adj_rows_byte_for_byte() {
    csv_case("s6");
}

#[test]
fn csv_sorts_by_tag_whatever_the_summary_order() {
    let mut summary = summary_from_fixture(&read("s6_profile_export_aiperf.json"));
    summary.metrics.reverse();
    assert_eq!(
        render_summary_csv(&summary),
        read("s6_profile_export_aiperf.csv")
    );
}

// ---------------------------------------------------------------- summary JSON

fn info<'a>(plan: &'a inferbench_core::RunPlan) -> SummaryInfo<'a> {
    SummaryInfo {
        benchmark_id: "0a564b70635e",
        plan,
        // 2026-11-29T18:58:04Z is 1795978684 s (date -u -d ... +%s), plus the µs of the fixture.
        start_unix_ns: 1_795_978_684_962_456_000,
        end_unix_ns: 1_795_978_686_777_644_000,
        was_cancelled: false,
        is_complete: true,
    }
}

#[test]
fn summary_json_has_aiperf_key_order_and_values() {
    let text = read("s6_profile_export_aiperf.json");
    let fixture: Value = serde_json::from_str(&text).unwrap();
    let summary = summary_from_fixture(&text);
    let plan = common::plan();
    let ours = render_summary_json(&summary, None, &info(&plan)).unwrap();
    let ours = ours.as_object().unwrap();
    let fx = fixture.as_object().unwrap();

    // Same keys in the same order, except GPU telemetry, which we do not collect.
    let want_keys: Vec<&String> = fx.keys().filter(|k| *k != "telemetry_data").collect();
    let got_keys: Vec<&String> = ours.keys().collect();
    assert_eq!(got_keys, want_keys);

    for (k, v) in fx {
        match k.as_str() {
            "telemetry_data" | "input_config" => {}
            "aiperf_version" => assert_eq!(ours[k], "inferbench-0.1.0"),
            "run_info" => {
                let keys: Vec<&String> = v.as_object().unwrap().keys().collect();
                let got: Vec<&String> = ours[k].as_object().unwrap().keys().collect();
                assert_eq!(got, keys);
                assert_eq!(ours[k]["benchmark_id"], v["benchmark_id"]);
                assert_eq!(ours[k]["random_seed"], v["random_seed"]);
                assert_eq!(ours[k]["trial"], v["trial"]);
            }
            "error_summary" => {
                // We keep no cause chain: AIPerf's optional `cause`/`cause_chain` are absent.
                let mut want = v.clone();
                for g in want.as_array_mut().unwrap() {
                    let d = g["error_details"].as_object_mut().unwrap();
                    d.remove("cause");
                    d.remove("cause_chain");
                }
                assert_eq!(ours[k], want);
            }
            // Metrics, schema version, flags and times: identical.
            _ => assert_eq!(&ours[k], v, "{k}"),
        }
    }
    // Secrets of the plan never reach the file.
    let s = serde_json::to_string(&ours).unwrap();
    assert!(!s.contains("sk-test-secret"));
    assert!(s.contains("<redacted>"));
}

#[test]
fn summary_json_puts_declared_metrics_first_and_warmup_after_end_time() {
    let text = read("s1_profile_export_aiperf.json");
    let mut summary = summary_from_fixture(&text);
    summary.metrics.reverse();
    let warm = summary_from_fixture(&text);
    let plan = common::plan();
    let ours = render_summary_json(&summary, Some(&warm), &info(&plan)).unwrap();
    let keys: Vec<&str> = ours
        .as_object()
        .unwrap()
        .keys()
        .map(|s| s.as_str())
        .collect();
    assert_eq!(
        &keys[..6],
        &[
            "schema_version",
            "aiperf_version",
            "benchmark_id",
            "request_throughput",
            "request_latency",
            "request_count"
        ]
    );
    let end = keys.iter().position(|k| *k == "end_time").unwrap();
    assert_eq!(keys[end + 1], "warmup_metrics");
    // Extras follow in the Summary's (here reversed) order: effective_latency was last.
    assert_eq!(keys[end + 2], "effective_latency");
    assert_eq!(
        ours["warmup_metrics"]["request_count"],
        serde_json::json!({"unit": "requests", "avg": 60.0})
    );
}

#[test]
fn summary_json_file_is_pretty_with_two_spaces_and_no_final_newline() {
    let text = read("s1_profile_export_aiperf.json");
    let summary = summary_from_fixture(&text);
    let plan = common::plan();
    let (_tmp, dir) = tmpdir("sumjson");
    let path =
        inferbench_artifacts::write_summary_json(&dir, "x.json", &summary, None, &info(&plan))
            .unwrap();
    let got = std::fs::read_to_string(path).unwrap();
    assert!(got.starts_with("{\n  \"schema_version\": \"1.4\",\n  \"aiperf_version\""));
    assert!(got.ends_with("\n}"));
    // The metric blocks are textually identical to AIPerf's (same float repr, same indent).
    let block = "\"request_latency\": {\n    \"unit\": \"ms\",\n    \"avg\": ";
    let want_at = text.find(block).unwrap();
    let got_at = got.find(block).unwrap();
    let want_block = &text[want_at..want_at + text[want_at..].find('}').unwrap()];
    let got_block = &got[got_at..got_at + got[got_at..].find('}').unwrap()];
    assert_eq!(got_block, want_block);
}

// ---------------------------------------------------------------- console

/// Rows of the fixture's "NVIDIA AIPerf | LLM Metrics" table, wrapped names re-joined.
fn fixture_console_rows(text: &str) -> Vec<Vec<String>> {
    let mut rows: Vec<Vec<String>> = Vec::new();
    let mut inside = false;
    for line in text.lines() {
        if line.trim() == "NVIDIA AIPerf | LLM Metrics" {
            inside = true;
            continue;
        }
        if !inside || !line.starts_with('│') {
            if inside && line.starts_with('└') {
                break;
            }
            continue;
        }
        let cells: Vec<String> = line
            .trim_matches('│')
            .split('│')
            .map(|c| c.trim().to_string())
            .collect();
        if cells[1].is_empty() {
            let last = rows.last_mut().unwrap();
            last[0] = format!("{} {}", last[0], cells[0]);
        } else {
            rows.push(cells);
        }
    }
    rows
}

/// The rows of our main metrics table (the first table titled "LLM Metrics").
fn our_console_rows(text: &str) -> Vec<Vec<String>> {
    text.lines()
        .skip_while(|l| !l.contains("LLM Metrics"))
        .take_while(|l| !l.starts_with('└'))
        .filter(|l| l.starts_with('│'))
        .skip(1) // the header row
        .map(|l| {
            l.trim_matches('│')
                .split('│')
                .map(|c| c.trim().to_string())
                .collect()
        })
        .collect()
}

fn console_case(scenario: &str) {
    let summary = summary_from_fixture(&read(&format!("{scenario}_profile_export_aiperf.json")));
    let ours = render_console(&summary);
    let want = fixture_console_rows(&read(&format!("{scenario}_profile_export_console.txt")));
    assert!(!want.is_empty());
    assert_eq!(our_console_rows(&ours), want, "{scenario}");
    assert!(ours.contains("inferbench | LLM Metrics (aiperf-0.13)"));
}

#[test]
fn console_rows_match_aiperf_order_and_numbers() {
    console_case("s1");
    console_case("s2");
    console_case("s6");
}

#[test]
fn console_has_an_error_table_only_with_errors() {
    let s6 = render_console(&summary_from_fixture(&read(
        "s6_profile_export_aiperf.json",
    )));
    assert!(s6.contains("inferbench | Error Summary"));
    assert!(s6.contains("Internal Server Error"));
    assert!(s6.contains("ClientPayloadError"));
    let s1 = render_console(&summary_from_fixture(&read(
        "s1_profile_export_aiperf.json",
    )));
    assert!(!s1.contains("Error Summary"));
}

// ---------------------------------------------------------------- profile_export.jsonl

const ANCHOR: u64 = 1_795_978_000_000_000_000;

/// The fixture line's metadata as a Record (times relative to `anchor`), and its metrics.
fn record_from_fixture(line: &Value, anchor: u64) -> (Record, Vec<RecordMetric>) {
    let m = &line["metadata"];
    let t = |k: &str| m[k].as_u64().map(|w| w - anchor);
    let error = line.get("error").map(|e| RecordError {
        kind: ErrorKind::Http,
        code: e["code"].as_u64().map(|c| c as u16),
        error_type: e["type"].as_str().unwrap().into(),
        message: e["message"].as_str().unwrap().into(),
    });
    let record = Record {
        id: 0,
        request_id: m["x_request_id"].as_str().unwrap().into(),
        correlation_id: m["x_correlation_id"].as_str().unwrap().into(),
        conversation_id: m["conversation_id"].as_str().unwrap().into(),
        session_num: m["session_num"].as_u64().unwrap(),
        turn_index: m["turn_index"].as_u64().unwrap() as u32,
        worker: 7,
        streaming: true,
        planned_ns: t("credit_issued_ns").unwrap(),
        start_ns: t("request_start_ns").unwrap(),
        ack_ns: t("request_ack_ns"),
        end_ns: t("request_end_ns").unwrap(),
        status: line.get("status").and_then(Value::as_u64).map(|s| s as u16),
        error,
        ..Default::default()
    };
    let no_metrics = serde_json::Map::new();
    let metrics = line
        .get("metrics")
        .and_then(Value::as_object)
        .unwrap_or(&no_metrics)
        .iter()
        .map(|(tag, v)| RecordMetric {
            tag: tag.clone().into(),
            unit: v["unit"].as_str().unwrap().to_string().into(),
            value: match &v["value"] {
                Value::Number(n) if n.is_u64() => RecordMetricValue::Int(n.as_i64().unwrap()),
                Value::Number(n) => RecordMetricValue::Float(n.as_f64().unwrap()),
                Value::Array(a) => {
                    RecordMetricValue::List(a.iter().map(|x| x.as_f64().unwrap()).collect())
                }
                other => panic!("unexpected metric value {other}"),
            },
        })
        .collect();
    (record, metrics)
}

/// The fixture line with AIPerf's random process ids replaced by ours.
fn with_our_ids(line: &str, v: &Value) -> String {
    line.replace(v["metadata"]["worker_id"].as_str().unwrap(), "worker_7")
        .replace(
            v["metadata"]["record_processor_id"].as_str().unwrap(),
            "record_processor_0",
        )
}

const PROFILING_ONLY: PhaseIndices = PhaseIndices {
    phase: Phase::Profiling,
    phase_index: 0,
    profiling_index: Some(0),
};

fn record_line_case(line: &str) {
    let v: Value = serde_json::from_str(line).unwrap();
    let (record, metrics) = record_from_fixture(&v, ANCHOR);
    let mut out = Vec::new();
    render_record_line(&mut out, ANCHOR, PROFILING_ONLY, &record, &metrics);
    assert_eq!(
        String::from_utf8(out).unwrap(),
        format!("{}\n", with_our_ids(line, &v))
    );
}

#[test]
fn record_lines_match_aiperf_byte_for_byte() {
    for line in read("s1_profile_export.jsonl").lines() {
        record_line_case(line);
    }
}

#[test]
fn http_error_record_line_matches_aiperf_byte_for_byte() {
    // The first S6 error: HTTP 500, no response head time, `error` without null fields.
    let text = read("s6_profile_export_errors.jsonl");
    let line = text.lines().next().unwrap();
    assert!(line.contains("\"code\":500"));
    record_line_case(line);
}

#[test]
fn cancelled_records_carry_the_cancellation_time_after_was_cancelled() {
    let record = Record {
        cancelled: true,
        cancel_ns: Some(50),
        end_ns: 60,
        ..Default::default()
    };
    let mut out = Vec::new();
    render_record_line(&mut out, 1000, PROFILING_ONLY, &record, &[]);
    let s = String::from_utf8(out).unwrap();
    assert!(
        s.contains(
            "\"was_cancelled\":true,\"cancellation_time_ns\":1050,\"context_overflow_skip\""
        ),
        "{s}"
    );
    assert!(s.ends_with("\"metrics\":{}}\n"), "{s}");
}

// ---------------------------------------------------------------- profile_export_raw.jsonl

fn raw_case(line: &str) {
    let v: Value = serde_json::from_str(line).unwrap();
    // AIPerf's perf counter and wall clock differ by a constant; that constant is our anchor.
    let anchor =
        v["metadata"]["request_start_ns"].as_u64().unwrap() - v["start_perf_ns"].as_u64().unwrap();
    let (mut record, _) = record_from_fixture(&v, anchor);
    for resp in v["responses"].as_array().unwrap() {
        let t_ns = resp["perf_ns"].as_u64().unwrap();
        if let Some(text) = resp.get("text") {
            record.streaming = false;
            record.events.push(Event {
                t_ns,
                kind: EventKindOpt(EventKind::Body),
                raw: Some(text.as_str().unwrap().into()),
                ..Default::default()
            });
            continue;
        }
        let data = resp["packets"][0]["value"].as_str().unwrap();
        let kind = if data == "[DONE]" {
            EventKind::Done
        } else {
            EventKind::Data
        };
        record.events.push(Event {
            t_ns,
            kind: EventKindOpt(kind),
            raw: Some(data.into()),
            ..Default::default()
        });
    }
    let headers: Vec<(String, String)> = v["request_headers"]
        .as_object()
        .unwrap()
        .iter()
        .map(|(k, h)| (k.clone(), h.as_str().unwrap().to_string()))
        .collect();
    let body = serde_json::to_string(&v["payload"]).unwrap();
    let mut out = Vec::new();
    render_raw_line(
        &mut out,
        anchor,
        PROFILING_ONLY,
        &record,
        &headers,
        Some(&body),
    );
    assert_eq!(
        String::from_utf8(out).unwrap(),
        format!("{}\n", with_our_ids(line, &v))
    );
}

#[test]
fn raw_streaming_line_matches_aiperf_byte_for_byte() {
    raw_case(read("s1_profile_export_raw.jsonl").trim_end());
}

#[test]
fn raw_non_streaming_line_matches_aiperf_byte_for_byte() {
    raw_case(read("s5_profile_export_raw.jsonl").trim_end());
}

#[test]
fn raw_http_error_line_matches_aiperf_byte_for_byte() {
    raw_case(read("s6_profile_export_raw_error.jsonl").trim_end());
}

#[test]
fn raw_redacts_sensitive_headers_and_keeps_payload_bytes() {
    let record = Record {
        streaming: true,
        ..Default::default()
    };
    let headers = vec![
        ("Authorization".to_string(), "Bearer sk-live".to_string()),
        ("X-Request-ID".to_string(), "r1".to_string()),
    ];
    let body = r#"{"z":1,"a":[1.50,2]}"#;
    let mut out = Vec::new();
    render_raw_line(&mut out, 0, PROFILING_ONLY, &record, &headers, Some(body));
    let s = String::from_utf8(out).unwrap();
    assert!(!s.contains("sk-live"));
    assert!(s.contains(r#""request_headers":{"Authorization":"<redacted>","X-Request-ID":"r1"}"#));
    // Verbatim: not reordered, and `1.50` not reformatted.
    assert!(
        s.ends_with("\"payload\":{\"z\":1,\"a\":[1.50,2]}}\n"),
        "{s}"
    );
    let not_json = "plain text";
    let mut out = Vec::new();
    render_raw_line(
        &mut out,
        0,
        PROFILING_ONLY,
        &record,
        &headers,
        Some(not_json),
    );
    let v: Value = serde_json::from_slice(&out).unwrap();
    assert_eq!(v["payload"], "plain text");
}

// ---------------------------------------------------------------- small files

#[test]
fn inputs_json_is_pretty_like_aiperf() {
    let want = read("s1_inputs_2sessions.json");
    let value: Value = serde_json::from_str(&want).unwrap();
    let (_tmp, dir) = tmpdir("inputs");
    let path = write_inputs_json(&dir, &value).unwrap();
    assert_eq!(std::fs::read_to_string(path).unwrap(), want);
}

#[test]
fn results_ready_matches_aiperf() {
    let (_tmp, dir) = tmpdir("ready");
    let path = write_results_ready(&dir, false, false).unwrap();
    assert_eq!(
        std::fs::read_to_string(&path).unwrap(),
        read("s1_aiperf_results_ready.json")
    );
    write_results_ready(&dir, true, true).unwrap();
    assert_eq!(
        std::fs::read_to_string(&path).unwrap(),
        r#"{"ready":true,"was_cancelled":true,"partial":true}"#
    );
}
