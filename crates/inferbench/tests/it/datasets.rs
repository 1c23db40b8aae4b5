//! Datasets, multi-turn sessions and the fixed schedule, end to end: the real binary against
//! its built-in simulated server (127.0.0.1, port 0), reading the run directory afterwards.
//! Input files are in `tests/data/datasets/`; every expected value below is worked out from
//! those files (or from the rules in `docs/datasets.md` and `docs/load-shapes.md`).

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::process::Output;

use serde_json::Value;

use crate::common;

use common::*;

const MS: u64 = 1_000_000;

fn data(name: &str) -> String {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join("tests/data/datasets")
        .join(name)
        .to_string_lossy()
        .into_owned()
}

/// `inferbench profile` against the simulated server with no delays, writing into `dir`.
fn profile(dir: &Path, extra: &[&str]) -> Output {
    let mut args = vec![
        "profile",
        "--ui",
        "none",
        "--sim-ttft-ms",
        "0",
        "--sim-itl-ms",
        "0",
        "--artifact-dir",
        dir.to_str().unwrap(),
    ];
    args.extend_from_slice(extra);
    run(&args)
}

fn profile_ok(dir: &Path, extra: &[&str]) {
    let o = profile(dir, extra);
    assert!(o.status.success(), "exit {:?}: {}", o.status, stderr(&o));
}

/// The profiling phase's start (ns on the run clock).
fn phase_start(dir: &Path) -> u64 {
    evidence_lines(dir)
        .iter()
        .find(|l| l["line"] == "phase" && l["phase"] == "profiling")
        .expect("a profiling phase line")["start_ns"]
        .as_u64()
        .unwrap()
}

/// The profiling records, by id.
fn records(dir: &Path) -> Vec<Value> {
    let mut r: Vec<Value> = evidence_records(dir)
        .into_iter()
        .filter(|r| r["phase"] == "profiling")
        .collect();
    r.sort_by_key(|r| r["id"].as_u64().unwrap());
    r
}

fn u(v: &Value) -> u64 {
    v.as_u64().unwrap_or_else(|| panic!("not an integer: {v}"))
}

fn conv(r: &Value) -> &str {
    r["conversation_id"].as_str().unwrap()
}

/// `planned_ns − phase start` of each record, by conversation id (one record each).
fn offsets_by_conversation(dir: &Path) -> BTreeMap<String, u64> {
    let start = phase_start(dir);
    let mut m = BTreeMap::new();
    for r in records(dir) {
        let prev = m.insert(conv(&r).to_string(), u(&r["planned_ns"]) - start);
        assert!(prev.is_none(), "{} sent twice", conv(&r));
    }
    m
}

/// The bodies of `inputs.json`: (session id, its bodies in turn order), in file order.
fn inputs(dir: &Path) -> Vec<(String, Vec<Value>)> {
    let v = read_json(&dir.join("inputs.json"));
    v["data"]
        .as_array()
        .expect("data list")
        .iter()
        .map(|e| {
            (
                e["session_id"].as_str().unwrap().to_string(),
                e["payloads"].as_array().unwrap().clone(),
            )
        })
        .collect()
}

fn body_of(dir: &Path, conversation: &str, turn: u64) -> Value {
    inputs(dir)
        .into_iter()
        .find(|(s, _)| s == conversation)
        .unwrap_or_else(|| panic!("{conversation} not in inputs.json"))
        .1[turn as usize]
        .clone()
}

/// Compact JSON, keys in their order (the workspace's serde_json keeps insertion order).
fn compact(v: &Value) -> String {
    serde_json::to_string(v).unwrap()
}

/// The single user message's content of a chat body.
fn content(body: &Value) -> &str {
    let m = body["messages"].as_array().unwrap();
    assert_eq!(m.len(), 1, "{body}");
    m[0]["content"].as_str().unwrap()
}

/// The reply a record received: its events' content, concatenated.
fn reply(r: &Value) -> String {
    r["events"]
        .as_array()
        .unwrap()
        .iter()
        .filter_map(|e| e["content"].as_str())
        .collect()
}

/// The body a later turn is sent with when history is on (docs/load-shapes.md, "Sessions"):
/// its own body with, in front of its `messages`, each earlier turn's own messages followed by
/// the assistant's reply as it arrived.
fn with_history(own: &Value, earlier: &[(Value, String)]) -> Value {
    let mut list = Vec::new();
    for (body, answer) in earlier {
        list.extend(body["messages"].as_array().unwrap().iter().cloned());
        list.push(serde_json::json!({"role": "assistant", "content": answer}));
    }
    list.extend(own["messages"].as_array().unwrap().iter().cloned());
    let mut b = own.clone();
    // Replacing an existing key keeps its position.
    b["messages"] = Value::Array(list);
    b
}

fn manifest(dir: &Path) -> Value {
    read_json(&dir.join("inferbench_manifest.json"))
}

// ---- 1. Mooncake traces and the fixed schedule

#[test]
fn a_trace_with_timestamps_is_replayed_at_its_timestamps_with_shared_hash_blocks() {
    // Rows (file order): 0 at 0 ms [1,2] 20 tokens; 1 at 250 ms [1] 16 tokens; 2 at 100 ms
    // [1,3] 24 tokens; 3 at 400 ms, 9 tokens. No session ids: session_00000<row>.
    let dir = tmpdir("trace");
    profile_ok(
        &dir,
        &[
            "--input-file",
            &data("trace_hash_ids.jsonl"),
            "--isl-block-size",
            "16",
        ],
    );
    let recs = records(&dir);
    assert_eq!(recs.len(), 4, "one record per row");
    let offs = offsets_by_conversation(&dir);
    let want: BTreeMap<String, u64> = [
        ("session_000000", 0),
        ("session_000001", 250 * MS),
        ("session_000002", 100 * MS),
        ("session_000003", 400 * MS),
    ]
    .into_iter()
    .map(|(c, o)| (c.to_string(), o))
    .collect();
    assert_eq!(offs, want, "planned offsets are the trace's timestamps");
    // Sessions go in timestamp order: 0, 100, 250, 400 ms → rows 0, 2, 1, 3.
    let order: Vec<&str> = recs.iter().map(conv).collect();
    assert_eq!(
        order,
        [
            "session_000000",
            "session_000002",
            "session_000001",
            "session_000003"
        ]
    );
    for r in &recs {
        let want_isl = match conv(r) {
            "session_000000" => 20,
            "session_000001" => 16,
            "session_000002" => 24,
            "session_000003" => 9,
            c => panic!("unexpected conversation {c}"),
        };
        assert_eq!(r["tokens"]["input"], want_isl, "{}", conv(r));
        assert_eq!(r["turn_index"], 0);
        // Single-row conversations: the body is sent as written in inputs.json.
        let body = compact(&body_of(&dir, conv(r), 0));
        assert_eq!(u(&r["request_bytes"]), body.len() as u64, "{}", conv(r));
    }
    // Row 1 is block 1 alone (16 = 1 × 16 tokens: one full block, nothing else). Rows 0 and
    // 2 start with block 1, then go on with different blocks (2 and 3).
    let block1 = content(&body_of(&dir, "session_000001", 0)).to_string();
    let row0 = content(&body_of(&dir, "session_000000", 0)).to_string();
    let row2 = content(&body_of(&dir, "session_000002", 0)).to_string();
    assert!(!block1.is_empty());
    assert!(row0.starts_with(&block1), "{row0:?} vs block {block1:?}");
    assert!(row2.starts_with(&block1), "{row2:?} vs block {block1:?}");
    assert!(row0.len() > block1.len() && row2.len() > block1.len());
    assert_ne!(row0[block1.len()..], row2[block1.len()..]);
    assert!(
        manifest(&dir)["arrival"]
            .as_str()
            .unwrap()
            .starts_with("fixed schedule: 4 sessions"),
        "{}",
        manifest(&dir)["arrival"]
    );
}

#[test]
fn auto_offset_makes_the_first_timestamp_the_schedule_zero() {
    // Timestamps 1000, 1100, 1200, 1300 ms → offsets 0, 100, 200, 300 ms.
    let dir = tmpdir("auto-offset");
    profile_ok(
        &dir,
        &[
            "--input-file",
            &data("trace_offsets.jsonl"),
            "--fixed-schedule-auto-offset",
        ],
    );
    let offs: Vec<u64> = offsets_by_conversation(&dir).into_values().collect();
    assert_eq!(offs, [0, 100 * MS, 200 * MS, 300 * MS]);
    let isl: Vec<u64> = records(&dir)
        .iter()
        .map(|r| u(&r["tokens"]["input"]))
        .collect();
    assert_eq!(isl, [6, 7, 8, 9]);
}

#[test]
fn start_and_end_offsets_keep_the_sessions_in_the_inclusive_range() {
    // [1100, 1200]: rows 1 (7 tokens) and 2 (8 tokens), both ends inclusive. Without
    // auto-offset the start offset is the zero: 0 and 100 ms.
    let dir = tmpdir("offsets");
    profile_ok(
        &dir,
        &[
            "--input-file",
            &data("trace_offsets.jsonl"),
            "--fixed-schedule-start-offset",
            "1100",
            "--fixed-schedule-end-offset",
            "1200",
        ],
    );
    let offs = offsets_by_conversation(&dir);
    assert_eq!(
        offs.into_iter().collect::<Vec<_>>(),
        [
            ("session_000001".to_string(), 0),
            ("session_000002".to_string(), 100 * MS)
        ]
    );
    let isl: Vec<u64> = records(&dir)
        .iter()
        .map(|r| u(&r["tokens"]["input"]))
        .collect();
    assert_eq!(isl, [7, 8]);

    // End only, with auto-offset: rows 0 (1000) and 1 (1100, the inclusive end) at 0, 100 ms.
    let dir = tmpdir("end-offset");
    profile_ok(
        &dir,
        &[
            "--input-file",
            &data("trace_offsets.jsonl"),
            "--fixed-schedule-auto-offset",
            "--fixed-schedule-end-offset",
            "1100",
        ],
    );
    let offs = offsets_by_conversation(&dir);
    assert_eq!(
        offs.into_iter().collect::<Vec<_>>(),
        [
            ("session_000000".to_string(), 0),
            ("session_000001".to_string(), 100 * MS)
        ]
    );
    let isl: Vec<u64> = records(&dir)
        .iter()
        .map(|r| u(&r["tokens"]["input"]))
        .collect();
    assert_eq!(isl, [6, 7]);
}

#[test]
fn no_fixed_schedule_sends_a_trace_as_a_burst() {
    let dir = tmpdir("no-fixed");
    profile_ok(
        &dir,
        &[
            "--input-file",
            &data("trace_hash_ids.jsonl"),
            "--isl-block-size",
            "16",
            "--no-fixed-schedule",
        ],
    );
    let recs = records(&dir);
    // Every row once (a file is sent once without --request-count), in file order
    // (sequential sampling), not at the trace times.
    assert_eq!(recs.len(), 4);
    let order: Vec<&str> = recs.iter().map(conv).collect();
    assert_eq!(
        order,
        [
            "session_000000",
            "session_000001",
            "session_000002",
            "session_000003"
        ]
    );
    let start = phase_start(&dir);
    let offs: Vec<u64> = recs.iter().map(|r| u(&r["planned_ns"]) - start).collect();
    assert_ne!(offs, [0, 250 * MS, 100 * MS, 400 * MS]);
    // Concurrency 1, burst: each request is planned when the previous one has ended.
    for w in recs.windows(2) {
        assert!(u(&w[1]["planned_ns"]) >= u(&w[0]["end_ns"]), "{offs:?}");
    }
    let m = manifest(&dir);
    assert!(
        m["arrival"].as_str().unwrap().starts_with("concurrency 1"),
        "{}",
        m["arrival"]
    );
    assert_eq!(m["plan"]["load"]["fixed_schedule"]["enabled"], false);
}

#[test]
fn a_trace_session_sends_later_turns_with_history_not_before_their_timestamp() {
    // Session a: 0 ms (6 tokens), then 300 ms / delay 20 ms (8 tokens); session b at 50 ms.
    let dir = tmpdir("trace-session");
    profile_ok(&dir, &["--input-file", &data("trace_session.jsonl")]);
    let start = phase_start(&dir);
    let recs = records(&dir);
    assert_eq!(recs.len(), 3);
    let a: Vec<&Value> = recs.iter().filter(|r| conv(r) == "a").collect();
    let b: Vec<&Value> = recs.iter().filter(|r| conv(r) == "b").collect();
    assert_eq!((a.len(), b.len()), (2, 1));
    assert_eq!(
        (a[0]["turn_index"].clone(), a[1]["turn_index"].clone()),
        (0.into(), 1.into())
    );
    assert_eq!(a[0]["session_num"], a[1]["session_num"]);
    assert_ne!(a[0]["session_num"], b[0]["session_num"]);
    assert_eq!(a[0]["correlation_id"], a[1]["correlation_id"]);
    assert_eq!(u(&a[0]["planned_ns"]) - start, 0);
    assert_eq!(u(&b[0]["planned_ns"]) - start, 50 * MS);
    let later = u(&a[1]["planned_ns"]);
    assert!(later - start >= 300 * MS, "before its trace time");
    assert!(later >= u(&a[0]["end_ns"]) + 20 * MS, "before its delay");
    // Incremental turns: the second is sent after the first and its reply.
    let own = body_of(&dir, "a", 1);
    let sent = with_history(&own, &[(body_of(&dir, "a", 0), reply(a[0]))]);
    assert_eq!(u(&a[1]["request_bytes"]), compact(&sent).len() as u64);
    assert!(u(&a[1]["request_bytes"]) > compact(&own).len() as u64);
    assert_eq!(a[0]["tokens"]["input"], 6);
    assert!(u(&a[1]["tokens"]["input"]) > 8, "{}", a[1]["tokens"]);
}

// ---- 2. multi_turn files

#[test]
fn multi_turn_sessions_send_their_turns_in_order_with_history_and_delays() {
    // alpha: 3 turns, a 150 ms delay before turn 1; beta: 2 turns, 50 ms before turn 1.
    let dir = tmpdir("multi-turn");
    profile_ok(&dir, &["--input-file", &data("multi_turn.jsonl")]);
    let recs = records(&dir);
    assert_eq!(recs.len(), 5, "one record per turn");
    for (name, turns, delays) in [("alpha", 3, vec![150 * MS, 0]), ("beta", 2, vec![50 * MS])] {
        let s: Vec<&Value> = recs.iter().filter(|r| conv(r) == name).collect();
        assert_eq!(s.len(), turns, "{name}");
        let idx: Vec<u64> = s.iter().map(|r| u(&r["turn_index"])).collect();
        assert_eq!(
            idx,
            (0..turns as u64).collect::<Vec<_>>(),
            "{name}: in order"
        );
        assert!(s.iter().all(|r| r["session_num"] == s[0]["session_num"]));
        assert!(
            s.iter()
                .all(|r| r["correlation_id"] == s[0]["correlation_id"])
        );
        let mut earlier = Vec::new();
        for (k, r) in s.iter().enumerate() {
            let own = body_of(&dir, name, k as u64);
            if k == 0 {
                assert_eq!(u(&r["request_bytes"]), compact(&own).len() as u64);
            } else {
                // Planned after the previous turn ended, plus its delay.
                let prev = s[k - 1];
                assert!(
                    u(&r["planned_ns"]) >= u(&prev["end_ns"]) + delays[k - 1],
                    "{name} turn {k}"
                );
                assert!(u(&r["start_ns"]) >= u(&prev["end_ns"]));
                // History was prepended: exactly the earlier turns and their replies.
                let sent = compact(&with_history(&own, &earlier));
                assert_eq!(u(&r["request_bytes"]), sent.len() as u64, "{name} turn {k}");
                assert!(u(&r["request_bytes"]) > compact(&own).len() as u64);
                assert!(
                    u(&r["tokens"]["input"]) > u(&s[0]["tokens"]["input"]),
                    "{name} turn {k}: {} vs {}",
                    r["tokens"],
                    s[0]["tokens"]
                );
            }
            earlier.push((own, reply(r)));
        }
    }
    let nums: Vec<&Value> = ["alpha", "beta"]
        .iter()
        .map(|n| &recs.iter().find(|r| conv(r) == *n).unwrap()["session_num"])
        .collect();
    assert_ne!(nums[0], nums[1]);
    // The texts are the file's, turn by turn.
    assert_eq!(content(&body_of(&dir, "alpha", 1)), "And of Spain?");
    assert_eq!(content(&body_of(&dir, "beta", 1)), "Another one please.");
    // profile_export.jsonl has the same sessions and turns.
    let export = jsonl(&dir.join("profile_export.jsonl"));
    assert_eq!(export.len(), 5);
    let mut pairs: Vec<(String, u64)> = export
        .iter()
        .map(|e| {
            (
                e["metadata"]["conversation_id"]
                    .as_str()
                    .unwrap()
                    .to_string(),
                u(&e["metadata"]["turn_index"]),
            )
        })
        .collect();
    pairs.sort();
    let want: Vec<(String, u64)> = [
        ("alpha", 0),
        ("alpha", 1),
        ("alpha", 2),
        ("beta", 0),
        ("beta", 1),
    ]
    .into_iter()
    .map(|(c, t)| (c.to_string(), t))
    .collect();
    assert_eq!(pairs, want);
}

// ---- 3. Synthetic multi-turn

#[test]
fn synthetic_multi_turn_sends_every_turn_of_three_sessions() {
    let dir = tmpdir("synthetic-mt");
    profile_ok(
        &dir,
        &[
            "--conversation-num",
            "3",
            "--conversation-turn-mean",
            "3",
            "--conversation-turn-delay-mean",
            "20",
            "--request-count",
            "9",
            "--isl",
            "8",
            "--osl",
            "2",
            "--random-seed",
            "11",
        ],
    );
    let recs = records(&dir);
    assert_eq!(recs.len(), 9);
    let mut sessions: BTreeMap<u64, Vec<&Value>> = BTreeMap::new();
    for r in &recs {
        sessions.entry(u(&r["session_num"])).or_default().push(r);
    }
    assert_eq!(sessions.len(), 3, "3 sessions");
    let mut convs = Vec::new();
    for (num, s) in &sessions {
        let idx: Vec<u64> = s.iter().map(|r| u(&r["turn_index"])).collect();
        assert_eq!(idx, [0, 1, 2], "session {num}");
        assert!(s.iter().all(|r| conv(r) == conv(s[0])));
        convs.push(conv(s[0]).to_string());
        for k in 1..3 {
            // 20 ms after the previous turn ended; history in front.
            assert!(u(&s[k]["planned_ns"]) >= u(&s[k - 1]["end_ns"]) + 20 * MS);
            let own = compact(&body_of(&dir, conv(s[k]), k as u64));
            assert!(u(&s[k]["request_bytes"]) > own.len() as u64);
        }
    }
    // Shuffle draws the 3 conversations without replacement: each once.
    convs.sort();
    assert_eq!(
        convs,
        ["session_000000", "session_000001", "session_000002"]
    );
    let ins = inputs(&dir);
    assert_eq!(ins.len(), 3);
    assert!(ins.iter().all(|(_, b)| b.len() == 3));
}

// ---- 4. single_turn rows sharing a session id

#[test]
fn single_turn_rows_sharing_a_session_id_are_one_session_without_history() {
    // s1: rows 1, 2 and 4 (a repeated id appends); row 3 is a conversation of its own.
    let dir = tmpdir("single-turn");
    profile_ok(&dir, &["--input-file", &data("single_turn_sessions.jsonl")]);
    let recs = records(&dir);
    assert_eq!(recs.len(), 4);
    let s1: Vec<&Value> = recs.iter().filter(|r| conv(r) == "s1").collect();
    assert_eq!(s1.len(), 3);
    let idx: Vec<u64> = s1.iter().map(|r| u(&r["turn_index"])).collect();
    assert_eq!(idx, [0, 1, 2]);
    assert!(s1.iter().all(|r| r["session_num"] == s1[0]["session_num"]));
    let other: Vec<&Value> = recs.iter().filter(|r| conv(r) != "s1").collect();
    assert_eq!(other.len(), 1);
    assert_ne!(other[0]["session_num"], s1[0]["session_num"]);
    let texts = ["Tell me a joke.", "Another joke.", "A third joke."];
    for (k, r) in s1.iter().enumerate() {
        let own = body_of(&dir, "s1", k as u64);
        assert_eq!(content(&own), texts[k]);
        // No history: exactly the turn's own body.
        assert_eq!(
            u(&r["request_bytes"]),
            compact(&own).len() as u64,
            "turn {k}"
        );
    }
    let own = body_of(&dir, conv(other[0]), 0);
    assert_eq!(content(&own), "Something unrelated.");
    assert_eq!(u(&other[0]["request_bytes"]), compact(&own).len() as u64);
}

#[test]
fn an_unnamed_conversation_does_not_share_a_session_with_an_id_the_file_uses() {
    // In each file, the first conversation is "session_000001" and the second has no id: two
    // conversations of one turn each, sent on their own.
    for file in [
        "single_turn_id_collision.jsonl",
        "multi_turn_id_collision.jsonl",
        "inputs_json_id_collision.json",
    ] {
        let dir = tmpdir("id-collision");
        profile_ok(&dir, &["--input-file", &data(file)]);
        let recs = records(&dir);
        assert_eq!(recs.len(), 2, "{file}");
        assert_ne!(recs[0]["session_num"], recs[1]["session_num"], "{file}");
        assert_ne!(conv(&recs[0]), conv(&recs[1]), "{file}");
        assert!(recs.iter().all(|r| r["turn_index"] == 0), "{file}");
        let ins = inputs(&dir);
        assert_eq!(ins.len(), 2, "{file}: two conversations in inputs.json");
        assert!(ins.iter().all(|(_, b)| b.len() == 1), "{file}");
        // Neither is sent with the other's history.
        for r in &recs {
            let own = compact(&body_of(&dir, conv(r), 0));
            assert_eq!(u(&r["request_bytes"]), own.len() as u64, "{file}");
        }
    }
}

// ---- 5. inputs.json replay

#[test]
fn replaying_inputs_json_sends_the_same_bytes() {
    let first = tmpdir("replay-src");
    profile_ok(
        &first,
        &[
            "--request-count",
            "5",
            "--num-dataset-entries",
            "5",
            "--random-seed",
            "3",
            "--isl",
            "12",
            "--osl",
            "2",
        ],
    );
    let second = tmpdir("replay");
    let src = first.join("inputs.json");
    profile_ok(
        &second,
        &[
            "--input-file",
            src.to_str().unwrap(),
            "--custom-dataset-type",
            "inputs_json",
        ],
    );
    let a = std::fs::read(&src).unwrap();
    let b = std::fs::read(second.join("inputs.json")).unwrap();
    assert!(a == b, "the replay's inputs.json differs from the original");
    let (ma, mb) = (manifest(&first), manifest(&second));
    assert!(ma["dataset"]["workload_sha256"].is_string());
    assert_eq!(
        ma["dataset"]["workload_sha256"],
        mb["dataset"]["workload_sha256"]
    );
    assert_eq!(mb["dataset"]["kind"], "inputs_json");
    for dir in [&first, &second] {
        let recs = records(dir);
        assert_eq!(recs.len(), 5);
        for r in &recs {
            let body = compact(&body_of(dir, conv(r), u(&r["turn_index"])));
            assert_eq!(u(&r["request_bytes"]), body.len() as u64, "{}", conv(r));
        }
    }
}

// ---- 6. Bad input

#[test]
fn a_malformed_trace_line_is_named_and_nothing_is_sent() {
    let base = tmpdir("malformed");
    let dir = base.join("run");
    let file = data("trace_malformed.jsonl");
    let o = profile(&dir, &["--input-file", &file]);
    assert_eq!(o.status.code(), Some(2), "{}", stderr(&o));
    let err = stderr(&o);
    assert!(err.contains(&format!("{file}:2:")), "{err}");
    assert!(err.contains("hash_ids"), "{err}");
    assert!(
        !dir.join("inferbench_evidence.jsonl").exists(),
        "a run directory with evidence was written"
    );
}

#[test]
fn asking_more_requests_than_a_sequential_file_holds_needs_allow_dataset_wrap() {
    let file = data("trace_sequential.jsonl");
    let base = tmpdir("wrap");
    let dir = base.join("run");
    let o = profile(&dir, &["--input-file", &file, "--request-count", "10"]);
    assert_eq!(o.status.code(), Some(2), "{}", stderr(&o));
    let err = stderr(&o);
    assert!(err.contains("--allow-dataset-wrap"), "{err}");
    assert!(!dir.join("inferbench_evidence.jsonl").exists());

    let dir = tmpdir("wrapped");
    profile_ok(
        &dir,
        &[
            "--input-file",
            &file,
            "--request-count",
            "10",
            "--allow-dataset-wrap",
        ],
    );
    let recs = records(&dir);
    assert_eq!(recs.len(), 10);
    // Sequential, starting over: rows 0, 1, 2, 0, … (6, 7, 8 tokens).
    let isl: Vec<u64> = recs.iter().map(|r| u(&r["tokens"]["input"])).collect();
    assert_eq!(isl, [6, 7, 8, 6, 7, 8, 6, 7, 8, 6]);
}

// ---- 7. raw_payload

#[test]
fn raw_payload_bodies_are_sent_verbatim() {
    // The file's rows, compacted by hand (key order kept; the second row's `payload` wrapper
    // unwrapped).
    let want = [
        r#"{"model":"mock-model","messages":[{"role":"user","content":"café au lait"}],"max_tokens":2,"temperature":0.5,"zeta":{"b":1,"a":[true,null]}}"#,
        r#"{"messages":[{"role":"system","content":"be brief"},{"role":"user","content":"raw \"two\""}],"model":"mock-model","max_tokens":3}"#,
    ];
    let dir = tmpdir("raw");
    profile_ok(&dir, &["--input-file", &data("raw_payload.jsonl")]);
    let ins = inputs(&dir);
    assert_eq!(ins.len(), 2);
    for (k, (_, bodies)) in ins.iter().enumerate() {
        assert_eq!(bodies.len(), 1);
        assert_eq!(compact(&bodies[0]), want[k]);
    }
    let recs = records(&dir);
    assert_eq!(recs.len(), 2);
    for r in &recs {
        let k = ins.iter().position(|(s, _)| s == conv(r)).unwrap();
        assert_eq!(u(&r["request_bytes"]), want[k].len() as u64, "row {k}");
        assert_eq!(r["status"], 200);
    }
    assert_eq!(manifest(&dir)["dataset"]["kind"], "raw_payload");
}

#[test]
fn sharegpt_from_a_local_file_keeps_the_pairs_vllm_keeps() {
    // Of the four entries only "keep" passes vLLM's filters (prompt and completion ≥ 4
    // tokens); its recorded completion length becomes max_completion_tokens.
    let dir = tmpdir("ds-sharegpt");
    profile_ok(
        &dir,
        &[
            "--public-dataset",
            "sharegpt",
            "--public-dataset-path",
            &data("sharegpt.json"),
            "--request-count",
            "2",
            "--allow-dataset-wrap",
        ],
    );
    let sessions = inputs(&dir);
    assert_eq!(sessions.len(), 1, "{sessions:?}");
    let body = &sessions[0].1[0];
    assert_eq!(
        content(body),
        "Tell me about the sonnets of Shakespeare please"
    );
    // "They are fourteen lines long and rhyme" is 7 tokens in o200k_base.
    assert_eq!(body["max_completion_tokens"], 7);
    assert_eq!(records(&dir).len(), 2);
    let m = manifest(&dir);
    assert_eq!(m["dataset"]["kind"], "sharegpt");
}

#[test]
fn a_genai_perf_inputs_file_is_replayed_verbatim() {
    let dir = tmpdir("ds-gp-inputs");
    profile_ok(
        &dir,
        &[
            "--endpoint-type",
            "completions",
            "--input-file",
            &data("genai_perf_inputs_S4.json"),
            "--custom-dataset-type",
            "genai_perf_inputs",
        ],
    );
    let src: Value =
        serde_json::from_str(&std::fs::read_to_string(data("genai_perf_inputs_S4.json")).unwrap())
            .unwrap();
    let want: Vec<&Value> = src["data"]
        .as_array()
        .unwrap()
        .iter()
        .flat_map(|d| d["payload"].as_array().unwrap())
        .collect();
    let recs = records(&dir);
    // No --request-count: every payload of the file once.
    assert_eq!(recs.len(), want.len());
    let sent: Vec<Value> = inputs(&dir).into_iter().flat_map(|(_, p)| p).collect();
    for (w, s) in want.iter().zip(&sent) {
        assert_eq!(*w, s, "the body is GenAI-Perf's payload, as written");
    }
    for r in &recs {
        let body = &sent[u(&r["payload_index"]) as usize];
        assert_eq!(u(&r["request_bytes"]), compact(body).len() as u64);
    }
}

#[test]
fn a_random_pool_directory_builds_rankings_requests_from_its_pools() {
    let dir = tmpdir("ds-pool");
    profile_ok(
        &dir,
        &[
            "--endpoint-type",
            "cohere_rankings",
            "--input-file",
            &data("pool"),
            "--custom-dataset-type",
            "random_pool",
            "--conversation-num",
            "3",
            "--request-count",
            "3",
            "--random-seed",
            "9",
        ],
    );
    let recs = records(&dir);
    assert_eq!(recs.len(), 3);
    for (_, payloads) in inputs(&dir) {
        let b = &payloads[0];
        // Each request: one query from queries.jsonl, the passages of passages.jsonl.
        let q = b["query"].as_str().unwrap();
        assert!(q == "what is a rose" || q == "who wrote sonnets", "{b}");
        assert_eq!(
            b["documents"],
            serde_json::json!(["a rose is a flower", "by any other name"])
        );
    }
    assert!(recs.iter().all(|r| r.get("error").is_none()));
}

#[test]
fn the_raw_export_holds_the_body_a_turn_was_sent_with() {
    // With --export-level raw, a later turn's payload is the body as sent: the
    // conversation so far (the earlier user turn and its reply) in front of its own message.
    let dir = tmpdir("multi-turn-raw");
    profile_ok(
        &dir,
        &[
            "--input-file",
            &data("multi_turn.jsonl"),
            "--export-level",
            "raw",
        ],
    );
    let raw = jsonl(&dir.join("profile_export_raw.jsonl"));
    let recs = records(&dir);
    assert_eq!(raw.len(), recs.len());
    for line in &raw {
        let turn = line["metadata"]["turn_index"].as_u64().unwrap();
        let msgs = line["payload"]["messages"].as_array().unwrap();
        // Each turn of multi_turn.jsonl is one user message: turn k carries 2k + 1 messages.
        assert_eq!(msgs.len() as u64, 2 * turn + 1, "{line}");
        if turn > 0 {
            assert_eq!(msgs[1]["role"], "assistant");
        }
    }
    // Rebuilt offline from the evidence, the raw export is the same, byte for byte.
    let live = std::fs::read(dir.join("profile_export_raw.jsonl")).unwrap();
    let o = run(&["metrics", dir.to_str().unwrap(), "--write"]);
    assert!(o.status.success(), "{}", stderr(&o));
    let rebuilt = std::fs::read(dir.join("profile_export_raw.jsonl")).unwrap();
    assert!(live == rebuilt, "the rebuilt raw export differs");
}
