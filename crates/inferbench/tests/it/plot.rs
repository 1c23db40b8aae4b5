//! `inferbench plot`: every chart file written, an SVG that draws the run's requests, and
//! two runs overlaid with the Pareto chart.

use crate::common;

use common::{run, stderr, tmpdir};

fn profile(dir: &std::path::Path, concurrency: &str) {
    let o = run(&[
        "profile",
        "--streaming",
        "--request-count",
        "12",
        "--concurrency",
        concurrency,
        "--isl",
        "16",
        "--osl",
        "5",
        "--ui",
        "none",
        "--sim-ttft-ms",
        "1",
        "--sim-itl-ms",
        "1",
        "--artifact-dir",
        dir.to_str().unwrap(),
    ]);
    assert!(o.status.success(), "{}", stderr(&o));
}

const CHARTS: [&str; 7] = [
    "ttft_over_time",
    "itl_over_time",
    "latency_over_time",
    "latency_cdf",
    "throughput_over_time",
    "concurrency_over_time",
    "schedule_lag_over_time",
];

#[test]
fn one_run_gives_every_chart_and_two_runs_a_pareto_chart() {
    let a = tmpdir("plot-a");
    let b = tmpdir("plot-b");
    profile(&a, "1");
    profile(&b, "3");
    let o = run(&["plot", a.to_str().unwrap()]);
    assert!(o.status.success(), "{}", stderr(&o));
    for c in CHARTS {
        let s = std::fs::read_to_string(a.join("plots").join(format!("{c}.svg"))).unwrap();
        assert!(s.starts_with("<svg ") && s.ends_with("</svg>"), "{c}");
    }
    // 12 requests: 12 TTFT dots on the TTFT chart (the per-request series).
    let ttft = std::fs::read_to_string(a.join("plots/ttft_over_time.svg")).unwrap();
    assert_eq!(ttft.matches("<circle").count(), 12);
    assert!(!a.join("plots/pareto.svg").exists());
    let out = tmpdir("plot-ab");
    let o = run(&[
        "plot",
        a.to_str().unwrap(),
        b.to_str().unwrap(),
        "--out-dir",
        out.to_str().unwrap(),
    ]);
    assert!(o.status.success(), "{}", stderr(&o));
    let ttft = std::fs::read_to_string(out.join("ttft_over_time.svg")).unwrap();
    assert_eq!(ttft.matches("<circle").count(), 24);
    let p = std::fs::read_to_string(out.join("pareto.svg")).unwrap();
    assert_eq!(p.matches("<circle").count(), 2);
}

#[test]
fn a_directory_without_records_is_one_line_error() {
    let d = tmpdir("plot-none");
    let o = run(&["plot", d.to_str().unwrap()]);
    assert_eq!(o.status.code(), Some(2), "{}", stderr(&o));
    assert_eq!(stderr(&o).trim().lines().count(), 1, "{}", stderr(&o));
}
