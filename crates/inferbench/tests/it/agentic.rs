//! Child sessions end to end (`weka_trace`, `tracelab`, `dag_jsonl`): the real binary
//! against its built-in simulated server, records counted by hand from the files in
//! `tests/data/datasets/agentic_*` (docs/load-shapes.md "Child sessions").

use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

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

fn profile_args<'a>(dir: &'a Path, extra: &[&'a str]) -> Vec<&'a str> {
    let ttft = if extra.contains(&"--sim-ttft-ms") {
        vec![]
    } else {
        vec!["--sim-ttft-ms", "0"]
    };
    let mut args = vec![
        "profile",
        "--ui",
        "none",
        "--sim-itl-ms",
        "0",
        "--artifact-dir",
        dir.to_str().unwrap(),
    ];
    args.extend(ttft);
    args.extend_from_slice(extra);
    args
}

fn profile_ok(dir: &Path, extra: &[&str]) {
    let o = run(&profile_args(dir, extra));
    assert!(o.status.success(), "exit {:?}: {}", o.status, stderr(&o));
}

/// Every record, by id; the ids run 0..n without a gap (one record per issued request).
fn records(dir: &Path) -> Vec<Value> {
    let mut r = evidence_records(dir);
    r.sort_by_key(|r| r["id"].as_u64().unwrap());
    let ids: Vec<u64> = r.iter().map(|r| r["id"].as_u64().unwrap()).collect();
    assert_eq!(ids, (0..r.len() as u64).collect::<Vec<_>>());
    r
}

fn u(v: &Value) -> u64 {
    v.as_u64().unwrap_or_else(|| panic!("not an integer: {v}"))
}

fn find<'a>(recs: &'a [Value], conv: &str, turn: u64) -> &'a Value {
    recs.iter()
        .find(|r| r["conversation_id"] == conv && r["turn_index"] == turn)
        .unwrap_or_else(|| panic!("no record of {conv} turn {turn}"))
}

fn depth(r: &Value) -> u64 {
    r["agent_depth"].as_u64().unwrap_or(0)
}

/// The WEKA trace `fast`: calls at 0 and 100 ms (api 10 ms: an idle gap of 90 ms); from the
/// first, agent_001 (calls at 20 and 40 ms, ends at 70 ms: joined by the 100 ms call) and
/// agent_002 (one call at 80 ms, 50 ms after its spawn at 30 ms; ends at 1.03 s: background).
#[test]
fn weka_subagents_run_as_child_sessions_and_join() {
    let dir = tmpdir("agentic-weka");
    profile_ok(
        &dir,
        &[
            "--input-file",
            &data("agentic_weka.json"),
            "--custom-dataset-type",
            "weka_trace",
            "--concurrency",
            "1",
        ],
    );
    let recs = records(&dir);
    // Every root once with its children: 2 + 2 + 1.
    assert_eq!(recs.len(), 5);
    let root0 = find(&recs, "fast", 0);
    let root1 = find(&recs, "fast", 1);
    let a1_0 = find(&recs, "fast::sa:agent_001", 0);
    let a1_1 = find(&recs, "fast::sa:agent_001", 1);
    let a2 = find(&recs, "fast::sa:agent_002", 0);
    assert_eq!(recs.iter().filter(|r| depth(r) == 0).count(), 2);
    for c in [a1_0, a1_1, a2] {
        assert_eq!(depth(c), 1);
        assert_eq!(c["parent_session_num"], root0["session_num"]);
        assert_eq!(c["parent_correlation_id"], root0["correlation_id"]);
        assert_eq!(c["root_correlation_id"], root0["correlation_id"]);
        assert_ne!(c["correlation_id"], root0["correlation_id"]);
    }
    // Sessions: the root first, then agent_001 (at once), then agent_002 (50 ms later).
    assert_eq!(u(&root0["session_num"]), 0);
    assert_eq!(u(&a1_0["session_num"]), 1);
    assert_eq!(u(&a2["session_num"]), 2);
    assert_eq!(a1_0["session_num"], a1_1["session_num"]);
    // Children are due when the spawning call ended, plus their recorded offset.
    let end0 = u(&root0["end_ns"]);
    assert_eq!(u(&a1_0["planned_ns"]), end0);
    assert_eq!(u(&a2["planned_ns"]), end0 + 50 * MS);
    assert!(u(&a2["start_ns"]) >= end0 + 50 * MS);
    // agent_001's second call: 40 − 20 ms (no api time) after its first ended.
    assert!(u(&a1_1["planned_ns"]) >= u(&a1_0["end_ns"]) + 20 * MS);
    // The parent's second call joins agent_001, still running when the parent's first call
    // ended: it goes when agent_001 ends, without the parent's 90 ms gap (AIPerf releases a
    // blocked join at once).
    assert!(u(&root1["start_ns"]) >= u(&a1_1["end_ns"]));
    assert!(u(&root1["planned_ns"]) >= u(&a1_1["end_ns"]));
    assert!(u(&root1["planned_ns"]) < end0 + 90 * MS);
    // AIPerf's record fields in profile_export.jsonl: agent depth, parent, root.
    let lines = jsonl(&dir.join("profile_export.jsonl"));
    assert_eq!(lines.len(), 5);
    let kids: Vec<&Value> = lines
        .iter()
        .filter(|l| l["metadata"]["agent_depth"] == 1)
        .collect();
    assert_eq!(kids.len(), 3);
    for k in kids {
        assert_eq!(
            k["metadata"]["parent_correlation_id"],
            root0["correlation_id"]
        );
        assert_eq!(
            k["metadata"]["root_correlation_id"],
            root0["correlation_id"]
        );
    }
    let root_line = lines
        .iter()
        .find(|l| l["metadata"]["agent_depth"] == 0)
        .unwrap();
    assert!(root_line["metadata"].get("parent_correlation_id").is_none());
}

/// `--request-count 3` counts children too: the root's first call (id 0), then agent_001's
/// two (ids 1, 2, each claimed when the call before it ended); the root's joining call and
/// agent_002 (50 ms later) find the count reached. Three requests, three records.
#[test]
fn the_request_count_cuts_trees_with_one_record_per_request() {
    let dir = tmpdir("agentic-count");
    profile_ok(
        &dir,
        &[
            "--input-file",
            &data("agentic_weka.json"),
            "--custom-dataset-type",
            "weka_trace",
            "--request-count",
            "3",
        ],
    );
    let recs = records(&dir);
    let got: Vec<(String, u64)> = recs
        .iter()
        .map(|r| {
            (
                r["conversation_id"].as_str().unwrap().to_string(),
                u(&r["turn_index"]),
            )
        })
        .collect();
    assert_eq!(
        got,
        [
            ("fast".to_string(), 0),
            ("fast::sa:agent_001".to_string(), 0),
            ("fast::sa:agent_001".to_string(), 1),
        ]
    );
}

/// The DAG file: `root` (3 turns) spawns research (2) and review (1) from turn 0, joined by
/// turn 1; forks `side` (1) in the background from turn 1 and `tail` (1) from its last turn;
/// `solo` (1) stands alone. In order, once each: 8 + 1 = 9 records, 4 of them roots'.
#[test]
fn dag_roots_spawn_fork_and_join() {
    let dir = tmpdir("agentic-dag");
    profile_ok(
        &dir,
        &[
            "--input-file",
            &data("agentic_dag.jsonl"),
            "--dataset-sampling-strategy",
            "sequential",
            "--concurrency",
            "1",
            "--export-level",
            "raw",
        ],
    );
    let recs = records(&dir);
    assert_eq!(recs.len(), 9);
    assert_eq!(recs.iter().filter(|r| depth(r) == 0).count(), 4);
    let root: Vec<&Value> = (0..3).map(|t| find(&recs, "root", t)).collect();
    let research = [find(&recs, "research", 0), find(&recs, "research", 1)];
    let review = find(&recs, "review", 0);
    let side = find(&recs, "side", 0);
    let tail = find(&recs, "tail", 0);
    let solo = find(&recs, "solo", 0);
    for c in [research[0], research[1], review, side, tail] {
        assert_eq!(depth(c), 1);
        assert_eq!(c["parent_session_num"], root[0]["session_num"]);
    }
    // Spawned when turn 0 ended; turn 1 waits for both.
    assert!(u(&research[0]["start_ns"]) >= u(&root[0]["end_ns"]));
    assert!(u(&review["start_ns"]) >= u(&root[0]["end_ns"]));
    let joined = u(&research[1]["end_ns"]).max(u(&review["end_ns"]));
    assert!(u(&root[1]["start_ns"]) >= joined);
    // research's second turn waits its 50 ms delay.
    assert!(u(&research[1]["planned_ns"]) >= u(&research[0]["end_ns"]) + 50 * MS);
    assert!(u(&side["start_ns"]) >= u(&root[1]["end_ns"]));
    assert!(u(&tail["start_ns"]) >= u(&root[2]["end_ns"]));
    // One slot: solo starts once the root's last turn ended (its children take no slot).
    assert!(u(&solo["start_ns"]) >= u(&root[2]["end_ns"]));
    assert_eq!(depth(solo), 0);
    // Forks continue the parent's conversation, live replies included: side gets system,
    // user, assistant, user, assistant, then its own; tail the root's three turns before
    // its own. A spawned child starts fresh.
    let msgs = |r: &Value| -> Vec<String> {
        let b: Value = serde_json::from_str(r["sent_body"].as_str().unwrap()).unwrap();
        b["messages"]
            .as_array()
            .unwrap()
            .iter()
            .map(|m| m["role"].as_str().unwrap().to_string())
            .collect()
    };
    assert_eq!(
        msgs(side),
        ["system", "user", "assistant", "user", "assistant", "user"]
    );
    assert_eq!(
        msgs(tail),
        [
            "system",
            "user",
            "assistant",
            "user",
            "assistant",
            "user",
            "assistant",
            "user"
        ]
    );
    assert!(
        review.get("sent_body").is_none(),
        "a spawned child sends its own turn alone"
    );
}

/// TraceLab, gzipped, without its 28 s recorded gaps: the parent session, its nested
/// subagent (2 calls) and the unrelated session: 2 + 2 + 1 records.
#[test]
fn tracelab_gzip_runs_its_subagent_as_a_child() {
    let dir = tmpdir("agentic-tracelab");
    let text = std::fs::read(data("agentic_tracelab.jsonl")).unwrap();
    let gz = dir.join("trace.jsonl.gz");
    std::fs::create_dir_all(&dir).unwrap();
    std::fs::write(&gz, gzip(&text)).unwrap();
    profile_ok(
        &dir,
        &[
            "--input-file",
            gz.to_str().unwrap(),
            "--ignore-trace-delays",
            "--concurrency",
            "2",
        ],
    );
    let recs = records(&dir);
    assert_eq!(recs.len(), 5);
    let kids: Vec<&Value> = recs.iter().filter(|r| depth(r) == 1).collect();
    assert_eq!(kids.len(), 2);
    let parent = find(&recs, "claude_p1", 0);
    for k in kids {
        assert_eq!(k["conversation_id"], "claude_p1::sa:claude_c1");
        assert_eq!(k["parent_session_num"], parent["session_num"]);
    }
    assert!(
        u(&find(&recs, "claude_p1", 1)["start_ns"])
            >= u(&find(&recs, "claude_p1::sa:claude_c1", 1)["end_ns"])
    );
}

/// A duration cuts a looping DAG run: every claimed request (the phase's `scheduled`) is one
/// record, children included, and no child outlives the phase.
#[test]
fn a_duration_cut_leaves_one_record_per_scheduled_request() {
    let dir = tmpdir("agentic-duration");
    profile_ok(
        &dir,
        &[
            "--input-file",
            &data("agentic_dag.jsonl"),
            "--concurrency",
            "2",
            "--benchmark-duration",
            "0.4",
            "--benchmark-grace-period",
            "0",
            "--sim-ttft-ms",
            "5",
        ],
    );
    let recs = records(&dir);
    let phase = evidence_lines(&dir)
        .into_iter()
        .find(|l| l["line"] == "phase" && l["phase"] == "profiling")
        .unwrap();
    assert_eq!(u(&phase["scheduled"]), recs.len() as u64);
    assert!(recs.iter().any(|r| depth(r) == 1), "children ran");
    let end = u(&phase["requests_end_ns"]);
    assert!(recs.iter().all(|r| u(&r["end_ns"]) <= end));
    // A child's parent is a session of the run.
    for r in recs.iter().filter(|r| depth(r) == 1) {
        assert!(
            recs.iter()
                .any(|p| p["session_num"] == r["parent_session_num"])
        );
    }
}

#[test]
fn ctrl_c_leaves_one_record_per_request_with_children_in_flight() {
    let dir = tmpdir("agentic-ctrlc");
    std::fs::create_dir_all(&dir).unwrap();
    let mut child = bin()
        .args(profile_args(
            &dir,
            &[
                "--input-file",
                &data("agentic_dag.jsonl"),
                "--concurrency",
                "2",
                "--request-count",
                "100000",
                "--sim-ttft-ms",
                "2",
            ],
        ))
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    let ev = dir.join("inferbench_evidence.jsonl");
    let start = Instant::now();
    while start.elapsed() < Duration::from_secs(30) {
        let n = std::fs::read_to_string(&ev)
            .map(|t| t.lines().count())
            .unwrap_or(0);
        if n > 30 {
            break;
        }
        std::thread::sleep(Duration::from_millis(50));
    }
    for _ in 0..2 {
        let _ = Command::new("kill")
            .args(["-INT", &child.id().to_string()])
            .status();
        std::thread::sleep(Duration::from_millis(30));
    }
    wait_bounded(&mut child, Duration::from_secs(60));
    let out = child.wait_with_output().unwrap();
    assert_eq!(out.status.code(), Some(130));
    let recs = records(&dir);
    assert!(recs.iter().any(|r| depth(r) == 1));
    for r in recs.iter().filter(|r| r["cancelled"] == true) {
        assert_eq!(r["error"]["kind"], "cancelled");
    }
}

#[test]
fn agentic_flags_and_scenario_are_checked() {
    let dir = tmpdir("agentic-flags");
    // --max-context-length below the trace's largest request (10 + 2 = 12) drops it.
    let o = run(&profile_args(
        &dir,
        &[
            "--input-file",
            &data("agentic_weka.json"),
            "--max-context-length",
            "11",
        ],
    ));
    assert_eq!(o.status.code(), Some(2), "{}", stderr(&o));
    assert!(
        stderr(&o).contains("--max-context-length"),
        "{}",
        stderr(&o)
    );
    // AIPerf's AgentX scenario is refused by name, with the reason.
    let o = run(&profile_args(
        &dir,
        &["--scenario", "inferencex-agentx-mvp"],
    ));
    assert_eq!(o.status.code(), Some(2), "{}", stderr(&o));
    assert!(
        stderr(&o).contains("inferencex-agentx-mvp"),
        "{}",
        stderr(&o)
    );
    assert!(stderr(&o).contains("agentic_replay"), "{}", stderr(&o));
}

/// `data` as a one-member gzip file.
fn gzip(data: &[u8]) -> Vec<u8> {
    let mut crc = 0xFFFF_FFFFu32;
    for &b in data {
        crc ^= b as u32;
        for _ in 0..8 {
            crc = if crc & 1 != 0 {
                0xEDB8_8320 ^ (crc >> 1)
            } else {
                crc >> 1
            };
        }
    }
    let mut v = vec![0x1f, 0x8b, 8, 0, 0, 0, 0, 0, 0, 255];
    v.extend(miniz_oxide::deflate::compress_to_vec(data, 6));
    v.extend((!crc).to_le_bytes());
    v.extend((data.len() as u32).to_le_bytes());
    v
}
