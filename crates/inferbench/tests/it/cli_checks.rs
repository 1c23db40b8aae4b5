//! The command line through the binary: valid-looking but out-of-range values are one error
//! line naming the flag (exit 2, never a panic), a flag without the flag that gives it an
//! effect is an error or a warning, and the demo run (no --url) streams.

use crate::common;

use std::process::{Output, Stdio};

use common::*;

/// Exit 2, exactly one line on stderr, naming `flag` and containing `what`, no panic.
fn assert_input_error(o: &Output, flag: &str, what: &str) {
    let err = stderr(o);
    assert_eq!(o.status.code(), Some(2), "{flag}: {err}");
    assert!(!err.contains("panicked"), "{flag}: {err}");
    assert_eq!(err.lines().count(), 1, "{flag}: one line expected: {err}");
    assert!(err.starts_with("inferbench: error: "), "{flag}: {err}");
    assert!(err.contains(flag), "{flag}: {err}");
    assert!(err.contains(what), "{flag}: {what:?} expected: {err}");
}

fn profile_args<'a>(extra: &[&'a str]) -> Vec<&'a str> {
    let mut args = vec!["profile", "--ui", "none"];
    args.extend_from_slice(extra);
    args
}

#[test]
fn huge_time_values_are_errors_naming_the_flag() {
    let cases: &[(&str, &[&str])] = &[
        ("--benchmark-duration", &["--benchmark-duration", "1e300"]),
        (
            "--request-timeout-seconds",
            &["--request-timeout-seconds", "1e300"],
        ),
        ("--warmup-duration", &["--warmup-duration", "1e300"]),
        (
            "--request-rate-ramp-duration",
            &[
                "--request-rate",
                "5",
                "--request-rate-ramp-duration",
                "1e300",
            ],
        ),
        (
            "--concurrency-ramp-duration",
            &["--concurrency-ramp-duration", "1e300"],
        ),
        (
            "--warmup-concurrency-ramp-duration",
            &[
                "--warmup-request-count",
                "2",
                "--warmup-concurrency-ramp-duration",
                "1e300",
            ],
        ),
        (
            "--warmup-request-rate-ramp-duration",
            &[
                "--warmup-request-count",
                "2",
                "--request-rate",
                "5",
                "--warmup-request-rate-ramp-duration",
                "1e300",
            ],
        ),
        (
            "--request-cancellation-delay",
            &[
                "--request-cancellation-rate",
                "10",
                "--request-cancellation-delay",
                "1e300",
            ],
        ),
        (
            "--benchmark-grace-period",
            &[
                "--benchmark-duration",
                "1",
                "--benchmark-grace-period",
                "1e300",
            ],
        ),
        (
            "--profile-run-cooldown-seconds",
            &["--profile-run-cooldown-seconds", "1e300"],
        ),
        (
            "--parameter-sweep-cooldown-seconds",
            &["--parameter-sweep-cooldown-seconds", "1e300"],
        ),
        ("--sim-ttft-ms", &["--sim-ttft-ms", "1e300"]),
        ("--sim-itl-ms", &["--sim-itl-ms", "1e300"]),
        (
            "--conversation-turn-delay-mean",
            &["--conversation-turn-delay-mean", "1e300"],
        ),
        (
            "--fixed-schedule-start-offset",
            &["--fixed-schedule-start-offset", "18446744073709551615"],
        ),
    ];
    for (flag, extra) in cases {
        let o = run(&profile_args(extra));
        assert_input_error(&o, flag, "too large");
    }
    for flag in ["--ttft-ms", "--itl-ms"] {
        let o = run(&["mock-server", "--port", "0", flag, "1e300"]);
        assert_input_error(&o, flag, "too large");
    }
}

#[test]
fn a_rate_too_low_for_the_clock_is_an_error() {
    let o = run(&profile_args(&[
        "--request-rate",
        "1e-300",
        "--arrival-pattern",
        "constant",
    ]));
    assert_input_error(&o, "--request-rate", "too low");
    let o = run(&profile_args(&[
        "--user-centric-rate",
        "1e-300",
        "--num-users",
        "2",
    ]));
    assert_input_error(&o, "--user-centric-rate", "too low");
}

#[cfg(unix)]
#[test]
fn a_non_utf8_argument_is_named_by_position() {
    use std::os::unix::ffi::OsStrExt;
    let o = bin()
        .args(["profile", "--model"])
        .arg(std::ffi::OsStr::from_bytes(b"m\xff"))
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .output()
        .unwrap();
    assert_input_error(&o, "--model", "argument 3");
    assert!(stderr(&o).contains("not valid UTF-8"), "{}", stderr(&o));
}

#[test]
fn flags_without_their_partner_are_errors() {
    for (flag, extra) in [
        ("--warmup-concurrency", &["--warmup-concurrency", "4"][..]),
        ("--warmup-request-rate", &["--warmup-request-rate", "4"][..]),
        (
            "--warmup-prefill-concurrency",
            &["--warmup-prefill-concurrency", "2"][..],
        ),
        (
            "--warmup-request-rate-ramp-duration",
            &["--warmup-request-rate-ramp-duration", "2"][..],
        ),
        ("--arrival-pattern", &["--arrival-pattern", "constant"][..]),
        ("--request-rate-mode", &["--request-rate-mode", "gamma"][..]),
        ("--arrival-smoothness", &["--vllm-burstiness", "2"][..]),
        (
            "--request-cancellation-delay",
            &["--request-cancellation-delay", "1"][..],
        ),
    ] {
        let o = run(&profile_args(extra));
        // The alias is reported by its main name.
        let named = if flag == "--request-rate-mode" {
            "--arrival-pattern"
        } else {
            flag
        };
        assert_input_error(&o, named, "");
    }
}

/// A small, fast run against the simulated server.
fn quick(cmd: &str, dir: &str, extra: &[&str]) -> Output {
    let mut args = vec![cmd, "--isl", "8", "--osl", "4", "--sim-ttft-ms", "1"];
    args.extend(["--sim-itl-ms", "0"]);
    if cmd == "profile" {
        args.extend([
            "--request-count",
            "2",
            "--ui",
            "none",
            "--artifact-dir",
            dir,
        ]);
    }
    args.extend_from_slice(extra);
    run(&args)
}

#[test]
fn streaming_on_an_endpoint_that_does_not_stream_is_a_warning() {
    let d = tmpdir("cli-embeddings-streaming");
    let o = quick(
        "profile",
        d.to_str().unwrap(),
        &["--endpoint-type", "embeddings", "--streaming"],
    );
    let err = stderr(&o);
    assert!(o.status.success(), "{err}");
    let warning = "inferbench: warning: --streaming: --endpoint-type embeddings does not stream";
    assert!(err.lines().any(|l| l.starts_with(warning)), "{err}");
    let m = read_json(&d.join("inferbench_manifest.json"));
    assert_eq!(m["plan"]["streaming"], false, "{m}");
}

#[test]
fn inspect_names_the_flags_it_ignores() {
    let o = quick(
        "inspect",
        "",
        &["--concurrency", "4", "--export-level", "raw"],
    );
    let err = stderr(&o);
    assert!(o.status.success(), "{err}");
    assert!(
        err.lines().any(|l| l
            == "inferbench: warning: inspect ignores --concurrency, --export-level: it sends --count requests one after another and writes no files"),
        "{err}"
    );
}

#[test]
fn the_simulated_server_streams_by_default_and_url_runs_do_not() {
    let d = tmpdir("cli-demo-streams");
    let o = quick("profile", d.to_str().unwrap(), &[]);
    assert!(o.status.success(), "{}", stderr(&o));
    let s = read_json(&d.join("profile_export_aiperf.json"));
    assert!(s.get("time_to_first_token").is_some(), "{s}");
    assert!(s.get("inter_token_latency").is_some(), "{s}");
    let d = tmpdir("cli-demo-no-streaming");
    let o = quick("profile", d.to_str().unwrap(), &["--no-streaming"]);
    assert!(o.status.success(), "{}", stderr(&o));
    let s = read_json(&d.join("profile_export_aiperf.json"));
    assert!(s.get("time_to_first_token").is_none(), "{s}");
    // With --url, AIPerf's default (no streaming) stays.
    let mock = MockServer::start(&["--fast"]);
    let d = tmpdir("cli-url-no-streaming");
    let o = run(&[
        "profile",
        "--url",
        &mock.url,
        "-m",
        "mock-model",
        "--request-count",
        "2",
        "--isl",
        "8",
        "--osl",
        "4",
        "--ui",
        "none",
        "--artifact-dir",
        d.to_str().unwrap(),
    ]);
    assert!(o.status.success(), "{}", stderr(&o));
    let s = read_json(&d.join("profile_export_aiperf.json"));
    assert!(s.get("time_to_first_token").is_none(), "{s}");
}
