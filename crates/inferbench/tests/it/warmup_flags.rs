//! The warmup phase's own arrival pattern and grace period (`--warmup-arrival-pattern`,
//! `--warmup-grace-period`), against the simulated server.

use std::path::Path;

use serde_json::Value;

use crate::common::{evidence_lines, run, stderr, tmpdir};

/// (warmup phase line, warmup records sorted by id).
fn warmup(dir: &Path) -> (Value, Vec<Value>) {
    let lines = evidence_lines(dir);
    let phase = lines
        .iter()
        .find(|l| l["line"] == "phase" && l["phase"] == "warmup")
        .cloned()
        .expect("a warmup phase line");
    let mut recs: Vec<Value> = lines
        .into_iter()
        .filter(|l| l["line"] == "record" && l["phase"] == "warmup")
        .collect();
    recs.sort_by_key(|r| r["id"].as_u64().unwrap());
    (phase, recs)
}

const FAST: [&str; 8] = [
    "--isl",
    "8",
    "--osl",
    "4",
    "--ui",
    "none",
    "--sim-itl-ms",
    "0.2",
];

#[test]
fn a_constant_warmup_plans_k_over_rate_while_profiling_stays_poisson() {
    let dir = tmpdir("warmup-constant");
    let mut args = vec![
        "profile",
        "--request-rate",
        "100",
        "--request-count",
        "4",
        "--warmup-request-count",
        "6",
        "--warmup-request-rate",
        "50",
        "--warmup-arrival-pattern",
        "constant",
        "--random-seed",
        "3",
        "--sim-ttft-ms",
        "1",
        "--artifact-dir",
        dir.to_str().unwrap(),
    ];
    args.extend(FAST);
    let o = run(&args);
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    let (phase, recs) = warmup(&dir);
    let start = phase["start_ns"].as_u64().unwrap();
    let offs: Vec<u64> = recs
        .iter()
        .map(|r| r["planned_ns"].as_u64().unwrap() - start)
        .collect();
    // Constant at 50/s: request k planned at k × 20 ms (Poisson would draw random gaps).
    assert_eq!(offs, (0..6u64).map(|k| k * 20_000_000).collect::<Vec<_>>());
}

#[test]
fn the_warmup_grace_period_cancels_what_outlives_it() {
    let dir = tmpdir("warmup-grace");
    let mut args = vec![
        "profile",
        "--concurrency",
        "2",
        "--request-count",
        "1",
        "--warmup-duration",
        "0.2",
        "--warmup-grace-period",
        "0.1",
        "--streaming",
        "--sim-ttft-ms",
        "1500",
        "--artifact-dir",
        dir.to_str().unwrap(),
    ];
    args.extend(FAST);
    let o = run(&args);
    assert!(o.status.code().is_some(), "{}", stderr(&o));
    let (phase, recs) = warmup(&dir);
    let start = phase["start_ns"].as_u64().unwrap();
    // Two slots, each request 1.5 s: the two warmup requests outlive 0.2 s + 0.1 s and are
    // cancelled then (without the grace period they would finish at 1.5 s).
    assert_eq!(recs.len(), 2, "{recs:?}");
    for r in &recs {
        assert_eq!(r["cancelled"], true, "{r}");
        let at = r["cancel_ns"].as_u64().unwrap() - start;
        assert!(
            (300_000_000..1_400_000_000).contains(&at),
            "cancelled {at} ns after the warmup start"
        );
    }
}

#[test]
fn warmup_flags_without_what_they_shape_are_errors() {
    for (args, want) in [
        (
            &["--warmup-request-count", "2", "--warmup-grace-period", "1"][..],
            "--warmup-grace-period needs --warmup-duration",
        ),
        (
            &[
                "--warmup-request-count",
                "2",
                "--warmup-arrival-pattern",
                "constant",
            ][..],
            "--warmup-arrival-pattern needs --warmup-request-rate or --request-rate",
        ),
        (
            &["--warmup-grace-period", "1"][..],
            "--warmup-grace-period needs --warmup-request-count, --num-warmup-sessions or --warmup-duration",
        ),
    ] {
        let mut a = vec!["profile"];
        a.extend(args);
        let o = run(&a);
        assert_eq!(o.status.code(), Some(2), "{args:?}: {}", stderr(&o));
        assert!(stderr(&o).contains(want), "{args:?}: {}", stderr(&o));
    }
}

/// The warmup records: (session number, turn index) of each, in id order.
fn warmup_turns(dir: &Path) -> Vec<(u64, u64)> {
    warmup(dir)
        .1
        .iter()
        .map(|r| {
            (
                r["session_num"].as_u64().unwrap(),
                r["turn_index"].as_u64().unwrap(),
            )
        })
        .collect()
}

fn sessions_run(name: &str, extra: &[&str]) -> std::path::PathBuf {
    let dir = tmpdir(name);
    let mut args = vec![
        "profile",
        "--request-count",
        "2",
        "--random-seed",
        "5",
        "--sim-ttft-ms",
        "1",
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
fn warmup_sessions_limit_sessions_and_each_sends_all_its_turns() {
    // Three-turn conversations, four slots, two warmup sessions: the slots would start more
    // sessions, but only two start, and each sends its three turns: 2 × 3 = 6 records.
    let dir = sessions_run(
        "warmup-sessions",
        &[
            "--concurrency",
            "4",
            "--conversation-turn-mean",
            "3",
            "--num-warmup-sessions",
            "2",
        ],
    );
    let mut turns = warmup_turns(&dir);
    turns.sort();
    let sessions: std::collections::BTreeSet<u64> = turns.iter().map(|t| t.0).collect();
    assert_eq!(sessions.len(), 2, "{turns:?}");
    let (a, b) = (sessions.first().copied(), sessions.last().copied());
    let want: Vec<(u64, u64)> = [a.unwrap(), b.unwrap()]
        .iter()
        .flat_map(|s| (0..3).map(move |t| (*s, t)))
        .collect();
    assert_eq!(turns, want);
    // The summary's input_config carries AIPerf's warmup phase with its `sessions`.
    let summary = crate::common::read_json(&dir.join("profile_export_aiperf.json"));
    let text = summary["input_config"].to_string();
    assert!(text.contains("\"sessions\":2"), "{text}");
}

#[test]
fn with_a_request_count_too_the_first_limit_reached_ends_the_warmup() {
    // Two slots, two sessions of three turns: at most 6 requests; --warmup-request-count 4
    // stops first, cutting the sessions' later turns (AIPerf's request cap holds every
    // turn): 4 records over 2 sessions.
    let dir = sessions_run(
        "warmup-sessions-count",
        &[
            "--concurrency",
            "2",
            "--conversation-turn-mean",
            "3",
            "--num-warmup-sessions",
            "2",
            "--warmup-request-count",
            "4",
        ],
    );
    let turns = warmup_turns(&dir);
    assert_eq!(turns.len(), 4, "{turns:?}");
    let sessions: std::collections::BTreeSet<u64> = turns.iter().map(|t| t.0).collect();
    assert_eq!(sessions.len(), 2, "{turns:?}");
    // A count above the sessions' 2 × 3 turns: the session limit ends it at 6.
    let dir = sessions_run(
        "warmup-sessions-count-high",
        &[
            "--concurrency",
            "2",
            "--conversation-turn-mean",
            "3",
            "--num-warmup-sessions",
            "2",
            "--warmup-request-count",
            "10",
        ],
    );
    assert_eq!(warmup_turns(&dir).len(), 6);
}

#[test]
fn single_turn_warmup_sessions_are_requests_and_a_long_duration_ends_early() {
    // One turn each: five sessions are five requests.
    let dir = sessions_run(
        "warmup-sessions-single",
        &["--concurrency", "2", "--num-warmup-sessions", "5"],
    );
    assert_eq!(warmup_turns(&dir).len(), 5);
    // With a 60 s warmup duration the sessions' limit still ends the warmup's issuing once
    // the 2 × 2 turns are done (the run would otherwise take a minute).
    let t = std::time::Instant::now();
    let dir = sessions_run(
        "warmup-sessions-duration",
        &[
            "--concurrency",
            "3",
            "--conversation-turn-mean",
            "2",
            "--num-warmup-sessions",
            "2",
            "--warmup-duration",
            "60",
        ],
    );
    assert_eq!(warmup_turns(&dir).len(), 4);
    assert!(t.elapsed() < std::time::Duration::from_secs(30));
}

#[test]
fn zero_warmup_sessions_is_an_error() {
    let o = run(&["profile", "--num-warmup-sessions", "0"]);
    assert_eq!(o.status.code(), Some(2), "{}", stderr(&o));
    assert!(
        stderr(&o).contains("--num-warmup-sessions 0: must be ≥ 1"),
        "{}",
        stderr(&o)
    );
}
