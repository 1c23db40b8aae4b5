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
            "--warmup-grace-period needs --warmup-request-count or --warmup-duration",
        ),
    ] {
        let mut a = vec!["profile"];
        a.extend(args);
        let o = run(&a);
        assert_eq!(o.status.code(), Some(2), "{args:?}: {}", stderr(&o));
        assert!(stderr(&o).contains(want), "{args:?}: {}", stderr(&o));
    }
}
