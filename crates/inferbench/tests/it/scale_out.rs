//! Issue 16 end to end, on loopback: shards of one frozen schedule in separate processes,
//! started together against the simulated server, with injected clock offsets measured
//! against `inferbench time-server`; then `merge`, `metrics` and `compare` on the result,
//! and a late shard refused.

use std::io::{BufRead, BufReader};
use std::path::{Path, PathBuf};
use std::process::{Child, Stdio};
use std::time::{Duration, SystemTime, UNIX_EPOCH};

use serde_json::Value;

use crate::common::{MockServer, bin, read_json, run, stderr, tmpdir, wait_bounded};

/// `inferbench time-server` on 127.0.0.1:0; killed on drop.
struct TimeServer {
    child: Child,
    addr: String,
}

impl TimeServer {
    fn start() -> TimeServer {
        let mut child = bin()
            .args(["time-server", "--listen", "127.0.0.1:0"])
            .stdout(Stdio::piped())
            .stderr(Stdio::null())
            .spawn()
            .expect("spawn time-server");
        let mut lines = BufReader::new(child.stdout.take().unwrap()).lines();
        let addr = lines.next().expect("its address").expect("utf-8");
        TimeServer { child, addr }
    }
}

impl Drop for TimeServer {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

const REQUESTS: usize = 30;

fn profile_args(url: &str, dir: &Path) -> Vec<String> {
    [
        "profile",
        "--url",
        url,
        "-m",
        "mock-model",
        "--endpoint-type",
        "chat",
        "--streaming",
        "--request-rate",
        "60",
        "--request-count",
        "30",
        "--random-seed",
        "11",
        "--isl",
        "16",
        "--osl",
        "4",
        "--ui",
        "none",
        "--artifact-dir",
        dir.to_str().unwrap(),
    ]
    .map(String::from)
    .to_vec()
}

/// The run directory: the artifact directory itself, or the one run under it.
fn run_dir(artifacts: &Path) -> PathBuf {
    if artifacts.join("inferbench_manifest.json").is_file() {
        return artifacts.to_path_buf();
    }
    std::fs::read_dir(artifacts)
        .unwrap()
        .filter_map(|e| e.ok().map(|e| e.path()))
        .find(|p| p.join("inferbench_manifest.json").is_file())
        .unwrap_or_else(|| panic!("no run under {}", artifacts.display()))
}

fn spawn(args: &[String]) -> Child {
    bin()
        .args(args)
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .spawn()
        .expect("spawn a shard")
}

fn now_s() -> f64 {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .unwrap()
        .as_secs_f64()
}

fn records(dir: &Path) -> Vec<Value> {
    crate::common::evidence_records(dir)
}

fn profiling_window(dir: &Path) -> (u64, u64) {
    let w = crate::common::evidence_lines(dir)
        .into_iter()
        .find(|l| l["line"] == "phase" && l["phase"] == "profiling")
        .expect("a profiling window");
    (
        w["start_ns"].as_u64().unwrap(),
        w["requests_end_ns"].as_u64().unwrap(),
    )
}

#[test]
fn shards_started_together_merge_into_the_unsharded_run() {
    let server = MockServer::start(&["--ttft-ms", "5", "--itl-ms", "2"]);
    let time = TimeServer::start();
    let root = tmpdir("scale-out");

    // The unsharded run of the same schedule.
    let single = root.join("single");
    let o = run(&profile_args(&server.url, &single)
        .iter()
        .map(String::as_str)
        .collect::<Vec<_>>());
    assert!(o.status.success(), "{}", stderr(&o));
    let single = run_dir(&single);

    // Three shards with clocks −3, +2 and +7 ms off, all told to start in 6 s.
    let offsets_ms = [-3.0, 2.0, 7.0];
    let t0 = format!("{:.3}", now_s() + 6.0);
    let mut children = Vec::new();
    for (i, off) in offsets_ms.iter().enumerate() {
        let mut a = profile_args(&server.url, &root.join(format!("shard{i}")));
        a.extend(
            [
                "--shard-count",
                "3",
                "--shard-index",
                &i.to_string(),
                "--start-at",
                &t0,
                "--time-reference",
                &time.addr,
                "--clock-samples",
                "16",
                "--test-clock-offset-ms",
                &off.to_string(),
            ]
            .map(String::from),
        );
        children.push(spawn(&a));
    }
    for c in &mut children {
        wait_bounded(c, Duration::from_secs(120));
    }
    for (i, c) in children.into_iter().enumerate() {
        let o = c.wait_with_output().unwrap();
        assert!(o.status.success(), "shard {i}: {}", stderr(&o));
    }
    let shards: Vec<PathBuf> = (0..3)
        .map(|i| run_dir(&root.join(format!("shard{i}"))))
        .collect();
    // Shares of 30 single-turn requests dealt round robin: 10 each.
    for (i, s) in shards.iter().enumerate() {
        let m = read_json(&s.join("inferbench_manifest.json"));
        assert_eq!(m["shard"]["index"], i);
        assert_eq!(m["shard"]["requests"], 10);
        assert_eq!(records(s).len(), 10);
    }

    let merged = root.join("merged");
    let mut a: Vec<&str> = vec!["merge"];
    a.extend(shards.iter().map(|s| s.to_str().unwrap()));
    a.extend(["--output-dir", merged.to_str().unwrap()]);
    let o = run(&a);
    assert!(o.status.success(), "{}", stderr(&o));
    let m = read_json(&merged.join("inferbench_manifest.json"));
    let me = &m["merge"];

    // Every scheduled request exactly once: the payloads of the single run, as a multiset.
    let mut got: Vec<u64> = records(&merged)
        .iter()
        .map(|r| r["payload_index"].as_u64().unwrap())
        .collect();
    let mut want: Vec<u64> = records(&single)
        .iter()
        .map(|r| r["payload_index"].as_u64().unwrap())
        .collect();
    got.sort();
    want.sort();
    assert_eq!(got.len(), REQUESTS);
    assert_eq!(got, want);

    // Each measured offset is the injected one (reversed: θ is reference − shard) within ε.
    let mut max_eps = 0i64;
    for (i, off) in offsets_ms.iter().enumerate() {
        let s = &me["shards"][i];
        let eps = s["epsilon_ns"]
            .as_i64()
            .expect("bounded: measured against a reference");
        let theta = s["offset_start_ns"].as_i64().unwrap();
        let injected = (-off * 1e6) as i64;
        assert!(
            (theta - injected).abs() <= eps,
            "shard {i}: θ {theta} vs {injected} ± {eps}"
        );
        let end = s["offset_end_ns"].as_i64().unwrap();
        assert!(
            (end - injected).abs() <= eps,
            "shard {i} at the end: θ {end}"
        );
        assert!(
            s["start_lag_ns"].as_i64().unwrap().abs() < 50_000_000,
            "{s}"
        );
        max_eps = max_eps.max(eps);
    }
    let bound = me["window_bound_ns"].as_i64().unwrap();
    assert!(bound <= 2 * max_eps);

    // The planned send times, from each run's phase start, match the single run's within
    // the clock bound plus the shards' start jitter (a few ms on a loaded machine).
    let slack = 2 * max_eps + 15_000_000;
    let planned = |dir: &Path| {
        let (start, _) = profiling_window(dir);
        let mut v: Vec<i64> = records(dir)
            .iter()
            .map(|r| r["planned_ns"].as_i64().unwrap() - start as i64)
            .collect();
        v.sort();
        v
    };
    for (g, w) in planned(&merged).iter().zip(planned(&single)) {
        assert!((g - w).abs() <= slack, "planned {g} vs {w} (± {slack})");
    }
    // The window: first send to last completion, within the bound plus the same jitter and
    // the spread of the last responses.
    let (ms, me_) = profiling_window(&merged);
    let (ss, se) = profiling_window(&single);
    let (wm, ws) = ((me_ - ms) as i64, (se - ss) as i64);
    assert_eq!(me["window_ns"].as_i64().unwrap(), wm);
    assert!((wm - ws).abs() <= slack + 50_000_000, "W {wm} vs {ws}");

    // An ordinary run directory: metrics reproduces it, compare reads both.
    let o = run(&["metrics", merged.to_str().unwrap()]);
    assert!(o.status.success(), "{}", stderr(&o));
    let o = run(&[
        "compare",
        single.to_str().unwrap(),
        merged.to_str().unwrap(),
    ]);
    assert!(
        matches!(o.status.code(), Some(0) | Some(1)),
        "compare: {}",
        stderr(&o)
    );

    // A set with a shard twice, or one missing, is refused.
    let a0 = shards[0].to_str().unwrap();
    let o = run(&[
        "merge",
        a0,
        a0,
        shards[2].to_str().unwrap(),
        "--output-dir",
        root.join("m2").to_str().unwrap(),
    ]);
    assert_eq!(o.status.code(), Some(2));
    assert!(stderr(&o).contains("shard 0 given twice"), "{}", stderr(&o));
    let o = run(&[
        "merge",
        a0,
        "--output-dir",
        root.join("m3").to_str().unwrap(),
    ]);
    assert!(
        stderr(&o).contains("shard 1 of 3 is missing"),
        "{}",
        stderr(&o)
    );

    // A shard started after T0 + tolerance exits 6 and its set cannot be merged.
    let mut a = profile_args(&server.url, &root.join("late"));
    a.extend(
        [
            "--shard-count",
            "3",
            "--shard-index",
            "2",
            "--start-at",
            &format!("{:.3}", now_s() - 1.0),
        ]
        .map(String::from),
    );
    let o = run(&a.iter().map(String::as_str).collect::<Vec<_>>());
    assert_eq!(o.status.code(), Some(6), "{}", stderr(&o));
    assert!(stderr(&o).contains("late"), "{}", stderr(&o));
    let late = run_dir(&root.join("late"));
    let o = run(&[
        "merge",
        a0,
        shards[1].to_str().unwrap(),
        late.to_str().unwrap(),
        "--output-dir",
        root.join("m4").to_str().unwrap(),
    ]);
    assert_eq!(o.status.code(), Some(2));
    assert!(stderr(&o).contains("started late"), "{}", stderr(&o));
    let _ = std::fs::remove_dir_all(&root);
}

#[test]
fn kube_render_prints_the_manifests() {
    let o = run(&[
        "kube",
        "render",
        "--shard-count",
        "2",
        "--image",
        "img:1",
        "--output",
        "json",
        "--",
        "profile",
        "--url",
        "http://s:8000",
        "-m",
        "m",
    ]);
    assert!(o.status.success(), "{}", stderr(&o));
    let v: Value = serde_json::from_slice(&o.stdout).unwrap();
    assert_eq!(v["kind"], "List");
    assert_eq!(v["items"][1]["kind"], "Job");
    assert_eq!(v["items"][1]["spec"]["completions"], 2);
    let o = run(&[
        "kube",
        "render",
        "--shard-count",
        "2",
        "--image",
        "i",
        "--",
        "profile",
        "--shard-index",
        "1",
    ]);
    assert_eq!(o.status.code(), Some(2));
    assert!(
        stderr(&o).contains("--shard-index is set per pod"),
        "{}",
        stderr(&o)
    );
}
