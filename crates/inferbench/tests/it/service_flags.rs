//! AIPerf's service, output and control-hook flags: `--server-profiler` (and its paths and
//! timeout), `--show-trace-timing`, `--log-level`/`-v`/`-vv`, `--stats-interval`,
//! `--auto-plot`/`--plot-required`, `--transport`, `--request-content-type`, the ZMQ notes,
//! and the flags refused by name.

use std::io::{Read, Write};
use std::net::TcpStream;
use std::time::Duration;

use crate::common::{MockServer, read_json, run, stderr, tmpdir};

/// `GET path` on its own connection; the body.
fn get(url: &str, path: &str) -> String {
    let addr = url.strip_prefix("http://").unwrap();
    let mut s = TcpStream::connect(addr).unwrap();
    s.set_read_timeout(Some(Duration::from_secs(30))).unwrap();
    write!(
        s,
        "GET {path} HTTP/1.1\r\nHost: t\r\nConnection: close\r\n\r\n"
    )
    .unwrap();
    let mut raw = String::new();
    s.read_to_string(&mut raw).unwrap();
    raw.split_once("\r\n\r\n").unwrap().1.to_string()
}

fn base(dir: &str) -> Vec<&str> {
    vec![
        "profile",
        "--request-count",
        "3",
        "--isl",
        "8",
        "--osl",
        "4",
        "--random-seed",
        "5",
        "--ui",
        "none",
        "--artifact-dir",
        dir,
    ]
}

#[test]
fn the_server_profiler_brackets_the_profiling_phase_only() {
    let server = MockServer::start(&[]);
    let dir = tmpdir("server-profiler");
    let mut a = base(dir.to_str().unwrap());
    a.extend([
        "-u",
        &server.url,
        "-m",
        "mock-model",
        "--warmup-request-count",
        "2",
        "--server-profiler",
    ]);
    let o = run(&a);
    assert!(o.status.success(), "{}", stderr(&o));
    let stats: serde_json::Value = serde_json::from_str(&get(&server.url, "/sim/stats")).unwrap();
    assert_eq!(stats["profiler_starts"], 1, "{stats}");
    assert_eq!(stats["profiler_stops"], 1, "{stats}");
    // Started after the 2 warmup requests, stopped after the 3 profiling ones.
    assert_eq!(stats["requests_at_profiler_start"], 2, "{stats}");
    assert_eq!(stats["requests_at_profiler_stop"], 5, "{stats}");
    let m = read_json(&dir.join("inferbench_manifest.json"));
    let r = &m["server"]["server_profiler"];
    assert_eq!(r["started"], true, "{r}");
    assert_eq!(r["stopped"], true, "{r}");
    assert_eq!(
        r["requests"][0],
        format!("POST {}/start_profile: 200", server.url).as_str()
    );
    assert_eq!(
        r["requests"][1],
        format!("POST {}/stop_profile: 200", server.url).as_str()
    );
    assert_eq!(m["plan"]["controls"]["server_profiler"]["timeout_s"], 30.0);
    // The checked-in schema knows both parts (it refused them: the plan's and the server's
    // `server_profiler` were additional properties).
    crate::common::assert_manifest_schema(&m);
}

#[test]
fn a_profiler_that_does_not_start_fails_the_run_before_profiling() {
    let server = MockServer::start(&[]);
    let dir = tmpdir("server-profiler-404");
    let mut a = base(dir.to_str().unwrap());
    a.extend([
        "-u",
        &server.url,
        "-m",
        "mock-model",
        "--server-profiler-start-path",
        "/no_such_route",
        "--server-profiler-timeout-seconds",
        "5",
    ]);
    let o = run(&a);
    let err = stderr(&o);
    assert_eq!(o.status.code(), Some(1), "{err}");
    let line = err
        .lines()
        .find(|l| l.starts_with("inferbench: error:"))
        .unwrap();
    assert!(
        line.contains("--server-profiler")
            && line.contains("/no_such_route")
            && line.contains("404"),
        "{line}"
    );
    let stats: serde_json::Value = serde_json::from_str(&get(&server.url, "/sim/stats")).unwrap();
    assert_eq!(stats["requests"], 0, "{stats}");
    assert_eq!(stats["profiler_stops"], 0, "{stats}");
}

#[test]
fn a_profiler_that_does_not_stop_is_a_warning() {
    let dir = tmpdir("server-profiler-stop");
    let mut a = base(dir.to_str().unwrap());
    a.extend(["--server-profiler-stop-path", "/no_stop"]);
    let o = run(&a);
    let err = stderr(&o);
    assert!(o.status.success(), "{err}");
    assert!(
        err.lines().any(|l| l
            .starts_with("inferbench: warning: --server-profiler: the profiler did not stop")
            && l.contains("/no_stop")),
        "{err}"
    );
    let m = read_json(&dir.join("inferbench_manifest.json"));
    assert_eq!(m["server"]["server_profiler"]["stopped"], false);
}

#[test]
fn show_trace_timing_prints_the_http_table() {
    let dir = tmpdir("trace-timing");
    let mut a = base(dir.to_str().unwrap());
    a.push("--show-trace-timing");
    let o = run(&a);
    assert!(o.status.success(), "{}", stderr(&o));
    let out = String::from_utf8_lossy(&o.stdout);
    let at = out
        .find("inferbench | HTTP Trace Timing")
        .expect("the table");
    let table = &out[at..];
    for row in [
        "HTTP Blocked (ms)",
        "HTTP Waiting (TTFB) (ms)",
        "HTTP Receiving (ms)",
    ] {
        assert!(table.contains(row), "{table}");
    }
    // Not without the flag.
    let dir = tmpdir("trace-timing-off");
    let o = run(&base(dir.to_str().unwrap()));
    assert!(!String::from_utf8_lossy(&o.stdout).contains("HTTP Trace Timing"));
}

#[test]
fn log_level_filters_the_lines_and_a_bad_one_names_the_levels() {
    let dir = tmpdir("log-level");
    let mut a = base(dir.to_str().unwrap());
    a.extend(["--log-level", "error", "--zmq-host", "10.0.0.1"]);
    let o = run(&a);
    let err = stderr(&o);
    assert!(o.status.success(), "{err}");
    assert!(!err.contains("artifacts in"), "{err}");
    assert!(!err.contains("note:"), "{err}");
    // INFO (the default) prints them, and the ZMQ flag's note.
    let mut a = base(dir.to_str().unwrap());
    a.extend(["--zmq-host", "10.0.0.1"]);
    let err = stderr(&run(&a));
    assert!(err.contains("artifacts in"), "{err}");
    assert!(
        err.contains("inferbench: note: --zmq-host 10.0.0.1: no effect"),
        "{err}"
    );
    let o = run(&["profile", "--log-level", "loud"]);
    let err = stderr(&o);
    assert_eq!(o.status.code(), Some(2), "{err}");
    assert_eq!(
        err.trim(),
        "inferbench: error: --log-level loud: one of TRACE, DEBUG, INFO, NOTICE, SUCCESS, WARNING, ERROR, CRITICAL"
    );
}

#[test]
fn verbose_switches_the_dashboard_to_the_simple_ui() {
    let dir = tmpdir("verbose");
    let d = dir.to_str().unwrap();
    for flag in ["-v", "-vv", "--verbose", "--extra-verbose"] {
        let o = run(&["profile", "--request-count", "2", "--artifact-dir", d, flag]);
        assert!(o.status.success(), "{flag}: {}", stderr(&o));
        let m = read_json(&dir.join("inferbench_manifest.json"));
        assert_eq!(m["plan"]["ui"], "simple", "{flag}");
    }
}

#[test]
fn auto_plot_draws_the_charts_into_the_run_directory() {
    let dir = tmpdir("auto-plot");
    let mut a = base(dir.to_str().unwrap());
    a.extend(["--auto-plot", "--plot-required"]);
    let o = run(&a);
    assert!(o.status.success(), "{}", stderr(&o));
    let plots: Vec<_> = std::fs::read_dir(dir.join("plots"))
        .expect("a plots directory")
        .filter_map(Result::ok)
        .collect();
    assert!(!plots.is_empty());
    // --no-auto-plot wins over --auto-plot given before it.
    let dir = tmpdir("no-auto-plot");
    let mut a = base(dir.to_str().unwrap());
    a.extend(["--auto-plot", "--no-auto-plot"]);
    let o = run(&a);
    assert!(o.status.success(), "{}", stderr(&o));
    assert!(!dir.join("plots").exists());
}

#[test]
fn transports_and_content_types_other_than_http_json_are_refused_by_name() {
    let dir = tmpdir("transport");
    let mut a = base(dir.to_str().unwrap());
    a.extend([
        "--transport-type",
        "auto",
        "--request-content-type",
        "application/json",
    ]);
    let o = run(&a);
    assert!(o.status.success(), "{}", stderr(&o));
    let mut a = base(dir.to_str().unwrap());
    a.extend(["--transport", "HTTP"]);
    assert!(run(&a).status.success());
    for (flag, value) in [
        ("--transport", "grpc"),
        ("--transport-type", "zmq"),
        ("--request-content-type", "multipart/form-data"),
    ] {
        let o = run(&["profile", flag, value]);
        let err = stderr(&o);
        assert_eq!(o.status.code(), Some(2), "{err}");
        assert_eq!(err.trim().lines().count(), 1, "{err}");
        assert!(err.contains("refused") && err.contains(value), "{err}");
    }
}

#[test]
fn refused_aiperf_flags_name_themselves_with_their_reason() {
    for (args, expect) in [
        (vec!["--otel-url", "http://x:4318"], "OpenTelemetry"),
        (vec!["--stream", "metrics"], "OpenTelemetry"),
        (vec!["--mlflow-tracking-uri", "http://x"], "MLflow"),
        (vec!["--wandb-project", "p"], "Weights & Biases"),
        (vec!["--hf-subset", "s"], "never downloads"),
        (vec!["--network-latency-mean", "2"], "network-latency"),
        (
            vec!["--trajectory-start-min-ratio", "0.2"],
            "agentic_replay",
        ),
        (vec!["--agentic-warmup-grace-period", "3"], "agentic_replay"),
        (vec!["--api-port", "9090"], "live API"),
        (vec!["--uuid-and-strip"], "multimodal-cache"),
    ] {
        let mut a = vec!["profile"];
        a.extend(args.iter().copied());
        let o = run(&a);
        let err = stderr(&o);
        assert_eq!(o.status.code(), Some(2), "{args:?}: {err}");
        assert_eq!(err.trim().lines().count(), 1, "{err}");
        assert!(
            err.starts_with(&format!("inferbench: error: {}: refused: ", args[0])),
            "{err}"
        );
        assert!(err.contains(expect), "{args:?}: {err}");
    }
}

#[test]
fn inspect_says_the_run_flags_have_no_effect_there() {
    let o = run(&["inspect", "--server-profiler", "--auto-plot"]);
    let err = stderr(&o);
    assert!(o.status.success(), "{err}");
    assert!(
        err.contains("inferbench: note: --server-profiler: no effect with inspect"),
        "{err}"
    );
    assert!(
        err.contains("inferbench: note: --auto-plot: no effect with inspect"),
        "{err}"
    );
}
