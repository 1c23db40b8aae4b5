//! The trace formats besides mooncake (bailian, burst_gpt, sagemaker data capture), each
//! from a file written from its documentation with the expected payloads worked by hand;
//! their bad lines; `analyze_trace` and `validate_mooncake_trace` on a hand-analyzed trace.

use crate::common;

use std::path::{Path, PathBuf};

use inferbench_core::plan::{EndpointType, RunPlan};
use inferbench_core::workload::Payload;
use inferbench_workload::dataset::{
    BuiltWorkload, DatasetKind, analyze_trace, build_workload, validate_mooncake_trace,
};
use inferbench_workload::{Corpus, SamplingStrategy, Tokenizer};
use proptest::prelude::*;
use serde_json::{Value, json};

fn tok() -> &'static Tokenizer {
    common::builtin()
}

fn data(name: &str) -> String {
    common::data(name)
}

fn plan_for(file: &str, kind: Option<&str>) -> RunPlan {
    let mut p = common::base_plan(EndpointType::Chat);
    p.dataset.input_file = Some(file.to_string());
    p.dataset.custom_dataset_type = kind.map(String::from);
    p
}

fn build(p: &RunPlan) -> Result<BuiltWorkload, String> {
    build_workload(p, tok(), Corpus::shakespeare()).map_err(|e| e.to_string())
}

fn body(p: &Payload) -> Value {
    serde_json::from_str(&p.body).unwrap()
}

fn content(p: &Payload) -> String {
    body(p)["messages"][0]["content"]
        .as_str()
        .unwrap()
        .to_string()
}

/// A file in a fresh directory, removed (with the directory) on drop.
struct Temp {
    file: PathBuf,
    _dir: tempfile::TempDir,
}

impl Temp {
    fn new(name: &str, text: &str) -> Temp {
        let dir = tempfile::Builder::new()
            .prefix("ib-traces-")
            .tempdir()
            .unwrap();
        let p = dir.path().join(name);
        std::fs::write(&p, text).unwrap();
        Temp { file: p, _dir: dir }
    }
    fn path(&self) -> String {
        self.file.display().to_string()
    }
}

// ---------------------------------------------------------------- bailian

#[test]
fn bailian_sessions_follow_parent_links_in_turn_order() {
    // Detected from chat_id/parent_chat_id/turn; named explicitly gives the same workload.
    let w = build(&plan_for(&data("bailian.jsonl"), None)).unwrap();
    assert_eq!(w.kind, DatasetKind::BailianTrace);
    let named = build(&plan_for(&data("bailian.jsonl"), Some("bailian_trace"))).unwrap();
    assert_eq!(named.workload, w.workload);
    let p = &w.workload.payloads;
    // 161 → 160 → 159 (root): one session "159", turns 1, 2, 3 although 161 is read
    // before 160; 200 is its own root.
    let ids: Vec<(&str, u32)> = p
        .iter()
        .map(|x| (x.conversation_id.as_str(), x.turn_index))
        .collect();
    assert_eq!(ids, [("159", 0), ("159", 1), ("159", 2), ("200", 0)]);
    // Seconds → ms; lengths exact; output_length → max_completion_tokens.
    let ts: Vec<f64> = p.iter().map(|x| x.timestamp_ms.unwrap()).collect();
    for (got, want) in ts.iter().zip([61_114.0, 62_500.0, 63_000.0, 61_500.0]) {
        assert!((got - want).abs() < 1e-6, "{got} vs {want}");
    }
    let isl: Vec<u64> = p.iter().map(|x| x.input_tokens.unwrap()).collect();
    assert_eq!(isl, [40, 48, 70, 10]);
    let osl: Vec<u64> = p
        .iter()
        .map(|x| body(x)["max_completion_tokens"].as_u64().unwrap())
        .collect();
    assert_eq!(osl, [13, 8, 8, 5]);
    // Self-contained rows: no history; a timestamp on the first row: fixed schedule.
    assert!(p.iter().all(|x| !x.history));
    assert!(w.has_timestamps);
    assert_eq!(w.default_sampling, SamplingStrategy::Sequential);
    // 16-token blocks: 160 is blocks 1089,1090,1091 (48 tokens); 161 repeats them first.
    assert!(content(&p[2]).starts_with(&content(&p[1])));
    let shared = tok().count(&common_prefix(&content(&p[0]), &content(&p[1])));
    assert!(
        shared >= 32,
        "two 16-token blocks shared, got {shared} tokens"
    );
}

fn common_prefix(a: &str, b: &str) -> String {
    a.chars()
        .zip(b.chars())
        .take_while(|(x, y)| x == y)
        .map(|(x, _)| x)
        .collect()
}

#[test]
fn bailian_bad_lines_name_file_line_and_field() {
    let cases = [
        (
            r#"{"chat_id": 1, "timestamp": 1, "input_length": "x", "output_length": 2}"#,
            "field 'input_length': expected an integer >= 0",
        ),
        (
            r#"{"parent_chat_id": -1, "timestamp": 1, "input_length": 3, "output_length": 2}"#,
            "field 'chat_id': required",
        ),
        (
            r#"{"chat_id": 1, "timestamp": -2, "input_length": 3, "output_length": 2}"#,
            "field 'timestamp': expected a number of seconds >= 0",
        ),
        (
            r#"{"chat_id": 1, "timestamp": 1, "input_length": 3, "output_length": 2, "hash_ids": ["a"]}"#,
            "field 'hash_ids': expected a list of integers",
        ),
        (
            r#"{"chat_id": 1, "timestamp": 1, "input_length": 3, "output_length": 2, "session": 4}"#,
            "field 'session': unknown field for bailian_trace",
        ),
        // Three 16-token blocks need more than 32 tokens.
        (
            r#"{"chat_id": 1, "timestamp": 1, "input_length": 20, "output_length": 2, "hash_ids": [1, 2, 3]}"#,
            "field 'hash_ids': input_length 20 is too short",
        ),
    ];
    let good = r#"{"chat_id": 9, "parent_chat_id": -1, "timestamp": 0, "input_length": 4, "output_length": 1, "turn": 1}"#;
    for (bad, want) in cases {
        let f = Temp::new("b.jsonl", &format!("{good}\n{bad}\n"));
        let e = build(&plan_for(&f.path(), Some("bailian_trace"))).unwrap_err();
        assert!(e.starts_with(&format!("{}:2: {want}", f.path())), "{e}");
    }
}

// ---------------------------------------------------------------- burst_gpt

#[test]
fn burst_gpt_rows_are_independent_requests_in_ms() {
    let w = build(&plan_for(&data("burst_gpt.csv"), None)).unwrap();
    assert_eq!(w.kind, DatasetKind::BurstGptTrace);
    let p = &w.workload.payloads;
    assert_eq!(p.len(), 2);
    assert_eq!(p[0].conversation_id, "session_000000");
    assert_eq!(p[1].conversation_id, "session_000001");
    assert_eq!(p[0].timestamp_ms, Some(5000.0));
    assert_eq!(p[1].timestamp_ms, Some(7500.0));
    // Request tokens → prompt length, Response tokens → the output limit; the quoted "20"
    // and the quoted comma in Log Type are read as CSV.
    assert_eq!(p[0].input_tokens, Some(12));
    assert_eq!(p[1].input_tokens, Some(20));
    assert_eq!(body(&p[0])["max_completion_tokens"], json!(7));
    assert_eq!(body(&p[1])["max_completion_tokens"], json!(3));
    assert!(w.has_timestamps);
}

#[test]
fn burst_gpt_bad_lines_name_the_column() {
    let head = "Timestamp,Model,Request tokens,Response tokens\n0,m,4,4\n";
    let cases = [
        (
            "1,m,abc,4",
            3,
            "field 'Request tokens': expected an integer >= 0",
        ),
        (
            "x,m,4,4",
            3,
            "field 'Timestamp': expected a number of seconds >= 0",
        ),
        ("1,m,4", 3, "field 'Response tokens': missing"),
        ("1,\"m,4,4", 3, "column 2: unclosed quote"),
    ];
    for (bad, line, want) in cases {
        let f = Temp::new("t.csv", &format!("{head}{bad}\n"));
        let e = build(&plan_for(&f.path(), Some("burst_gpt_trace"))).unwrap_err();
        assert!(
            e.starts_with(&format!("{}:{line}: {want}", f.path())),
            "{e}"
        );
    }
    let f = Temp::new("t.csv", "Timestamp,Request tokens\n1,2\n");
    let e = build(&plan_for(&f.path(), Some("burst_gpt_trace"))).unwrap_err();
    assert!(
        e.starts_with(&format!(
            "{}:1: the header has no \"Response tokens\"",
            f.path()
        )),
        "{e}"
    );
}

// ---------------------------------------------------------------- sagemaker

#[test]
fn sagemaker_captures_replay_messages_zero_aligned_in_time_order() {
    let w = build(&plan_for(&data("sagemaker.jsonl"), None)).unwrap();
    assert_eq!(w.kind, DatasetKind::SagemakerDataCapture);
    let p = &w.workload.payloads;
    // The BASE64 record (00:03:17.500) comes first at 0 ms; the JSON one 500 ms later.
    assert_eq!(p[0].timestamp_ms, Some(0.0));
    assert_eq!(p[1].timestamp_ms, Some(500.0));
    assert_eq!(
        body(&p[0])["messages"],
        json!([{"role": "system", "content": "Be brief"}, {"role": "user", "content": "Hi"}])
    );
    assert_eq!(body(&p[0])["max_completion_tokens"], json!(9));
    assert_eq!(
        body(&p[1])["messages"],
        json!([{"role": "user", "content": "Hello"}])
    );
    assert_eq!(body(&p[1])["max_completion_tokens"], json!(50));
    assert!(p.iter().all(|x| !x.history));
    // A directory of capture files is read recursively, in path order.
    let tmp = tempfile::Builder::new().prefix("ib-sm-").tempdir().unwrap();
    let dir = tmp.path();
    std::fs::create_dir_all(dir.join("2026/04")).unwrap();
    std::fs::copy(data("sagemaker.jsonl"), dir.join("2026/04/a.jsonl")).unwrap();
    let wd = build(&plan_for(&dir.display().to_string(), None)).unwrap();
    drop(tmp);
    assert_eq!(wd.kind, DatasetKind::SagemakerDataCapture);
    assert_eq!(wd.workload.payloads.len(), 2);
}

#[test]
fn sagemaker_bad_lines_name_the_nested_field() {
    let good = std::fs::read_to_string(data("sagemaker.jsonl")).unwrap();
    let first = good.lines().next().unwrap();
    let enc = |body: &str| {
        json!({"captureData": {"endpointInput": {"data": body, "encoding": "JSON"}},
               "eventMetadata": {"inferenceTime": "2026-04-29T00:03:18Z"}})
        .to_string()
    };
    let cases = [
        (
            json!({"captureData": {"endpointInput": {"data": "{}", "encoding": "JSON"}}, "eventMetadata": {}}).to_string(),
            "field 'eventMetadata.inferenceTime': required",
        ),
        (
            json!({"captureData": {}, "eventMetadata": {"inferenceTime": "noon"}}).to_string(),
            "field 'eventMetadata.inferenceTime': \"noon\" is not an ISO 8601",
        ),
        (
            enc(r#"{"prompt": "hi"}"#),
            "field 'captureData.endpointInput.data.messages': required",
        ),
        (
            enc(r#"{"messages": [{"content": "no role"}]}"#),
            "field 'captureData.endpointInput.data.messages[0]': a message needs a role",
        ),
        (
            json!({"captureData": {"endpointInput": {"data": "*", "encoding": "BASE64"}},
                   "eventMetadata": {"inferenceTime": "2026-04-29T00:03:18Z"}})
            .to_string(),
            "field 'captureData.endpointInput.data': not valid base64",
        ),
        (
            json!({"captureData": {"endpointInput": {"data": "a,b", "encoding": "CSV"}},
                   "eventMetadata": {"inferenceTime": "2026-04-29T00:03:18Z"}})
            .to_string(),
            "field 'captureData.endpointInput.encoding': \"CSV\" is not supported",
        ),
    ];
    for (bad, want) in cases {
        let f = Temp::new("c.jsonl", &format!("{first}\n{bad}\n"));
        let e = build(&plan_for(&f.path(), Some("sagemaker_data_capture"))).unwrap_err();
        assert!(e.starts_with(&format!("{}:2: {want}", f.path())), "{e}");
    }
}

#[test]
fn an_unknown_trace_type_lists_the_supported_ones() {
    let e = build(&plan_for(&data("bailian.jsonl"), Some("azure_trace"))).unwrap_err();
    assert!(e.contains("\"azure_trace\" is not supported"), "{e}");
    assert!(
        e.contains("bailian_trace, burst_gpt_trace, baseten_trace, sagemaker_data_capture"),
        "{e}"
    );
    assert!(e.contains("speed_bench_*"), "{e}");
}

// ---------------------------------------------------------------- trace tools

#[test]
fn analyze_trace_matches_the_hand_analysis() {
    // Rows: A [1,2,3] isl 20, B [1,2,4] isl 24, C [5] isl 8, D no ids isl 12; block 4.
    let a = analyze_trace(Path::new(&data("mooncake_analyze.jsonl")), 4).unwrap();
    assert_eq!(a.total_requests, 4);
    // Prefixes (1)×2 (1,2)×2 (1,2,3) (1,2,4) (5): 5 distinct, 4 of 7 occurrences reused.
    assert_eq!(a.unique_prefixes, 5);
    assert!((a.prefix_reuse_ratio - 4.0 / 7.0).abs() < 1e-12);
    // First blocks 1 (twice) and 5: one group.
    assert_eq!(a.num_prefix_groups, 1);
    // Hit rates: A 0/3, B 2/3 (1 and 2 seen), C 0/1; D has no ids.
    let h = a.hit_rate_stats.as_ref().unwrap();
    assert!((a.cache_hit_rate - 2.0 / 9.0).abs() < 1e-12);
    assert!((h.max - 2.0 / 3.0).abs() < 1e-12 && h.min == 0.0);
    // Context: A and B repeat (0,1),(1,2) → 2×4 = 8; C, D 0. Unique: 12, 16, 8, 12.
    let c = a.context_length_stats.as_ref().unwrap();
    assert_eq!(
        (c.mean, c.std_dev, c.min, c.p25, c.median, c.p75, c.max),
        (4.0, 4.0, 0.0, 0.0, 4.0, 8.0, 8.0)
    );
    let u = a.unique_prompt_length_stats.as_ref().unwrap();
    assert_eq!(
        (u.mean, u.min, u.p25, u.median, u.p75, u.max),
        (12.0, 8.0, 11.0, 12.0, 13.0, 16.0)
    );
    assert!((u.std_dev - 8f64.sqrt()).abs() < 1e-12);
    assert_eq!((a.min_isl, a.max_isl, a.avg_isl), (8, 24, 16.0));
    assert_eq!((a.min_osl, a.max_osl, a.avg_osl), (2, 8, 5.0));
    // Block 16: A's context is 32 > its ISL 20, so its unique length is -12 (as AIPerf).
    let b = analyze_trace(Path::new(&data("mooncake_analyze.jsonl")), 16).unwrap();
    assert_eq!(b.unique_prompt_length_stats.unwrap().min, -12.0);
    assert_eq!(b.cache_hit_rate, a.cache_hit_rate);
    // The JSON report has AIPerf's field names.
    let v = serde_json::to_value(&a).unwrap();
    for k in [
        "total_requests",
        "unique_prefixes",
        "cache_hit_rate",
        "isl_stats",
        "hit_rate_stats",
    ] {
        assert!(v.get(k).is_some(), "{k}");
    }
    assert!(v["isl_stats"].get("std_dev").is_some());
    let f = Temp::new("x.jsonl", "{\"input_length\": 1}\n{\"hash_ids\": 3}\n");
    let e = analyze_trace(&f.file, 4).unwrap_err().to_string();
    assert!(
        e.starts_with(&format!("{}:2: field 'hash_ids'", f.path())),
        "{e}"
    );
}

#[test]
fn validate_mooncake_trace_lists_each_bad_line() {
    let (n, errs) = validate_mooncake_trace(Path::new(&data("mooncake.jsonl")), 10).unwrap();
    assert!(n >= 5 && errs.is_empty(), "{errs:?}");
    let text = "{\"input_length\": 4}\n\n{\"input_length\": 4, \"text_input\": \"x\"}\nnot json\n{\"text_input\": \"a\", \"hash_ids\": [1]}\n";
    let f = Temp::new("m.jsonl", text);
    let (n, errs) = validate_mooncake_trace(&f.file, 10).unwrap();
    assert_eq!(n, 4);
    let errs: Vec<String> = errs.iter().map(|e| e.to_string()).collect();
    assert_eq!(errs.len(), 3, "{errs:?}");
    assert!(
        errs[0].starts_with(&format!("{}:3: field 'text_input'", f.path())),
        "{errs:?}"
    );
    assert!(
        errs[1].starts_with(&format!("{}:4: not valid JSON", f.path())),
        "{errs:?}"
    );
    assert!(
        errs[2].starts_with(&format!("{}:5: field 'hash_ids'", f.path())),
        "{errs:?}"
    );
    // At most max_errors.
    let (_, two) = validate_mooncake_trace(&f.file, 2).unwrap();
    assert_eq!(two.len(), 2);
}

// ---------------------------------------------------------------- no panics

proptest! {
    #![proptest_config(ProptestConfig { cases: 48, ..ProptestConfig::default() })]

    /// Any line after a good one is loaded or refused with the file named, never a panic.
    #[test]
    fn arbitrary_trace_lines_never_panic(
        line in prop_oneof![
            "[ -~]{0,60}",
            Just("{\"chat_id\": 1, \"timestamp\": 1e308, \"input_length\": 1, \"output_length\": 1}".to_string()),
            Just("1e999,m,1,1".to_string()),
            Just("{\"captureData\": {\"endpointInput\": {\"data\": \"=\"}}, \"eventMetadata\": {\"inferenceTime\": \"9999-12-31T23:59:59.99999999999+23:59\"}}".to_string()),
        ],
        which in 0usize..4,
    ) {
        let (name, head, kind) = [
            ("b.jsonl", "{\"chat_id\": 1, \"timestamp\": 0, \"input_length\": 2, \"output_length\": 1}", "bailian_trace"),
            ("t.csv", "Timestamp,Request tokens,Response tokens\n0,2,1", "burst_gpt_trace"),
            ("s.jsonl", "{\"captureData\": {\"endpointInput\": {\"data\": \"{\\\"messages\\\": [{\\\"role\\\": \\\"user\\\", \\\"content\\\": \\\"x\\\"}]}\", \"encoding\": \"JSON\"}}, \"eventMetadata\": {\"inferenceTime\": \"2026-01-01T00:00:00Z\"}}", "sagemaker_data_capture"),
            ("m.jsonl", "{\"input_length\": 2}", "mooncake_trace"),
        ][which];
        let f = Temp::new(name, &format!("{head}\n{line}\n"));
        if let Err(e) = build(&plan_for(&f.path(), Some(kind))) {
            prop_assert!(e.starts_with(&f.path()), "{}", e);
        }
        let _ = validate_mooncake_trace(&f.file, 10);
        let _ = analyze_trace(&f.file, 4);
    }
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 256, ..ProptestConfig::default() })]

    /// The fuzz target's property, on arbitrary text: every parser refuses by naming the
    /// file, never panics.
    #[test]
    fn check_trace_text_never_panics(text in "(\\PC{0,40}\n){0,4}") {
        for kind in [
            DatasetKind::MooncakeTrace,
            DatasetKind::BailianTrace,
            DatasetKind::BurstGptTrace,
            DatasetKind::SagemakerDataCapture,
        ] {
            if let Err(e) = inferbench_workload::dataset::check_trace_text(kind, "f.jsonl", &text) {
                prop_assert!(e.to_string().starts_with("f.jsonl"), "{}", e);
            }
        }
    }
}

#[test]
fn check_trace_text_counts_rows_of_the_documented_files() {
    use inferbench_workload::dataset::check_trace_text;
    let read = |n: &str| std::fs::read_to_string(data(n)).unwrap();
    assert_eq!(
        check_trace_text(DatasetKind::BailianTrace, "b", &read("bailian.jsonl")),
        Ok(4)
    );
    assert_eq!(
        check_trace_text(DatasetKind::BurstGptTrace, "c", &read("burst_gpt.csv")),
        Ok(2)
    );
    assert_eq!(
        check_trace_text(
            DatasetKind::SagemakerDataCapture,
            "s",
            &read("sagemaker.jsonl")
        ),
        Ok(2)
    );
    let e = check_trace_text(
        DatasetKind::BurstGptTrace,
        "c",
        "Timestamp,Request tokens,Response tokens\n1,2,-3\n",
    )
    .unwrap_err()
    .to_string();
    assert!(e.starts_with("c:2: field 'Response tokens'"), "{e}");
}

// ---------------------------------------------------------------- synthesis

#[test]
fn bailian_rows_are_synthesized_in_session_order() {
    // Rows in session order: 159 [1089, 1090] 40 tokens, 160 [1089, 1090, 1091] 48,
    // 161 [1089 … 1093] 70, then 200 (no ids) 10. Shared ids (seen more than once): 1089,
    // 1090, 1091; new ids start after (1091 + 1) × 2 = 2184.
    // Prefix × 2 (block 16): 159's 2-block prefix becomes 4 blocks (64 tokens) + its 8
    // prompt tokens = 72; 160: 6 blocks = 96, no prompt; 161: 96 + 22 = 118; 200 keeps 10.
    // Times ÷ 2: 30557, 31250, 31500, 30750 ms. Outputs × 1.5, half to even: 13 → 20,
    // 8 → 12, 8 → 12, 5 → 8.
    let mut p = plan_for(&data("bailian.jsonl"), Some("bailian_trace"));
    let s = &mut p.dataset.replay.synthesis;
    s.prefix_len_multiplier = 2.0;
    s.speedup_ratio = 2.0;
    s.output_len_multiplier = 1.5;
    let w = build(&p).unwrap();
    let ps = &w.workload.payloads;
    let isl: Vec<u64> = ps.iter().map(|x| x.input_tokens.unwrap()).collect();
    assert_eq!(isl, [72, 96, 118, 10]);
    let ts: Vec<f64> = ps.iter().map(|x| x.timestamp_ms.unwrap()).collect();
    assert_eq!(ts, [30557.0, 31250.0, 31500.0, 30750.0]);
    let osl: Vec<Value> = ps
        .iter()
        .map(|x| body(x)["max_completion_tokens"].clone())
        .collect();
    assert_eq!(osl, [json!(20), json!(12), json!(12), json!(8)]);
    // The prefix stays shared: 159 and 160 begin with the same 4 blocks (64 tokens), and
    // 160's 6 blocks start 161.
    let shared = tok().count(&common_prefix(&content(&ps[0]), &content(&ps[1])));
    assert!(shared >= 64, "4 blocks of 16 shared, got {shared} tokens");
    assert!(content(&ps[2]).starts_with(&content(&ps[1])));
}

#[test]
fn bailian_and_burst_gpt_rows_are_filtered_and_capped() {
    // Max ISL 45 drops 160 (48) and 161 (70) before the sessions are linked; max OSL 6.
    let mut p = plan_for(&data("bailian.jsonl"), Some("bailian_trace"));
    p.dataset.replay.synthesis.max_isl = Some(45);
    p.dataset.replay.synthesis.max_osl = Some(6);
    let w = build(&p).unwrap();
    let got: Vec<(String, u64, Value)> = w
        .workload
        .payloads
        .iter()
        .map(|x| {
            (
                x.conversation_id.clone(),
                x.input_tokens.unwrap(),
                body(x)["max_completion_tokens"].clone(),
            )
        })
        .collect();
    assert_eq!(
        got,
        [
            ("159".to_string(), 40, json!(6)),
            ("200".to_string(), 10, json!(5))
        ]
    );
    // BurstGPT (no hash ids): times ÷ 2 (5 s, 7.5 s → 2500, 3750 ms), outputs × 2 (7 → 14,
    // 3 → 6), lengths kept; max ISL 15 then drops the 20-token row.
    let mut p = plan_for(&data("burst_gpt.csv"), Some("burst_gpt_trace"));
    p.dataset.replay.synthesis.speedup_ratio = 2.0;
    p.dataset.replay.synthesis.output_len_multiplier = 2.0;
    let w = build(&p).unwrap();
    let got: Vec<(f64, u64, Value)> = w
        .workload
        .payloads
        .iter()
        .map(|x| {
            (
                x.timestamp_ms.unwrap(),
                x.input_tokens.unwrap(),
                body(x)["max_completion_tokens"].clone(),
            )
        })
        .collect();
    assert_eq!(got, [(2500.0, 12, json!(14)), (3750.0, 20, json!(6))]);
    p.dataset.replay.synthesis.max_isl = Some(15);
    assert_eq!(build(&p).unwrap().workload.payloads.len(), 1);
}

#[test]
fn sagemaker_captures_are_synthesized_filtered_and_capped() {
    // Zero-aligned: the BASE64 capture (max_completion_tokens 9, no response) at 0 ms, the
    // JSON one (max_tokens 50, usage.prompt_tokens 12) at 500 ms.
    // Times ÷ 2 → 0, 250; outputs × 1.5, half to even → 13.5 → 14, 75; then capped at 60.
    let mut p = plan_for(&data("sagemaker.jsonl"), Some("sagemaker_data_capture"));
    p.dataset.replay.synthesis.speedup_ratio = 2.0;
    p.dataset.replay.synthesis.output_len_multiplier = 1.5;
    p.dataset.replay.synthesis.max_osl = Some(60);
    let w = build(&p).unwrap();
    let got: Vec<(f64, Value)> = w
        .workload
        .payloads
        .iter()
        .map(|x| {
            (
                x.timestamp_ms.unwrap(),
                body(x)["max_completion_tokens"].clone(),
            )
        })
        .collect();
    assert_eq!(got, [(0.0, json!(14)), (250.0, json!(60))]);
    // Max ISL 10 drops the capture whose response counted 12 prompt tokens; the one without
    // a response is kept.
    let mut p = plan_for(&data("sagemaker.jsonl"), Some("sagemaker_data_capture"));
    p.dataset.replay.synthesis.max_isl = Some(10);
    let w = build(&p).unwrap();
    assert_eq!(w.workload.payloads.len(), 1);
    assert_eq!(
        body(&w.workload.payloads[0])["max_completion_tokens"],
        json!(9)
    );
}
