//! The results-ready marker is the last file a run writes: the "By endpoint" breakdown is part
//! of the console file before the marker, never a rewrite after it.

use std::time::SystemTime;

use crate::common::{MockServer, read_json, run, stderr, tmpdir};

fn mtime(p: &std::path::Path) -> SystemTime {
    std::fs::metadata(p)
        .and_then(|m| m.modified())
        .unwrap_or_else(|e| panic!("{}: {e}", p.display()))
}

#[test]
fn the_breakdown_is_in_the_console_before_the_marker_and_the_marker_is_last() {
    let a = MockServer::start(&[]);
    let b = MockServer::start(&[]);
    let dir = tmpdir("console-order");
    let o = run(&[
        "profile",
        "-u",
        &a.url,
        "-u",
        &b.url,
        "-m",
        "mock-model",
        "--endpoint-type",
        "chat",
        "--streaming",
        "--request-count",
        "4",
        "--concurrency",
        "1",
        "--isl",
        "8",
        "--osl",
        "4",
        "--random-seed",
        "3",
        "--ui",
        "none",
        "--artifact-dir",
        dir.to_str().unwrap(),
    ]);
    assert!(o.status.success(), "{}", stderr(&o));
    let console = std::fs::read_to_string(dir.join("profile_export_console.txt")).unwrap();
    assert!(console.contains("By endpoint"), "{console}");
    // The breakdown follows AIPerf's tables, once.
    assert_eq!(console.matches("By endpoint").count(), 1, "{console}");

    let marker = dir.join(".aiperf_results_ready.json");
    let last = mtime(&marker);
    let manifest = read_json(&dir.join("inferbench_manifest.json"));
    let listed: Vec<&str> = manifest["files"]
        .as_array()
        .expect("files")
        .iter()
        .map(|f| f.as_str().unwrap())
        .collect();
    for f in ["profile_export_console.txt", "inferbench_breakdown.json"] {
        assert!(
            listed.contains(&f),
            "{f} not in the manifest's files: {listed:?}"
        );
    }
    // The marker is listed last, and no file in the directory changed after it.
    assert_eq!(
        listed.last(),
        Some(&".aiperf_results_ready.json"),
        "{listed:?}"
    );
    for e in std::fs::read_dir(&dir).unwrap() {
        let p = e.unwrap().path();
        assert!(
            mtime(&p) <= last,
            "{} was written after the marker",
            p.display()
        );
    }
}
