//! `inferbench plot`: every chart file written, an SVG that draws the run's requests, and
//! two runs overlaid with the Pareto chart.

use crate::common;

use common::{copy_tree, run, stderr, tmpdir};

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

const CHARTS: [&str; 8] = [
    "ttft_over_time",
    "itl_over_time",
    "latency_over_time",
    "latency_cdf",
    "itl_cdf",
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
    assert!(!a.join("plots/latency_vs_load.svg").exists());
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
    // Two runs: latency p50, p99 and TTFT p99 each a line through the two runs.
    let l = std::fs::read_to_string(out.join("latency_vs_load.svg")).unwrap();
    assert_eq!(l.matches("<polyline").count(), 3, "{l}");
}

#[test]
fn a_directory_without_records_is_one_line_error() {
    let d = tmpdir("plot-none");
    let o = run(&["plot", d.to_str().unwrap()]);
    assert_eq!(o.status.code(), Some(2), "{}", stderr(&o));
    assert_eq!(stderr(&o).trim().lines().count(), 1, "{}", stderr(&o));
}

/// (width, height) from a PNG's IHDR, after checking the signature and that IHDR is first.
fn png_size(b: &[u8]) -> (u32, u32) {
    assert_eq!(&b[..8], b"\x89PNG\r\n\x1a\n");
    assert_eq!(&b[12..16], b"IHDR");
    let be = |i: usize| u32::from_be_bytes(b[i..i + 4].try_into().unwrap());
    (be(16), be(20))
}

#[test]
fn png_format_writes_only_pngs_at_aiperf_size() {
    let a = tmpdir("plot-png");
    profile(&a, "2");
    let o = run(&["plot", a.to_str().unwrap(), "--format", "png"]);
    assert!(o.status.success(), "{}", stderr(&o));
    for c in CHARTS {
        let b = std::fs::read(a.join("plots").join(format!("{c}.png"))).unwrap();
        assert_eq!(png_size(&b), (1440, 800), "{c}");
        // Not one flat colour: a blank 1440×800 RGB image deflates to about 3.4 KB (deflate's
        // ratio tops out near 1000:1).
        assert!(b.len() > 8_000, "{c}: {} bytes", b.len());
        assert!(!a.join("plots").join(format!("{c}.svg")).exists(), "{c}");
    }
    let o = run(&["plot", a.to_str().unwrap(), "--format", "jpeg"]);
    assert_eq!(o.status.code(), Some(2), "{}", stderr(&o));
}

#[test]
fn the_default_writes_both_formats() {
    let a = tmpdir("plot-both");
    profile(&a, "1");
    let o = run(&["plot", a.to_str().unwrap()]);
    assert!(o.status.success(), "{}", stderr(&o));
    assert!(a.join("plots/latency_cdf.svg").exists());
    let b = std::fs::read(a.join("plots/latency_cdf.png")).unwrap();
    assert_eq!(png_size(&b), (1440, 800));
}

#[test]
fn a_run_with_scrapes_gets_its_server_metric_and_gpu_charts() {
    let d = tmpdir("plot-server");
    let o = run(&[
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
        "--ui",
        "none",
        "--sim-ttft-ms",
        "5",
        "--sim-itl-ms",
        "2",
        "--server-metrics-interval",
        "0.02",
        "--gpu-telemetry-interval",
        "0.02",
        "--artifact-dir",
        d.to_str().unwrap(),
    ]);
    assert!(o.status.success(), "{}", stderr(&o));
    assert!(d.join("inferbench_scrapes.jsonl").is_file());
    let out = tmpdir("plot-server-out");
    let o = run(&[
        "plot",
        d.to_str().unwrap(),
        "--out-dir",
        out.to_str().unwrap(),
        "--format",
        "svg",
    ]);
    assert!(o.status.success(), "{}", stderr(&o));
    let server: Vec<String> = std::fs::read_dir(&out)
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .filter(|n| n.starts_with("server_") && n.ends_with(".svg"))
        .collect();
    // The simulated server's running-requests gauge moves with the load.
    assert!(
        !server.is_empty(),
        "no server chart among {:?}",
        std::fs::read_dir(&out).unwrap().count()
    );
    // The simulated DCGM page's GPU utilization and power follow the running requests.
    let gpu: Vec<String> = std::fs::read_dir(&out)
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .filter(|n| n.starts_with("gpu_") && n.ends_with(".svg"))
        .collect();
    assert!(
        gpu.iter().any(|n| n == "gpu_DCGM_FI_DEV_POWER_USAGE.svg"),
        "{gpu:?}"
    );
    for n in server.iter().chain(&gpu) {
        let s = std::fs::read_to_string(out.join(n)).unwrap();
        assert!(s.starts_with("<svg ") && s.contains("<polyline"), "{n}");
    }
    // The ITL CDF draws both populations: per-request ITL and pooled chunk gaps.
    let itl = std::fs::read_to_string(out.join("itl_cdf.svg")).unwrap();
    assert!(itl.contains("ITL per request") && itl.contains("chunk gaps pooled"));
}

/// An AIPerf plot configuration (its `plot_config.yaml` shape): a per-request scatter and a
/// Pareto chart across runs.
const PLOT_CONFIG: &str = "visualization:
  multi_run_defaults: [pareto_throughput_vs_latency]
  multi_run_plots:
    pareto_throughput_vs_latency:
      type: pareto
      x: {metric: request_latency, stat: avg}
      y: {metric: output_token_throughput, stat: avg}
      groups: [model]
      title: \"Pareto: Output Token Throughput vs Latency\"
  single_run_defaults: [ttft_over_time, timeslices_ttft]
  single_run_plots:
    ttft_over_time:
      type: scatter
      x: request_number
      y: time_to_first_token
      title: \"TTFT Per Request\"
    timeslices_ttft:
      type: timeslice
      x: Timeslice
      y: Time to First Token
      stat: avg
      source: timeslices
";

#[test]
fn plot_config_draws_aiperfs_specifications_over_the_runs_given() {
    let a = tmpdir("plot-spec-a");
    let b = tmpdir("plot-spec-b");
    profile(&a, "1");
    profile(&b, "3");
    let cfg = tmpdir("plot-spec-cfg");
    std::fs::create_dir_all(&cfg).unwrap();
    let file = cfg.join("plot_config.yaml");
    std::fs::write(&file, PLOT_CONFIG).unwrap();
    let out = cfg.join("out");
    let o = run(&[
        "plot",
        "--config",
        file.to_str().unwrap(),
        "--out-dir",
        out.to_str().unwrap(),
        "--format",
        "svg",
        a.to_str().unwrap(),
        b.to_str().unwrap(),
    ]);
    assert!(o.status.success(), "{}", stderr(&o));
    let e = stderr(&o);
    // Each run's scatter: its 12 requests as 12 dots; SVG only (--format svg).
    for d in [&a, &b] {
        let s = std::fs::read_to_string(d.join("plots/ttft_over_time.svg")).unwrap();
        assert!(s.contains("TTFT Per Request"), "{s}");
        assert_eq!(s.matches("<circle").count(), 12);
        assert!(!d.join("plots/ttft_over_time.png").exists());
    }
    // No --slice-duration in these runs: the timeslice chart is skipped, and said so.
    assert!(
        e.contains("plot timeslices_ttft: skipped for") && e.contains("give --slice-duration"),
        "{e}"
    );
    // Both runs on the Pareto chart, in the output directory.
    let p = std::fs::read_to_string(out.join("pareto_throughput_vs_latency.svg")).unwrap();
    assert!(
        p.contains("Pareto: Output Token Throughput vs Latency"),
        "{p}"
    );
    // A run without its per-record file (as `--export-level summary` leaves it): the note
    // names the missing file instead of saying the metric has no values.
    let c = tmpdir("plot-spec-c");
    std::fs::create_dir_all(&c).unwrap();
    copy_tree(&a, &c);
    std::fs::remove_file(c.join("profile_export.jsonl")).unwrap();
    let o = run(&["plot", "-c", file.to_str().unwrap(), c.to_str().unwrap()]);
    assert!(o.status.success(), "{}", stderr(&o));
    assert!(
        stderr(&o).contains("plot ttft_over_time: skipped for")
            && stderr(&o).contains("(no profile_export.jsonl: --export-level summary writes none)"),
        "{}",
        stderr(&o)
    );
    // One run alone: the multi-run chart is not drawn, and the note says why.
    let o = run(&["plot", "-c", file.to_str().unwrap(), a.to_str().unwrap()]);
    assert!(o.status.success(), "{}", stderr(&o));
    assert!(
        stderr(&o).contains(
            "the multi-run charts (pareto_throughput_vs_latency) need two runs or more: 1 given"
        ),
        "{}",
        stderr(&o)
    );
    // A bad configuration is one line naming the file.
    std::fs::write(
        &file,
        PLOT_CONFIG.replace("type: scatter", "type: histogram"),
    )
    .unwrap();
    let o = run(&["plot", "-c", file.to_str().unwrap(), a.to_str().unwrap()]);
    assert_eq!(o.status.code(), Some(2), "{}", stderr(&o));
    assert!(stderr(&o).contains("--config: "), "{}", stderr(&o));
    assert!(stderr(&o).contains("plot_config.yaml"), "{}", stderr(&o));
}
