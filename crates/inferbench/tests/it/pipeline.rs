//! One pipeline: a live run's files and `metrics DIR --write` on a copy of its directory are
//! identical, every file, byte for byte (manifest and client resources included).

use crate::common;

use std::collections::BTreeMap;
use std::path::Path;

use common::{run, stderr, tmpdir};

fn files(dir: &Path) -> BTreeMap<String, Vec<u8>> {
    let mut out = BTreeMap::new();
    collect(dir, "", &mut out);
    out
}

/// Every file under `dir`, by its path relative to the run directory (`phases/warmup/…`).
fn collect(dir: &Path, rel: &str, out: &mut BTreeMap<String, Vec<u8>>) {
    for e in std::fs::read_dir(dir).unwrap() {
        let p = e.unwrap().path();
        let name = format!("{rel}{}", p.file_name().unwrap().to_string_lossy());
        if p.is_dir() {
            collect(&p, &format!("{name}/"), out);
        } else {
            out.insert(name, std::fs::read(&p).unwrap());
        }
    }
}

fn live_then_rewrite(name: &str, extra: &[&str]) {
    let dir = tmpdir(name);
    let d = dir.to_str().unwrap();
    let mut args = vec![
        "profile",
        "--streaming",
        "--request-count",
        "12",
        "--concurrency",
        "3",
        "--isl",
        "24",
        "--osl",
        "6",
        "--random-seed",
        "5",
        "--ui",
        "none",
        "--sim-ttft-ms",
        "1",
        "--sim-itl-ms",
        "0",
        "--artifact-dir",
        d,
    ];
    args.extend_from_slice(extra);
    let o = run(&args);
    assert!(o.status.success(), "{}", stderr(&o));
    let live = files(&dir);
    for must in [
        "inferbench_manifest.json",
        "inferbench_client_resources.json",
        "inferbench_evidence.jsonl",
        ".aiperf_results_ready.json",
    ] {
        assert!(live.contains_key(must), "{must} missing: {:?}", live.keys());
    }
    let copy = tmpdir(&format!("{name}-copy"));
    for (f, bytes) in &live {
        let p = copy.join(f);
        std::fs::create_dir_all(p.parent().unwrap()).unwrap();
        std::fs::write(p, bytes).unwrap();
    }
    let o = run(&["metrics", copy.to_str().unwrap(), "--write"]);
    assert!(o.status.success(), "{}", stderr(&o));
    let rewritten = files(&copy);
    assert_eq!(
        live.keys().collect::<Vec<_>>(),
        rewritten.keys().collect::<Vec<_>>(),
        "the same files"
    );
    for (f, bytes) in &live {
        assert!(
            rewritten[f] == *bytes,
            "{f} differs between the live run and its offline rewrite"
        );
    }
    // The manifest lists every file the directory holds (the manifest and marker included).
    let m: serde_json::Value = serde_json::from_slice(&live["inferbench_manifest.json"]).unwrap();
    let mut listed: Vec<String> = m["files"]
        .as_array()
        .unwrap()
        .iter()
        .map(|v| v.as_str().unwrap().to_string())
        .collect();
    listed.sort();
    assert_eq!(listed, live.keys().cloned().collect::<Vec<_>>());
}

#[test]
fn records_level_with_warmup_rewrites_identically() {
    live_then_rewrite("pipe-records", &["--warmup-request-count", "4"]);
}

#[test]
fn raw_level_with_goodput_rewrites_identically() {
    live_then_rewrite(
        "pipe-raw",
        &[
            "--export-level",
            "raw",
            "--goodput",
            "time_to_first_token:1000",
            "-H",
            "X-Team: perf",
        ],
    );
}
