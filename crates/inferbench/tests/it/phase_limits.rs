//! AIPerf's YAML-only phase settings as flags: a profiling phase stopped by sessions
//! (`--num-profiling-sessions`) and a user-centric warmup (`--warmup-user-centric-rate`,
//! `--warmup-num-users`), against the simulated server.

use std::collections::BTreeSet;
use std::path::Path;

use serde_json::Value;

use crate::common::{evidence_lines, run, stderr, tmpdir};

const FAST: [&str; 10] = [
    "--isl",
    "8",
    "--osl",
    "4",
    "--ui",
    "none",
    "--sim-itl-ms",
    "0.2",
    "--sim-ttft-ms",
    "1",
];

/// The records of `phase`, sorted by id.
fn records(dir: &Path, phase: &str) -> Vec<Value> {
    let mut recs: Vec<Value> = evidence_lines(dir)
        .into_iter()
        .filter(|l| l["line"] == "record" && l["phase"] == phase)
        .collect();
    recs.sort_by_key(|r| r["id"].as_u64().unwrap());
    recs
}

fn profile(name: &str, extra: &[&str]) -> std::path::PathBuf {
    let dir = tmpdir(name);
    let mut args = vec![
        "profile",
        "--random-seed",
        "5",
        "--artifact-dir",
        dir.to_str().unwrap(),
    ];
    args.extend(FAST);
    args.extend(extra);
    let o = run(&args);
    assert_eq!(o.status.code(), Some(0), "{extra:?}: {}", stderr(&o));
    dir
}

#[test]
fn profiling_sessions_alone_stop_the_phase_after_that_many_whole_sessions() {
    // Two-turn conversations, four slots, three sessions and no request count: three
    // sessions start, each sends both turns, so 3 × 2 = 6 records.
    let dir = profile(
        "profiling-sessions",
        &[
            "--concurrency",
            "4",
            "--conversation-turn-mean",
            "2",
            "--num-profiling-sessions",
            "3",
        ],
    );
    let recs = records(&dir, "profiling");
    assert_eq!(recs.len(), 6, "{recs:?}");
    let mut turns: Vec<(u64, u64)> = recs
        .iter()
        .map(|r| {
            (
                r["session_num"].as_u64().unwrap(),
                r["turn_index"].as_u64().unwrap(),
            )
        })
        .collect();
    turns.sort();
    let sessions: BTreeSet<u64> = turns.iter().map(|t| t.0).collect();
    assert_eq!(sessions.len(), 3, "{turns:?}");
    for s in sessions {
        assert!(
            turns.contains(&(s, 0)) && turns.contains(&(s, 1)),
            "{turns:?}"
        );
    }
    let summary = crate::common::read_json(&dir.join("profile_export_aiperf.json"));
    let phases = &summary["input_config"]["phases"];
    assert_eq!(phases[0]["sessions"], 3, "{phases}");
}

#[test]
fn with_a_request_count_too_the_first_limit_reached_ends_profiling() {
    // Three sessions of two turns would be 6 requests; the count of 3 comes first.
    let dir = profile(
        "profiling-sessions-count",
        &[
            "--concurrency",
            "1",
            "--conversation-turn-mean",
            "2",
            "--num-profiling-sessions",
            "3",
            "--request-count",
            "3",
        ],
    );
    assert_eq!(records(&dir, "profiling").len(), 3);
}

#[test]
fn a_user_centric_warmup_plans_each_user_u_over_q_apart() {
    // Q = 100 requests/s over U = 2 users: user u's k-th request is planned at
    // (u + 2k)/100 s, so the four warmup requests at 0, 10, 20 and 30 ms.
    let dir = profile(
        "warmup-user-centric",
        &[
            "--request-count",
            "2",
            "--warmup-request-count",
            "4",
            "--warmup-user-centric-rate",
            "100",
            "--warmup-num-users",
            "2",
        ],
    );
    let lines = evidence_lines(&dir);
    let phase = lines
        .iter()
        .find(|l| l["line"] == "phase" && l["phase"] == "warmup")
        .expect("a warmup phase line");
    let start = phase["start_ns"].as_u64().unwrap();
    let mut offs: Vec<u64> = records(&dir, "warmup")
        .iter()
        .map(|r| r["planned_ns"].as_u64().unwrap() - start)
        .collect();
    offs.sort();
    assert_eq!(offs, [0, 10_000_000, 20_000_000, 30_000_000]);
    let summary = crate::common::read_json(&dir.join("profile_export_aiperf.json"));
    let w = &summary["input_config"]["phases"][0];
    assert_eq!(
        (&w["type"], &w["users"], &w["rate"]),
        (&"user_centric".into(), &2.into(), &100.0.into()),
        "{w}"
    );
}

#[test]
fn bad_phase_limit_flags_are_one_line_errors_naming_the_flag() {
    for (args, want) in [
        (
            &["--num-profiling-sessions", "0"][..],
            "--num-profiling-sessions 0: must be ≥ 1",
        ),
        (
            &[
                "--warmup-request-count",
                "2",
                "--warmup-user-centric-rate",
                "5",
            ][..],
            "--warmup-user-centric-rate and --warmup-num-users go together",
        ),
        (
            &["--warmup-user-centric-rate", "5", "--warmup-num-users", "2"][..],
            "--warmup-user-centric-rate, --warmup-num-users need --warmup-request-count",
        ),
        (
            &[
                "--warmup-request-count",
                "2",
                "--warmup-user-centric-rate",
                "5",
                "--warmup-num-users",
                "0",
            ][..],
            "--warmup-num-users 0: must be ≥ 1",
        ),
    ] {
        let mut a = vec!["profile", "--request-count", "1"];
        a.extend(args);
        let o = run(&a);
        assert_eq!(o.status.code(), Some(2), "{args:?}: {}", stderr(&o));
        assert!(stderr(&o).contains(want), "{args:?}: {}", stderr(&o));
        assert_eq!(stderr(&o).trim().lines().count(), 1, "{}", stderr(&o));
    }
}
