//! Datasets end to end: each custom type from a small file in `tests/data/datasets`, with the
//! expected payloads written out by hand; synthetic extras; bad input.

use crate::common;

use std::path::PathBuf;

use inferbench_core::plan::{EndpointType, LengthDist, RunPlan};
use inferbench_core::workload::Payload;
use inferbench_workload::dataset::{BuiltWorkload, DatasetKind, build_workload};
use inferbench_workload::{Corpus, SamplingStrategy, Tokenizer, render_workload};
use serde_json::{Value, json};

fn tok() -> &'static Tokenizer {
    common::builtin()
}

fn data(name: &str) -> String {
    common::data(name)
}

fn plan(endpoint: EndpointType) -> RunPlan {
    common::base_plan(endpoint)
}

fn file_plan(endpoint: EndpointType, file: &str, kind: Option<&str>) -> RunPlan {
    let mut p = plan(endpoint);
    p.dataset.input_file = Some(data(file));
    p.dataset.custom_dataset_type = kind.map(String::from);
    p
}

fn build(p: &RunPlan) -> BuiltWorkload {
    build_workload(p, tok(), Corpus::shakespeare()).unwrap()
}

fn err(p: &RunPlan) -> String {
    build_workload(p, tok(), Corpus::shakespeare())
        .unwrap_err()
        .to_string()
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

fn ids(w: &BuiltWorkload) -> Vec<(&str, u32)> {
    w.workload
        .payloads
        .iter()
        .map(|p| (p.conversation_id.as_str(), p.turn_index))
        .collect()
}

// ---------------------------------------------------------------- custom types

#[test]
fn single_turn_rows_group_by_session_without_history() {
    // Detected from the rows (text/texts), then also named explicitly: same result.
    let w = build(&file_plan(EndpointType::Chat, "single_turn.jsonl", None));
    assert_eq!(w.kind, DatasetKind::SingleTurn);
    let named = build(&file_plan(
        EndpointType::Chat,
        "single_turn.jsonl",
        Some("single_turn"),
    ));
    assert_eq!(w.workload, named.workload);
    assert_eq!(
        ids(&w),
        vec![
            ("session_000000", 0),
            ("s1", 0),
            ("s1", 1),
            ("session_000002", 0)
        ]
    );
    assert_eq!(w.conversations, vec![0..1, 1..3, 3..4]);
    let p = &w.workload.payloads;
    assert_eq!(
        p[0].body,
        r#"{"messages":[{"role":"user","content":"Hello there"}],"model":"m","stream":false,"max_completion_tokens":5}"#
    );
    assert_eq!(p[0].requested_output_tokens, Some(5));
    // Two texts: one message of content parts.
    assert_eq!(
        p[1].body,
        r#"{"messages":[{"role":"user","content":[{"type":"text","text":"a b"},{"type":"text","text":"c d"}]}],"model":"m","stream":false}"#
    );
    assert_eq!(p[1].timestamp_ms, Some(100.0));
    // {name, contents} texts, and the row's extra merged last.
    assert_eq!(
        p[2].body,
        r#"{"messages":[{"role":"user","content":"x y"}],"model":"m","stream":false,"temperature":0.5}"#
    );
    assert_eq!(p[2].timestamp_ms, Some(250.0));
    // A role other than user.
    assert_eq!(
        p[3].body,
        r#"{"messages":[{"role":"system","content":"be terse"}],"model":"m","stream":false}"#
    );
    assert_eq!(p[3].delay_ms, Some(30.0));
    assert!(p.iter().all(|x| !x.history));
    // "Hello there" is 2 tokens; "a b" + " " + "c d" joined is "a b c d", 4 tokens.
    assert_eq!(p[0].input_tokens, Some(2));
    assert_eq!(p[1].input_tokens, Some(4));
    // The first row has no timestamp: no automatic fixed schedule.
    assert!(!w.has_timestamps);
    assert_eq!(w.default_sampling, SamplingStrategy::Sequential);
    assert_eq!(w.sampling, SamplingStrategy::Sequential);
}

#[test]
fn single_turn_osl_fills_rows_without_output_length() {
    let mut p = file_plan(EndpointType::Completions, "single_turn.jsonl", None);
    p.osl = Some(LengthDist {
        mean: 12.0,
        stddev: 0.0,
    });
    let w = build(&p);
    let outs: Vec<Option<u64>> = w
        .workload
        .payloads
        .iter()
        .map(|x| x.requested_output_tokens)
        .collect();
    // Row 1 keeps its output_length; the others take --osl.
    assert_eq!(outs, vec![Some(5), Some(12), Some(12), Some(12)]);
    assert_eq!(
        w.workload.payloads[1].body,
        r#"{"prompt":["a b","c d"],"model":"m","stream":false,"max_tokens":12}"#
    );
}

#[test]
fn multi_turn_keeps_turn_order_delays_and_history() {
    let w = build(&file_plan(EndpointType::Chat, "multi_turn.jsonl", None));
    assert_eq!(w.kind, DatasetKind::MultiTurn);
    assert_eq!(
        ids(&w),
        vec![("chat-a", 0), ("chat-a", 1), ("session_000001", 0)]
    );
    let p = &w.workload.payloads;
    // Each body holds only its own turn: the engine prepends the history at send time.
    assert_eq!(
        p[0].body,
        r#"{"messages":[{"role":"user","content":"first question"}],"model":"m","stream":false,"max_completion_tokens":3}"#
    );
    assert_eq!(
        p[1].body,
        r#"{"messages":[{"role":"user","content":"follow up"}],"model":"m","stream":false}"#
    );
    assert_eq!(p[1].delay_ms, Some(1500.0));
    assert_eq!(p[0].delay_ms, None);
    assert!(p.iter().all(|x| x.history));
}

#[test]
fn mooncake_hash_ids_share_prefixes_with_exact_lengths() {
    let mut p = file_plan(EndpointType::Chat, "mooncake.jsonl", None);
    p.dataset.isl_block_size = Some(8);
    let w = build(&p);
    assert_eq!(w.kind, DatasetKind::MooncakeTrace);
    assert!(w.has_timestamps);
    assert_eq!(w.default_sampling, SamplingStrategy::Sequential);
    let pl = &w.workload.payloads;
    assert_eq!(
        ids(&w),
        vec![
            ("session_000000", 0),
            ("session_000001", 0),
            ("session_000002", 0),
            ("s", 0),
            ("s", 1),
            ("session_000003", 0),
            ("session_000004", 0),
        ]
    );
    let (a, b, c) = (content(&pl[0]), content(&pl[1]), content(&pl[2]));
    // Exact lengths: 20 = 8 + 8 + 4; 24 = 3 full blocks; 11 = one block + 3 padding.
    assert_eq!(tok().count(&a), 20);
    assert_eq!(tok().count(&b), 24);
    assert_eq!(tok().count(&c), 11);
    assert_eq!(pl[0].input_tokens, Some(20));
    assert_eq!(pl[1].input_tokens, Some(24));
    assert_eq!(pl[2].input_tokens, Some(11));
    // Shared ids [1, 2] give a byte-identical prefix of 16 tokens; [1] of 8.
    let common = a.bytes().zip(b.bytes()).take_while(|(x, y)| x == y).count();
    let shared = &a[..common];
    assert!(tok().count(shared) >= 16, "{shared:?}");
    assert!(a.starts_with(&c[..c.len().min(common)]) || c.starts_with(&a[..8]));
    let block1_len = {
        // c = block(1) + 3 padding words; its first 8 tokens are block 1.
        let ids = tok().encode(&c);
        tok().decode(&ids[..8])
    };
    assert!(a.starts_with(&block1_len) && b.starts_with(&block1_len));
    // Timestamps, output lengths.
    let ts: Vec<Option<f64>> = pl.iter().map(|x| x.timestamp_ms).collect();
    assert_eq!(
        ts,
        vec![
            Some(0.0),
            Some(500.0),
            Some(1000.0),
            Some(1500.0),
            None,
            Some(2000.0),
            Some(2500.0)
        ]
    );
    assert_eq!(pl[0].requested_output_tokens, Some(4));
    assert_eq!(pl[2].requested_output_tokens, None);
    // The session's rows: incremental turns with history.
    assert_eq!(content(&pl[3]), "hello trace");
    assert_eq!(tok().count(&content(&pl[4])), 7);
    assert_eq!(pl[4].delay_ms, Some(200.0));
    assert!(pl[3].history && pl[4].history);
    assert!(!pl[0].history);
    // messages + tools as given.
    assert_eq!(
        pl[5].body,
        r#"{"messages":[{"role":"user","content":"hi"}],"model":"m","stream":false,"tools":[{"type":"function","function":{"name":"f"}}]}"#
    );
    // payload: verbatim, nothing merged (not even the row's extra).
    assert_eq!(
        pl[6].body,
        r#"{"model":"x","prompt":"verbatim","max_tokens":9}"#
    );
    // --ignore-trace-delays drops timestamps and delays: no fixed schedule.
    p.dataset.ignore_trace_delays = true;
    let w2 = build(&p);
    assert!(!w2.has_timestamps);
    assert!(
        w2.workload
            .payloads
            .iter()
            .all(|x| x.timestamp_ms.is_none() && x.delay_ms.is_none())
    );
    // Same seed, same bodies.
    p.dataset.ignore_trace_delays = false;
    assert_eq!(build(&p).workload.sha256(), w.workload.sha256());
}

#[test]
fn mooncake_default_block_size_is_512() {
    let dir = tempfile::Builder::new().prefix("ib-ds-").tempdir().unwrap();
    let f = dir.path().join("t.jsonl");
    // 600 = 512 + 88; 1100 = 2 blocks of 512 + 76 padding.
    std::fs::write(
        &f,
        "{\"input_length\": 600, \"hash_ids\": [7, 8]}\n{\"input_length\": 1100, \"hash_ids\": [7, 9]}\n",
    )
    .unwrap();
    let mut p = plan(EndpointType::Completions);
    p.dataset.input_file = Some(f.display().to_string());
    let w = build(&p);
    let prompts: Vec<String> = w
        .workload
        .payloads
        .iter()
        .map(|x| body(x)["prompt"].as_str().unwrap().to_string())
        .collect();
    assert_eq!(tok().count(&prompts[0]), 600);
    assert_eq!(tok().count(&prompts[1]), 1100);
    let first_block = tok().decode(&tok().encode(&prompts[0])[..512]);
    assert!(prompts[1].starts_with(&first_block));
    // 2 ids of 512 with 512 tokens: too short.
    std::fs::write(&f, "{\"input_length\": 512, \"hash_ids\": [7, 8]}\n").unwrap();
    let e = err(&p);
    assert!(
        e.starts_with(&format!(
            "{}:1: field 'hash_ids': input_length 512 is too short",
            f.display()
        )),
        "{e}"
    );
}

#[test]
fn random_pool_directory_makes_rankings_queries_and_passages() {
    let mut p = file_plan(EndpointType::NimRankings, "pool", None);
    p.dataset.num_conversations = Some(3);
    let w = build(&p);
    assert_eq!(w.kind, DatasetKind::RandomPool);
    assert_eq!(w.default_sampling, SamplingStrategy::Shuffle);
    assert_eq!(w.workload.payloads.len(), 3);
    for pl in &w.workload.payloads {
        let b = body(pl);
        // queries.jsonl names its texts "queries"; passages.jsonl names them "passages".
        let q = b["query"]["text"].as_str().unwrap();
        assert!(["what is a rose", "who wrote sonnets"].contains(&q), "{q}");
        assert_eq!(
            b["passages"],
            json!([{"text": "a rose is a flower"}, {"text": "by any other name"}])
        );
        assert_eq!(b["model"], "m");
    }
    // Default: 100 conversations; a sampling override is honoured.
    let mut p = file_plan(EndpointType::Chat, "pool", Some("random_pool"));
    p.dataset.sampling_strategy = Some("sequential".into());
    let w = build(&p);
    assert_eq!(w.workload.payloads.len(), 100);
    assert_eq!(w.sampling, SamplingStrategy::Sequential);
    // Batch of 3 texts from all pools together.
    p.dataset.batch_size = 3;
    p.dataset.num_conversations = Some(2);
    let w = build(&p);
    for pl in &w.workload.payloads {
        assert_eq!(
            body(pl)["messages"][0]["content"].as_array().unwrap().len(),
            3
        );
    }
}

#[test]
fn raw_payload_file_and_directory_are_verbatim() {
    let w = build(&file_plan(
        EndpointType::Chat,
        "raw.jsonl",
        Some("raw_payload"),
    ));
    let p = &w.workload.payloads;
    assert_eq!(
        p[0].body,
        r#"{"messages":[{"role":"user","content":"one"}],"model":"m1","max_tokens":3}"#
    );
    // {"payload": {...}} is unwrapped.
    assert_eq!(p[1].body, r#"{"prompt":"two","model":"m2"}"#);
    assert_eq!(p[0].requested_output_tokens, Some(3));
    assert!(p.iter().all(|x| !x.history));

    // Directory: detected; one conversation per file, sorted, named by the stem.
    let w = build(&file_plan(EndpointType::Chat, "raw_dir", None));
    assert_eq!(w.kind, DatasetKind::RawPayload);
    assert_eq!(ids(&w), vec![("a", 0), ("a", 1), ("b", 0)]);
    assert_eq!(
        w.workload.payloads[1].body,
        r#"{"messages":[{"role":"user","content":"a1"},{"role":"assistant","content":"r"},{"role":"user","content":"a2"}],"model":"m"}"#
    );
    assert!(w.workload.payloads.iter().all(|x| !x.history));
}

#[test]
fn aiperf_inputs_json_replays_the_fixture_bodies() {
    // The first 3 sessions of AIPerf 0.13's inputs.json from fixture S1.
    let path = data("aiperf_inputs_S1.json");
    let doc: Value = serde_json::from_str(&std::fs::read_to_string(&path).unwrap()).unwrap();
    let w = build(&file_plan(
        EndpointType::Chat,
        "aiperf_inputs_S1.json",
        None,
    ));
    assert_eq!(w.kind, DatasetKind::InputsJson);
    assert_eq!(w.workload.payloads.len(), 3);
    for (i, pl) in w.workload.payloads.iter().enumerate() {
        let s = &doc["data"][i];
        assert_eq!(pl.conversation_id, s["session_id"].as_str().unwrap());
        // Compact, key order as in the file.
        assert_eq!(pl.body, s["payloads"][0].to_string());
        assert!(
            pl.body
                .starts_with(r#"{"messages":[{"role":"user","content":"#)
        );
        assert_eq!(pl.requested_output_tokens, Some(16));
    }
    // Our own inputs.json view of it gives the file back.
    assert_eq!(inferbench_workload::inputs_json(&w.workload), doc);
}

#[test]
fn genai_perf_inputs_json_is_read_under_inputs_json() {
    // The first 3 entries of GenAI-Perf 0.0.16's inputs.json from fixture S4.
    let path = data("genai_perf_inputs_S4.json");
    let doc: Value = serde_json::from_str(&std::fs::read_to_string(&path).unwrap()).unwrap();
    for kind in [None, Some("inputs_json"), Some("genai_perf_inputs")] {
        let w = build(&file_plan(
            EndpointType::Completions,
            "genai_perf_inputs_S4.json",
            kind,
        ));
        assert_eq!(w.workload.payloads.len(), 3);
        for (i, pl) in w.workload.payloads.iter().enumerate() {
            assert_eq!(pl.body, doc["data"][i]["payload"][0].to_string());
            assert_eq!(pl.conversation_id, format!("session_00000{i}"));
            assert_eq!(pl.requested_output_tokens, Some(16));
        }
    }
}

#[test]
fn genai_perf_metadata_arrays_group_sessions() {
    let dir = tempfile::Builder::new().prefix("ib-gp-").tempdir().unwrap();
    let f = dir.path().join("inputs.json");
    std::fs::write(
        &f,
        r#"{"data":[
 {"payload":[{"prompt":"a"}],"session_id":["x"],"timestamp":[10]},
 {"payload":[{"prompt":"b"}],"session_id":["y"]},
 {"payload":[{"prompt":"c"}],"session_id":["x"],"delay":[2000]}
]}"#,
    )
    .unwrap();
    let mut p = plan(EndpointType::Completions);
    p.dataset.input_file = Some(f.display().to_string());
    let w = build(&p);
    assert_eq!(w.kind, DatasetKind::GenaiPerfInputs);
    assert_eq!(ids(&w), vec![("x", 0), ("x", 1), ("y", 0)]);
    assert_eq!(w.workload.payloads[0].timestamp_ms, Some(10.0));
    assert_eq!(w.workload.payloads[1].delay_ms, Some(2000.0));
    assert!(w.has_timestamps);
}

#[test]
fn sharegpt_from_a_local_file_follows_vllm_filters() {
    let mut p = plan(EndpointType::Chat);
    p.dataset.public_dataset = Some("sharegpt".into());
    p.dataset.public_dataset_path = Some(data("sharegpt.json"));
    p.num_dataset_entries = 10;
    let w = build(&p);
    assert_eq!(w.kind, DatasetKind::ShareGpt);
    // Only "keep" passes: "Hi" is 1 token, one entry has one message, "Yes" is 1 token.
    assert_eq!(w.workload.payloads.len(), 1);
    let pl = &w.workload.payloads[0];
    assert_eq!(
        content(pl),
        "Tell me about the sonnets of Shakespeare please"
    );
    assert_eq!(
        pl.requested_output_tokens,
        Some(tok().count("They are fourteen lines long and rhyme") as u64)
    );
    // With --osl the completion filter is off and max tokens is the OSL.
    p.osl = Some(LengthDist {
        mean: 8.0,
        stddev: 0.0,
    });
    let w = build(&p);
    assert_eq!(w.workload.payloads.len(), 2);
    assert!(
        w.workload
            .payloads
            .iter()
            .all(|x| x.requested_output_tokens == Some(8))
    );
    // No local file: a clear error, never a download.
    p.dataset.public_dataset_path = None;
    assert!(err(&p).contains("local file"), "{}", err(&p));
}

#[test]
fn mt_bench_from_a_local_export_is_multi_turn_with_history() {
    let mut p = plan(EndpointType::Chat);
    p.dataset.public_dataset = Some("spec_al_mtbench".into());
    p.dataset.public_dataset_path = Some(data("mt_bench_prompts.jsonl"));
    let w = build(&p);
    assert_eq!(w.kind, DatasetKind::PublicText);
    assert_eq!(w.sampling, SamplingStrategy::Sequential);
    assert_eq!(
        ids(&w),
        vec![
            ("session_000000", 0),
            ("session_000000", 1),
            ("session_000001", 0)
        ]
    );
    assert_eq!(content(&w.workload.payloads[1]), "Now a larger one.");
    assert!(w.workload.payloads[1].history);
    // No max_tokens of its own: the prompt is bare, as AIPerf sends it.
    assert_eq!(w.workload.payloads[0].requested_output_tokens, None);
}

#[test]
fn mt_bench_reads_the_same_from_parquet_and_an_arrow_stream() {
    let mut p = plan(EndpointType::Chat);
    p.dataset.public_dataset = Some("spec_al_mtbench".into());
    p.dataset.public_dataset_path = Some(data("mt_bench_prompts.jsonl"));
    let want = build(&p).workload;
    // Written by pyarrow from the JSON Lines file (make_columnar.py): the hub's Parquet and
    // the datasets cache's Arrow stream give the same conversations.
    for f in ["mt_bench_prompts.parquet", "mt_bench_prompts.arrow"] {
        p.dataset.public_dataset_path = Some(data(f));
        assert_eq!(build(&p).workload, want, "{f}");
    }
    // The prompt column missing from a Parquet file's first row is named, as for JSON.
    let mut p = plan(EndpointType::Chat);
    p.dataset.public_dataset = Some("aimo".into());
    p.dataset.public_dataset_path = Some(data("baseten.parquet"));
    assert!(
        err(&p).contains(
            "baseten.parquet: field '[0].problem': missing: aimo reads its prompt from this column (columns: timestamp_start_unix_ms, prompt,"
        ),
        "{}",
        err(&p)
    );
}

#[test]
fn speed_bench_category_type_keeps_its_rows() {
    let p = file_plan(
        EndpointType::Chat,
        "speed_bench_qualitative.jsonl",
        Some("speed_bench_math"),
    );
    let w = build(&p);
    assert_eq!(w.kind, DatasetKind::SpeedBench);
    assert_eq!(ids(&w), vec![("fedcba9876543210fedcba9876543210", 0)]);
    assert_eq!(content(&w.workload.payloads[0]), "What is 2+2?");
}

// ---------------------------------------------------------------- synthetic

#[test]
fn synthetic_without_extras_equals_render_workload() {
    for endpoint in [EndpointType::Chat, EndpointType::Completions] {
        let mut p = plan(endpoint);
        p.streaming = true;
        p.osl = Some(LengthDist {
            mean: 9.0,
            stddev: 2.0,
        });
        p.isl.stddev = 4.0;
        p.extra_inputs
            .insert("ignore_eos".into(), Value::Bool(true));
        let w = build(&p);
        let r = render_workload(&p, tok(), Corpus::shakespeare()).unwrap();
        assert_eq!(w.workload, r.workload);
        assert_eq!(w.seed_used, r.seed_used);
        assert_eq!(w.corpus_sha256, r.corpus_sha256);
        assert_eq!(w.kind, DatasetKind::Synthetic);
        assert_eq!(w.default_sampling, SamplingStrategy::Shuffle);
        assert!(!w.has_timestamps);
    }
}

#[test]
fn synthetic_multi_turn_sessions() {
    let mut p = plan(EndpointType::Chat);
    p.dataset.conversation_turn_mean = 3.0;
    p.dataset.turn_delay_mean_ms = 100.0;
    p.dataset.turn_delay_ratio = 0.5;
    p.num_dataset_entries = 2;
    let w = build(&p);
    // 2 conversations of exactly 3 turns (stddev 0), contiguous and in order.
    assert_eq!(
        ids(&w),
        vec![
            ("session_000000", 0),
            ("session_000000", 1),
            ("session_000000", 2),
            ("session_000001", 0),
            ("session_000001", 1),
            ("session_000001", 2)
        ]
    );
    assert_eq!(w.conversations, vec![0..3, 3..6]);
    for pl in &w.workload.payloads {
        assert!(pl.history);
        assert_eq!(pl.input_tokens, Some(16));
        // 100 ms × 0.5 before every later turn.
        let want = if pl.turn_index == 0 { None } else { Some(50.0) };
        assert_eq!(pl.delay_ms, want);
    }
    // Varying turn counts stay at least 1, and the mean is about right.
    p.dataset.conversation_turn_stddev = 1.0;
    p.num_dataset_entries = 200;
    p.isl.mean = 2.0;
    let w = build(&p);
    let n = w.conversations.len();
    assert_eq!(n, 200);
    let mean = w.workload.payloads.len() as f64 / n as f64;
    assert!((mean - 3.0).abs() < 0.3, "{mean}");
}

#[test]
fn synthetic_prefix_pool_shared_system_and_user_context() {
    let mut p = plan(EndpointType::Chat);
    p.dataset.num_prefix_prompts = 2;
    p.dataset.prefix_prompt_length = 10;
    p.num_dataset_entries = 12;
    let w = build(&p);
    let prefixes: std::collections::HashSet<String> = w
        .workload
        .payloads
        .iter()
        .map(|x| {
            let c = content(x);
            // The prefix is the first 10 tokens, then a space and the 16-token prompt.
            tok().decode(&tok().encode(&c)[..10])
        })
        .collect();
    assert!(prefixes.len() <= 2 && !prefixes.is_empty(), "{prefixes:?}");
    for x in &w.workload.payloads {
        // 10 + 16 tokens, give or take the joining space's merge.
        let n = x.input_tokens.unwrap();
        assert!((25..=27).contains(&n), "{n}");
    }
    // Shared system prompt: identical for every conversation; user context: its own each,
    // both on the first turn only.
    let mut p = plan(EndpointType::Chat);
    p.dataset.shared_system_prompt_length = Some(12);
    p.dataset.user_context_prompt_length = Some(6);
    p.dataset.conversation_turn_mean = 2.0;
    let w = build(&p);
    let firsts: Vec<Value> = w
        .workload
        .payloads
        .iter()
        .filter(|x| x.turn_index == 0)
        .map(body)
        .collect();
    let sys0 = firsts[0]["messages"][0].clone();
    assert_eq!(sys0["role"], "system");
    assert_eq!(tok().count(sys0["content"].as_str().unwrap()), 12);
    let mut ctxs = std::collections::HashSet::new();
    for b in &firsts {
        assert_eq!(b["messages"][0], sys0);
        assert_eq!(b["messages"][1]["role"], "user");
        let ctx = b["messages"][1]["content"].as_str().unwrap().to_string();
        assert_eq!(tok().count(&ctx), 6);
        ctxs.insert(ctx);
        assert_eq!(b["messages"].as_array().unwrap().len(), 3);
    }
    assert_eq!(ctxs.len(), firsts.len());
    for x in w.workload.payloads.iter().filter(|x| x.turn_index > 0) {
        assert_eq!(body(x)["messages"].as_array().unwrap().len(), 1);
    }
    // AIPerf's mutual exclusion.
    p.dataset.num_prefix_prompts = 1;
    p.dataset.prefix_prompt_length = 4;
    assert!(err(&p).contains("cannot be used"), "{}", err(&p));
}

#[test]
fn synthetic_seq_dist_and_range_ratio() {
    let mut p = plan(EndpointType::Completions);
    p.dataset.seq_dist = Some("5,2:50;9,3:50".into());
    p.num_dataset_entries = 40;
    let w = build(&p);
    let mut seen = std::collections::HashSet::new();
    for x in &w.workload.payloads {
        let pair = (x.input_tokens.unwrap(), x.requested_output_tokens.unwrap());
        assert!(pair == (5, 2) || pair == (9, 3), "{pair:?}");
        seen.insert(pair);
    }
    assert_eq!(seen.len(), 2);
    p.dataset.random_range_ratio = Some("0.5".into());
    assert!(err(&p).contains("cannot be used together"));
    p.dataset.seq_dist = None;
    // Needs --osl.
    assert!(err(&p).contains("--osl"));
    p.osl = Some(LengthDist {
        mean: 10.0,
        stddev: 0.0,
    });
    let w = build(&p);
    for x in &w.workload.payloads {
        // ISL 16 ± 50 % → [8, 24]; OSL 10 → [5, 15].
        assert!((8..=24).contains(&x.input_tokens.unwrap()));
        assert!((5..=15).contains(&x.requested_output_tokens.unwrap()));
    }
}

#[test]
fn synthetic_embeddings_batches_and_rankings() {
    let mut p = plan(EndpointType::Embeddings);
    p.dataset.batch_size = 3;
    let w = build(&p);
    for x in &w.workload.payloads {
        let inputs = body(x)["input"].as_array().unwrap().clone();
        assert_eq!(inputs.len(), 3);
        for t in inputs {
            assert_eq!(tok().count(t.as_str().unwrap()), 16);
        }
    }
    let mut p = plan(EndpointType::CohereRankings);
    p.dataset.rankings_passages_mean = 2.0;
    p.dataset.rankings_passages_token_mean = 5.0;
    p.dataset.rankings_query_token_mean = 7.0;
    let w = build(&p);
    for x in &w.workload.payloads {
        let b = body(x);
        assert_eq!(tok().count(b["query"].as_str().unwrap()), 7);
        let docs = b["documents"].as_array().unwrap();
        assert_eq!(docs.len(), 2);
        assert!(docs.iter().all(|d| tok().count(d.as_str().unwrap()) == 5));
    }
}

#[test]
fn refused_options_say_why() {
    let mut p = plan(EndpointType::Chat);
    p.dataset.prompt_corpus = Some("poetry".into());
    let e = err(&p);
    assert!(
        e.contains("--prompt-corpus") && e.contains("sonnet, coding, random"),
        "{e}"
    );
    let mut p = plan(EndpointType::Chat);
    p.dataset.public_dataset = Some("mmstar".into());
    p.dataset.public_dataset_path = Some("x".into());
    assert!(err(&p).contains("carry images"));
    let mut p = file_plan(EndpointType::Chat, "single_turn.jsonl", Some("azure_trace"));
    assert!(err(&p).contains("not supported"));
    p.dataset.custom_dataset_type = None;
    p.dataset.seq_dist = Some("5,2:100".into());
    assert!(err(&p).contains("synthetic turns only"));
    let mut p = plan(EndpointType::Chat);
    p.dataset.sampling_strategy = Some("round-robin".into());
    assert!(err(&p).contains("unknown strategy"));
}

#[test]
fn mooncake_lengths_are_exact_with_a_hugging_face_tokenizer_too() {
    let path: PathBuf = [env!("CARGO_MANIFEST_DIR"), "tests", "data", "tokenizer"]
        .iter()
        .collect();
    let hf = Tokenizer::from_path(&path.display().to_string()).unwrap();
    let mut p = file_plan(EndpointType::Chat, "mooncake.jsonl", None);
    p.dataset.isl_block_size = Some(8);
    let w = build_workload(&p, &hf, Corpus::shakespeare()).unwrap();
    let pl = &w.workload.payloads;
    assert_eq!(hf.count(&content(&pl[0])), 20);
    assert_eq!(hf.count(&content(&pl[1])), 24);
    assert_eq!(hf.count(&content(&pl[2])), 11);
    assert_eq!(hf.count(&content(&pl[4])), 7);
}

#[test]
fn extras_draw_from_their_own_generators() {
    // Adding a prefix pool changes neither the lengths nor the prompts drawn after it.
    let base = build(&plan(EndpointType::Chat));
    let mut p = plan(EndpointType::Chat);
    p.dataset.num_prefix_prompts = 3;
    p.dataset.prefix_prompt_length = 5;
    let with = build(&p);
    for (a, b) in base.workload.payloads.iter().zip(&with.workload.payloads) {
        let plain = content(a);
        let prefixed = content(b);
        assert!(prefixed.ends_with(&format!(" {plain}")), "{prefixed:?}");
    }
    // The same seed gives the same workload; another seed another one.
    assert_eq!(build(&p).workload.sha256(), with.workload.sha256());
    p.random_seed = Some(8);
    assert_ne!(build(&p).workload.sha256(), with.workload.sha256());
}
