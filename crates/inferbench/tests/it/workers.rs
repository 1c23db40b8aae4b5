//! `--workers-max N`: the client runs on N worker threads, and the client-resources file
//! names them with their run-queue numbers, next to the cgroup, socket and queue evidence.

use crate::common;

use common::{read_json, run, stderr, tmpdir};
use serde_json::Value;

fn profile(name: &str, extra: &[&str]) -> Value {
    let dir = tmpdir(name);
    let d = dir.to_str().unwrap();
    let mut args = vec![
        "profile",
        "--streaming",
        "--request-count",
        "40",
        "--concurrency",
        "4",
        "--isl",
        "16",
        "--osl",
        "8",
        "--random-seed",
        "3",
        "--ui",
        "none",
        "--sim-ttft-ms",
        "5",
        "--sim-itl-ms",
        "2",
        "--artifact-dir",
        d,
    ];
    args.extend_from_slice(extra);
    let o = run(&args);
    assert!(o.status.success(), "{}", stderr(&o));
    let records = common::evidence_records(&dir);
    assert_eq!(records.len(), 40, "every request has its record");
    read_json(&dir.join("inferbench_client_resources.json"))
}

#[test]
fn workers_max_two_runs_on_two_named_worker_threads() {
    let r = profile("workers-2", &["--workers-max", "2"]);
    let samples = r["samples"].as_array().unwrap();
    assert!(samples.len() >= 2, "{samples:?}");
    let last = samples.last().unwrap();
    let workers = last["workers"].as_array().unwrap();
    let mut names: Vec<&str> = workers
        .iter()
        .map(|w| w["name"].as_str().unwrap())
        .collect();
    names.sort();
    assert_eq!(names, ["client-worker-0", "client-worker-1"], "{workers:?}");
    assert_ne!(workers[0]["tid"], workers[1]["tid"]);
    for w in workers {
        let sched = &w["sched"];
        assert!(sched["run_ns"].as_u64().is_some(), "{w}");
        assert!(sched["wait_ns"].as_u64().is_some(), "{w}");
        assert!(sched["timeslices"].as_u64().is_some(), "{w}");
    }
    // Between them the two threads ran the client.
    let ran: u64 = workers
        .iter()
        .map(|w| w["sched"]["run_ns"].as_u64().unwrap())
        .sum();
    assert!(ran > 0);
    let summary = &r["summary"];
    assert_eq!(summary["workers"].as_array().unwrap().len(), 2);
    assert!(summary["worker_wait_fraction_max"].as_f64().is_some());
    // The engine's connections (4 slots) were seen by the sampler, and every due request
    // was written: nothing is left in the planned-not-sent queue at the end. (The writer
    // may still be behind when the last sample is taken.)
    assert!(summary["sockets"]["connections_seen"].as_u64().unwrap() >= 4);
    let q = &last["queues"];
    assert_eq!(q["planned_not_sent"], 0, "{q}");
    assert_eq!(q["records_sent"], 40, "{q}");
    assert!(q["records_written"].as_u64().unwrap() <= 40, "{q}");
}

#[test]
fn one_worker_by_default_is_the_thread_that_drives_the_runtime() {
    let r = profile("workers-1", &[]);
    let last = r["samples"].as_array().unwrap().last().unwrap().clone();
    let workers = last["workers"].as_array().unwrap();
    assert_eq!(workers.len(), 1, "{workers:?}");
    assert_eq!(workers[0]["name"], "client-worker-0");
    assert!(workers[0]["sched"]["run_ns"].as_u64().unwrap() > 0);
}
