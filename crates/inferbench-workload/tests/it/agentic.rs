//! The agentic formats (`weka_trace`, `tracelab`, `dag_jsonl`), each from a file written by
//! hand from its documentation (AIPerf 0.13's loader models), with every expected payload,
//! delay, branch and offset worked out by hand in the comments; their bad lines.

use crate::common;

use std::path::PathBuf;

use inferbench_core::plan::{EndpointType, RunPlan};
use inferbench_core::workload::{Branch, Payload};
use inferbench_workload::dataset::{BuiltWorkload, DatasetKind, build_workload, detect};
use inferbench_workload::{Corpus, SamplingStrategy, Tokenizer};
use serde_json::Value;

fn tok() -> &'static Tokenizer {
    common::builtin()
}

fn data(name: &str) -> String {
    let p: PathBuf = [
        env!("CARGO_MANIFEST_DIR"),
        "tests",
        "data",
        "datasets",
        "agentic",
        name,
    ]
    .iter()
    .collect();
    p.display().to_string()
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

/// The text of the first `n` tokens of `s`.
fn prefix(s: &str, n: usize) -> String {
    let ids = tok().encode(s);
    tok().decode(&ids[..n.min(ids.len())])
}

fn ids(w: &BuiltWorkload) -> Vec<(String, u32)> {
    w.workload
        .payloads
        .iter()
        .map(|p| (p.conversation_id.clone(), p.turn_index))
        .collect()
}

/// A scratch directory, removed on drop.
struct Dir(tempfile::TempDir);

impl Dir {
    fn new(tag: &str) -> Self {
        Dir(tempfile::Builder::new()
            .prefix(&format!("ib-agentic-{tag}-"))
            .tempdir()
            .unwrap())
    }
    fn file(&self, name: &str, text: &[u8]) -> String {
        let p = self.0.path().join(name);
        std::fs::write(&p, text).unwrap();
        p.display().to_string()
    }
}

#[test]
fn weka_trace_makes_a_root_and_a_child_per_subagent() {
    let f = data("weka.json");
    assert_eq!(
        detect(std::path::Path::new(&f)).unwrap(),
        DatasetKind::WekaTrace
    );
    let mut plan = plan_for(&f, Some("weka_trace"));
    plan.models = vec!["m1".into(), "m2".into()];
    let w = build(&plan).unwrap();
    assert_eq!(w.kind, DatasetKind::WekaTrace);
    assert_eq!(w.default_sampling, SamplingStrategy::Sequential);
    // A WEKA `t` counts from each conversation's start: no fixed schedule by itself.
    assert!(!w.has_timestamps);
    // Roots first (the trace's own calls), then each subagent's conversation.
    assert_eq!(
        ids(&w),
        [
            ("trace_a".into(), 0),
            ("trace_a".into(), 1),
            ("trace_a".into(), 2),
            ("trace_a::sa:agent_001".into(), 0),
            ("trace_a::sa:agent_001".into(), 1),
            ("trace_a::sa:agent_002".into(), 0),
        ]
    );
    let p = &w.workload.payloads;
    assert_eq!(
        p.iter().map(|p| p.child).collect::<Vec<_>>(),
        [false, false, false, true, true, true]
    );
    // out 5, 4, 0 → 1 (a request asks for at least one token); 3, 2; 1.
    assert_eq!(
        p.iter()
            .map(|p| p.requested_output_tokens)
            .collect::<Vec<_>>(),
        [Some(5), Some(4), Some(1), Some(3), Some(2), Some(1)]
    );
    // Models: the main one (claude-sonnet, the first parent call's) is --model's first,
    // claude-haiku the second.
    let models: Vec<String> = p
        .iter()
        .map(|p| body(p)["model"].as_str().unwrap().to_string())
        .collect();
    assert_eq!(models, ["m1", "m1", "m1", "m2", "m2", "m2"]);
    // Times: t in ms; a subagent call at 0.4 s, before its spawn at 1.6 s, is relative to it.
    assert_eq!(
        p.iter().map(|p| p.timestamp_ms).collect::<Vec<_>>(),
        [
            Some(0.0),
            Some(5000.0),
            Some(9000.0),
            Some(1500.0),
            Some(2500.0),
            Some(2000.0)
        ]
    );
    // Delays are idle gaps: 5000 − 0 − api 1000 = 4000; 9000 − 5000 − 2000 = 2000; the
    // subagent's 2500 − 1500 − 500 = 500.
    assert_eq!(
        p.iter().map(|p| p.delay_ms).collect::<Vec<_>>(),
        [None, Some(4000.0), Some(2000.0), None, Some(500.0), None]
    );
    // agent_001 ends at 1.5 + 3 = 4.5 s: the parent call at 5 s joins it. agent_002 ends at
    // 1.6 + 10 = 11.6 s, after the last parent call: background. Both spawn from turn 0.
    assert_eq!(
        p[0].branches,
        [
            Branch {
                children: vec!["trace_a::sa:agent_001".into()],
                fork: false,
                join_turn: Some(1),
                start_ms: Some(1500.0),
            },
            Branch {
                children: vec!["trace_a::sa:agent_002".into()],
                fork: false,
                join_turn: None,
                start_ms: Some(1600.0),
            },
        ]
    );
    assert!(p[1..].iter().all(|p| p.branches.is_empty()));
    // Prompts: `in` tokens from 4-token blocks (10 = 4 + 4 + 2), sharing their blocks' text.
    let lens: Vec<usize> = p.iter().map(|p| tok().count(&content(p))).collect();
    assert_eq!(lens, [10, 16, 20, 8, 12, 4]);
    let (t0, t1, c0) = (content(&p[0]), content(&p[1]), content(&p[3]));
    let block = |s: &str, n: usize| prefix(s, n);
    assert_eq!(block(&t0, 8), block(&t1, 8));
    // The subagent's first block is the parent's block 1: one id namespace per trace.
    assert_eq!(block(&c0, 4), block(&t0, 4));
    assert_ne!(block(&c0, 8), block(&t0, 8));
}

#[test]
fn weka_think_time_only_and_max_context_length() {
    let f = data("weka.json");
    let mut plan = plan_for(&f, Some("weka_trace"));
    plan.dataset.use_think_time_only = true;
    let w = build(&plan).unwrap();
    // think_time 0.5 s on the parent's second call and 0.25 s on the subagent's second;
    // the others keep their idle gaps.
    assert_eq!(
        w.workload
            .payloads
            .iter()
            .map(|p| p.delay_ms)
            .collect::<Vec<_>>(),
        [None, Some(500.0), Some(2000.0), None, Some(250.0), None]
    );
    // The trace's largest request is 20 + 1 = 21 tokens (the parent's last): at 20 it goes,
    // and with it the only trace.
    let mut plan = plan_for(&f, Some("weka_trace"));
    plan.dataset.max_context_length = Some(21);
    assert_eq!(build(&plan).unwrap().workload.payloads.len(), 6);
    plan.dataset.max_context_length = Some(20);
    let e = build(&plan).unwrap_err();
    assert!(e.contains("--max-context-length"), "{e}");
    // Refused where AIPerf refuses them.
    let mut plan = plan_for(&f, Some("weka_trace"));
    plan.dataset.isl_block_size = Some(16);
    assert!(build(&plan).unwrap_err().contains("--isl-block-size"));
    let mut plan = plan_for(&data("dag.jsonl"), Some("dag_jsonl"));
    plan.dataset.max_context_length = Some(10);
    assert!(build(&plan).unwrap_err().contains("weka_trace traces only"));
    plan.dataset.max_context_length = None;
    plan.dataset.use_think_time_only = true;
    assert!(build(&plan).unwrap_err().contains("--use-think-time-only"));
}

#[test]
fn weka_directory_and_bad_lines_name_file_line_and_field() {
    let d = Dir::new("weka");
    let one = std::fs::read_to_string(data("weka.json")).unwrap();
    d.file("a.json", one.as_bytes());
    d.file(
        "b.json",
        br#"{"id": "trace_b", "models": ["x"], "block_size": 2, "hash_id_scope": "local",
 "requests": [{"t": 0, "type": "n", "model": "x", "in": 3, "out": 1, "hash_ids": [1, 2]}]}"#,
    );
    let dir = d.0.path().display().to_string();
    assert_eq!(
        detect(std::path::Path::new(&dir)).unwrap(),
        DatasetKind::WekaTrace
    );
    let w = build(&plan_for(&dir, Some("weka_trace"))).unwrap();
    // Roots of both files (name order), then the children.
    let roots: Vec<&str> = w
        .workload
        .payloads
        .iter()
        .filter(|p| !p.child)
        .map(|p| p.conversation_id.as_str())
        .collect();
    assert_eq!(roots, ["trace_a", "trace_a", "trace_a", "trace_b"]);
    // trace_b's 2-token blocks: 3 = 2 + 1.
    assert_eq!(tok().count(&content(&w.workload.payloads[3])), 3);

    let bad = d.file(
        "bad.json",
        b"{\n  \"id\": \"t\",\n  \"models\": [\"x\"],\n  \"block_size\": 4,\n  \"hash_id_scope\": \"local\",\n  \"requests\": [\n    {\"t\": 0, \"type\": \"n\", \"model\": \"x\", \"in\": 4, \"out\": 1},\n    {\"t\": 1, \"type\": \"n\", \"model\": \"x\", \"in\": \"ten\", \"out\": 1}\n  ]\n}\n",
    );
    let e = build(&plan_for(&bad, Some("weka_trace"))).unwrap_err();
    assert!(
        e.ends_with("bad.json:8: field 'requests[1].in': expected an integer >= 0, got \"ten\""),
        "{e}"
    );
    let bad = d.file(
        "bad2.json",
        b"{\"id\": \"t\", \"models\": [], \"block_size\": 4, \"hash_id_scope\": \"global\", \"requests\": []}",
    );
    let e = build(&plan_for(&bad, Some("weka_trace"))).unwrap_err();
    assert!(e.contains("bad2.json:1: field 'hash_id_scope'"), "{e}");
    let bad = d.file(
        "bad3.json",
        b"{\"id\": \"t\", \"models\": [], \"block_size\": 4, \"hash_id_scope\": \"local\", \"requests\": [\n{\"t\": 0, \"type\": \"n\", \"model\": \"x\", \"in\": 4, \"out\": 1, \"cost\": 3}]}",
    );
    let e = build(&plan_for(&bad, Some("weka_trace"))).unwrap_err();
    assert!(
        e.contains("bad3.json:2: field 'requests[0].cost': unknown field"),
        "{e}"
    );
}

/// The TraceLab fixture by hand (block 64). Session claude:p1: rounds at 10:00:00 (api 2 s,
/// 130 tokens: 2 blocks [1,2]) and 10:00:30 (prefix 150 → keeps 2 ids: [1,2,3]; think 28
/// s; out 10 + 5 reasoning). Its Task call 10:00:02–10:00:30 (28 s) contains all of
/// claude:c1 (10:00:05–10:00:12, same user and project): a subagent spawned at t = 2 s,
/// ending at 30 s, so the parent's 30 s call joins it. c1's rounds: t = 5 s (70 tokens, id
/// [4]) and 10 s (prefix 64 → [4,5]; idle gap 10 − (5 + 3) = 2 s). claude:x (another user)
/// is a trace of its own.
fn check_tracelab(w: &BuiltWorkload) {
    assert_eq!(w.kind, DatasetKind::Tracelab);
    assert_eq!(
        ids(w),
        [
            ("claude_p1".into(), 0),
            ("claude_p1".into(), 1),
            ("claude_x".into(), 0),
            ("claude_p1::sa:claude_c1".into(), 0),
            ("claude_p1::sa:claude_c1".into(), 1),
        ]
    );
    let p = &w.workload.payloads;
    // TraceLab's first row has timed events: AIPerf's fixed schedule turns on.
    assert!(w.has_timestamps);
    assert_eq!(
        p.iter().map(|p| p.timestamp_ms).collect::<Vec<_>>(),
        [
            Some(0.0),
            Some(30000.0),
            Some(0.0),
            Some(5000.0),
            Some(10000.0)
        ]
    );
    assert_eq!(
        p.iter().map(|p| p.delay_ms).collect::<Vec<_>>(),
        [None, Some(28000.0), None, None, Some(2000.0)]
    );
    assert_eq!(
        p.iter()
            .map(|p| p.requested_output_tokens)
            .collect::<Vec<_>>(),
        [Some(20), Some(15), Some(1), Some(7), Some(3)]
    );
    assert_eq!(
        p[0].branches,
        [Branch {
            children: vec!["claude_p1::sa:claude_c1".into()],
            fork: false,
            join_turn: Some(1),
            start_ms: Some(2000.0),
        }]
    );
    let lens: Vec<usize> = p.iter().map(|p| tok().count(&content(p))).collect();
    assert_eq!(lens, [130, 200, 10, 70, 140]);
    // Blocks [1,2] are the first 128 tokens of both parent calls; the child's id 4 is its
    // own first 64 in both of its calls.
    let pre = |i: usize, n: usize| prefix(&content(&p[i]), n);
    assert_eq!(pre(0, 128), pre(1, 128));
    assert_eq!(pre(3, 64), pre(4, 64));
    assert_ne!(pre(0, 64), pre(3, 64));
}

#[test]
fn tracelab_nests_a_contained_session_as_a_subagent() {
    let f = data("tracelab.jsonl");
    assert_eq!(
        detect(std::path::Path::new(&f)).unwrap(),
        DatasetKind::Tracelab
    );
    check_tracelab(&build(&plan_for(&f, Some("tracelab"))).unwrap());
}

#[test]
fn tracelab_reads_gzip() {
    let text = std::fs::read(data("tracelab.jsonl")).unwrap();
    let d = Dir::new("gz");
    let f = d.file("trace.jsonl.gz", &common::gzip(&text));
    assert_eq!(
        detect(std::path::Path::new(&f)).unwrap(),
        DatasetKind::Tracelab
    );
    check_tracelab(&build(&plan_for(&f, Some("tracelab"))).unwrap());
    // A cut file is an error naming it, not a panic.
    let gz = common::gzip(&text);
    let cut = d.file("cut.jsonl.gz", &gz[..gz.len() / 2]);
    let e = build(&plan_for(&cut, Some("tracelab"))).unwrap_err();
    assert!(e.contains("cut.jsonl.gz") && e.contains("gzip"), "{e}");
}

#[test]
fn tracelab_bad_lines_name_file_line_and_field() {
    let d = Dir::new("tl");
    let f = d.file(
        "t.jsonl",
        b"{\"session_id\": \"a\", \"round_index\": 0, \"input_tokens_total\": 10, \"prefix_tokens\": 0, \"newly_append_tokens\": 10, \"timing_events\": [{\"event_type\": \"user_message\", \"timestamp\": \"2025-06-01T10:00:00Z\"}]}\n\
          {\"session_id\": \"a\", \"round_index\": 1, \"input_tokens_total\": 10, \"prefix_tokens\": 0, \"newly_append_tokens\": 10, \"timing_events\": [{\"event_type\": \"text\", \"timestamp\": \"June 1st\"}]}\n",
    );
    let e = build(&plan_for(&f, Some("tracelab"))).unwrap_err();
    assert!(
        e.ends_with(
            "t.jsonl:2: field 'timing_events[0].timestamp': \"June 1st\" is not an ISO-8601 time"
        ),
        "{e}"
    );
    let f = d.file(
        "u.jsonl",
        b"{\"session_id\": \"a\", \"round_index\": 0, \"input_tokens_total\": \"many\", \"prefix_tokens\": 0, \"newly_append_tokens\": 10, \"timing_events\": []}\n",
    );
    let e = build(&plan_for(&f, Some("tracelab"))).unwrap_err();
    assert!(
        e.ends_with("u.jsonl:1: field 'input_tokens_total': expected an integer, got \"many\""),
        "{e}"
    );
}

/// The DAG fixture: `root` spawns research and review from turn 0 (joined by turn 1), forks
/// `side` in the background from turn 1 and `tail` from its last turn; `solo` stands alone.
#[test]
fn dag_jsonl_branches_roots_and_children() {
    let f = data("dag.jsonl");
    assert_eq!(
        detect(std::path::Path::new(&f)).unwrap(),
        DatasetKind::DagJsonl
    );
    let w = build(&plan_for(&f, Some("dag_jsonl"))).unwrap();
    assert_eq!(w.kind, DatasetKind::DagJsonl);
    // AIPerf samples DAG roots at random.
    assert_eq!(w.default_sampling, SamplingStrategy::Random);
    assert!(!w.has_timestamps);
    let p = &w.workload.payloads;
    let roots: Vec<(&str, bool)> = p
        .iter()
        .map(|p| (p.conversation_id.as_str(), p.child))
        .collect();
    assert_eq!(
        roots,
        [
            ("root", false),
            ("root", false),
            ("root", false),
            ("research", true),
            ("research", true),
            ("review", true),
            ("side", true),
            ("tail", true),
            ("solo", false),
        ]
    );
    assert_eq!(
        p[0].branches,
        [Branch {
            children: vec!["research".into(), "review".into()],
            fork: false,
            join_turn: Some(1),
            start_ms: None,
        }]
    );
    assert_eq!(
        p[1].branches,
        [Branch {
            children: vec!["side".into()],
            fork: true,
            join_turn: None,
            start_ms: None
        }]
    );
    assert_eq!(
        p[2].branches,
        [Branch {
            children: vec!["tail".into()],
            fork: true,
            join_turn: None,
            start_ms: None
        }]
    );
    // Messages as written, multi-turn history on (deltas_without_responses), the turn's
    // max_tokens, extra merged into the body, delay in ms.
    assert!(p.iter().all(|p| p.history));
    let b0 = body(&p[0]);
    assert_eq!(b0["messages"][0]["role"], "system");
    assert_eq!(b0["messages"][1]["content"], "Plan the work.");
    assert_eq!(p[0].requested_output_tokens, Some(8));
    assert_eq!(body(&p[5])["temperature"], 0);
    assert_eq!(p[4].delay_ms, Some(50.0));
}

#[test]
fn dag_jsonl_refusals_name_file_line_and_field() {
    let d = Dir::new("dag");
    let cases: &[(&str, &str)] = &[
        (
            "{\"session_id\": \"a\", \"turns\": [{\"messages\": [{\"role\": \"user\", \"content\": \"x\"}], \"spawns\": [\"nope\"]}]}",
            "f.jsonl:1: field 'turns[0].spawns': no conversation has the session_id \"nope\"",
        ),
        (
            "{\"session_id\": \"a\", \"turns\": [{\"messages\": [{\"role\": \"user\", \"content\": \"x\"}], \"forks\": [\"b\"]}, {\"messages\": [{\"role\": \"user\", \"content\": \"y\"}]}]}\n{\"session_id\": \"b\", \"turns\": [{\"messages\": [{\"role\": \"user\", \"content\": \"z\"}]}]}",
            "f.jsonl:1: field 'turns[0].forks': a fork of \"b\" before the last turn needs \"background\": true",
        ),
        (
            "{\"session_id\": \"a\", \"turns\": [{\"messages\": [{\"role\": \"user\", \"content\": \"x\"}], \"spawns\": [\"b\"]}]}\n{\"session_id\": \"b\", \"turns\": [{\"messages\": [{\"role\": \"user\", \"content\": \"y\"}], \"spawns\": [\"a\"]}]}",
            "starts itself through its branches (a cycle)",
        ),
        (
            "{\"session_id\": \"a\", \"orchestrator\": true, \"spawns\": [\"b\"], \"turns\": []}",
            "f.jsonl:1: field 'orchestrator': is not built",
        ),
        (
            "{\"session_id\": \"a\", \"turns\": [{\"messages\": [{\"role\": \"user\", \"content\": \"x\"}], \"max_tokens\": true}]}",
            "f.jsonl:1: field 'turns[0].max_tokens': expected an integer, not a boolean",
        ),
        (
            "{\"session_id\": \"a\", \"turns\": [{\"messages\": [{\"role\": \"user\", \"content\": \"x\"}]}, {\"messages\": [{\"role\": \"system\", \"content\": \"late\"}]}]}",
            "f.jsonl:1: field 'turns[1].messages[0]': a system message goes first",
        ),
        (
            "{\"session_id\": \"a\", \"turns\": [{\"messages\": [{\"role\": \"user\", \"content\": \"x\"}], \"spawns\": [{\"children\": [\"b\"], \"join_at\": 0}]}]}\n{\"session_id\": \"b\", \"turns\": [{\"messages\": [{\"role\": \"user\", \"content\": \"y\"}]}]}",
            "f.jsonl:1: field 'turns[0].spawns': join_at 0 must be after this turn",
        ),
    ];
    for (text, want) in cases {
        let f = d.file("f.jsonl", text.as_bytes());
        let e = build(&plan_for(&f, Some("dag_jsonl"))).unwrap_err();
        assert!(e.contains(want), "{e}\nwanted: {want}");
    }
}

mod props {
    use super::*;
    use proptest::prelude::*;

    fn weka_doc(calls: &[(u8, u16, u8, Vec<u8>)], sub_at: usize, sub_dur: u16) -> String {
        let mut reqs: Vec<String> = Vec::new();
        for (i, (dt, inp, out, ids)) in calls.iter().enumerate() {
            if i == sub_at {
                reqs.push(format!(
                    r#"{{"t": {i}.5, "type": "subagent", "agent_id": "a{i}", "subagent_type": "x", "status": "completed", "models": ["m"], "duration_ms": {sub_dur}, "requests": [{{"t": {i}.5, "type": "n", "model": "m", "in": 3, "out": 1, "hash_ids": [1]}}]}}"#
                ));
            }
            reqs.push(format!(
                r#"{{"t": {}, "type": "n", "model": "m", "in": {inp}, "out": {out}, "hash_ids": {ids:?}, "api_time": 0.{dt}}}"#,
                i as f64 + *dt as f64 / 1000.0
            ));
        }
        format!(
            r#"{{"id": "p", "models": ["m"], "block_size": 4, "hash_id_scope": "local", "requests": [{}]}}"#,
            reqs.join(",\n")
        )
    }

    proptest! {
        #![proptest_config(ProptestConfig { cases: 24, ..ProptestConfig::default() })]

        /// Any well-formed trace loads; every call is one payload; a prompt has exactly its
        /// `in` tokens; a subagent joins the first later parent turn at or after its end.
        #[test]
        fn weka_traces_load_with_exact_lengths(
            calls in prop::collection::vec((0u8..9, 0u16..40, 0u8..6, prop::collection::vec(0u8..5, 0..6)), 1..5),
            sub_at in 1usize..5,
            sub_dur in 0u16..4000,
        ) {
            let d = Dir::new(&format!("prop{}", calls.len()));
            let f = d.file("p.json", weka_doc(&calls, sub_at, sub_dur).as_bytes());
            let w = build(&plan_for(&f, Some("weka_trace"))).unwrap();
            let p = &w.workload.payloads;
            let has_sub = sub_at < calls.len();
            prop_assert_eq!(p.len(), calls.len() + usize::from(has_sub));
            for (i, (_, inp, out, _)) in calls.iter().enumerate() {
                prop_assert_eq!(tok().count(&content(&p[i])), *inp as usize);
                prop_assert_eq!(p[i].requested_output_tokens, Some((*out).max(1) as u64));
            }
            if has_sub {
                let b = &p[sub_at - 1].branches;
                prop_assert_eq!(b.len(), 1);
                let end = sub_at as f64 + 0.5 + sub_dur as f64 / 1000.0;
                let join = (sub_at..calls.len())
                    .find(|&k| k as f64 + calls[k].0 as f64 / 1000.0 + 1e-6 >= end)
                    .map(|k| k as u32);
                prop_assert_eq!(b[0].join_turn, join);
            }
        }

        /// Garbage never panics a loader: it loads or is an error.
        #[test]
        fn arbitrary_text_never_panics(text in "\\PC{0,300}") {
            let d = Dir::new("junk");
            for (name, kind) in [("j.json", "weka_trace"), ("j.jsonl", "tracelab"), ("k.jsonl", "dag_jsonl")] {
                let f = d.file(name, text.as_bytes());
                let _ = build(&plan_for(&f, Some(kind)));
            }
        }
    }
}
