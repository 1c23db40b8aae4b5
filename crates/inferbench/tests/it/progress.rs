//! `--ui simple`: a line every `--stats-interval` (default 30 s, as AIPerf) with the counts
//! and the live TTFT, ITL and lag percentiles.

use crate::common;

use common::{run, stderr, tmpdir};

#[test]
fn simple_ui_lines_carry_live_percentiles() {
    let d = tmpdir("progress-simple");
    // 60 requests two at a time, each 20 ms + 7 × 5 ms: about 1.7 s, so at least one line.
    let o = run(&[
        "profile",
        "--streaming",
        "--request-count",
        "60",
        "--concurrency",
        "2",
        "--isl",
        "16",
        "--osl",
        "8",
        "--ui",
        "simple",
        "--stats-interval",
        "1",
        "--sim-ttft-ms",
        "20",
        "--sim-itl-ms",
        "5",
        "--artifact-dir",
        d.to_str().unwrap(),
    ]);
    let err = stderr(&o);
    assert!(o.status.success(), "{err}");
    let line = err
        .lines()
        .find(|l| l.contains("requests done"))
        .unwrap_or_else(|| panic!("no progress line in {err}"));
    assert!(line.starts_with("inferbench: profiling: "), "{line}");
    assert!(
        line.contains("/60 requests done, 0 errors · TTFT p50 "),
        "{line}"
    );
    // A second in, requests have finished: the TTFT p50 is a number near the server's 20 ms
    // (bucket midpoints are within about 6 %; the client adds a little).
    let p50: f64 = line
        .split("TTFT p50 ")
        .nth(1)
        .and_then(|r| r.split(' ').next())
        .and_then(|v| v.parse().ok())
        .unwrap_or_else(|| panic!("{line}"));
    assert!((18.0..40.0).contains(&p50), "{line}");
    assert!(line.contains(" ms · lag p99 "), "{line}");
}

#[test]
fn the_simple_ui_waits_its_default_30_seconds_between_lines() {
    let d = tmpdir("progress-simple-default");
    let o = run(&[
        "profile",
        "--request-count",
        "20",
        "--ui",
        "simple",
        "--artifact-dir",
        d.to_str().unwrap(),
    ]);
    let err = stderr(&o);
    assert!(o.status.success(), "{err}");
    assert!(!err.contains("requests done"), "{err}");
}
