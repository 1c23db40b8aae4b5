//! `server_metrics_export.jsonl` from a hand-written scrape log, the expected lines written
//! out by hand from AIPerf 0.13's rules (the parity with a real AIPerf file is
//! `tests/aiperf_parity.rs`).

use super::jsonl::{Body, Sample};
use super::*;
use crate::scrape::{
    ScrapeLine, ScrapeLog, ScrapesHeader, TargetInfo, TargetKind, TargetOrigin, Trigger,
};
use crate::window::{Window, Windows};

const ANCHOR: u64 = 1_000_000_000_000;

/// A counter, a gauge whose labels come unsorted, a histogram with a NaN label set, an
/// `_info` gauge, a `_created` family, a summary and an all-NaN gauge.
const FIRST: &str = "\
# HELP foo_total Things done.
# TYPE foo_total counter
foo_total 3
# TYPE foo_created gauge
foo_created 1700000000.5
# TYPE queue gauge
queue{zone=\"b\",model=\"m\"} 2
queue{model=\"m\",zone=\"a\"} 1.5
# TYPE lat_seconds histogram
lat_seconds_bucket{model=\"m\",le=\"0.1\"} 1
lat_seconds_bucket{model=\"m\",le=\"1\"} 4
lat_seconds_bucket{model=\"m\",le=\"+Inf\"} 5
lat_seconds_sum{model=\"m\"} 2.25
lat_seconds_count{model=\"m\"} 5
lat_seconds_bucket{model=\"n\",le=\"0.1\"} 0
lat_seconds_bucket{model=\"n\",le=\"1\"} NaN
lat_seconds_bucket{model=\"n\",le=\"+Inf\"} 1
lat_seconds_sum{model=\"n\"} 3
lat_seconds_count{model=\"n\"} 1
# TYPE build_info gauge
build_info{version=\"1.2\"} 1
# TYPE rpc_seconds summary
rpc_seconds{quantile=\"0.5\"} 0.2
rpc_seconds_sum 4
rpc_seconds_count 10
# TYPE temp gauge
temp NaN
";

const SECOND: &str = "\
# TYPE foo_total counter
foo_total 7
# TYPE queue gauge
queue{zone=\"a\",model=\"m\"} 0
# TYPE untyped_thing untyped
untyped_thing 1e20
";

fn windows(warmup: bool) -> Windows {
    Windows {
        profiling: Window {
            start_ns: 3_000,
            end_ns: 9_000,
        },
        warmup: warmup.then_some(Window {
            start_ns: 1_000,
            end_ns: 2_000,
        }),
    }
}

fn meta<'a>(w: &'a Windows, cfg: &'a serde_json::Value) -> Meta<'a> {
    Meta {
        benchmark_id: "b1",
        anchor_unix_ns: ANCHOR,
        input_config: cfg,
        windows: w,
    }
}

fn target(index: u32, kind: TargetKind, url: &str) -> TargetInfo {
    TargetInfo {
        index,
        kind,
        origin: TargetOrigin::Flag,
        url: url.into(),
        interval_ns: 1_000,
    }
}

/// A successful scrape of `target`: sent at `send`, first byte 50 ns later, read 100 ns later.
fn scrape(target: u32, seq: u64, send: u64, phase: Option<&str>, body: &str) -> ScrapeLine {
    ScrapeLine {
        target,
        seq,
        trigger: Some(Trigger::Interval),
        phase: phase.map(String::from),
        send_ns: send,
        first_byte_ns: Some(send + 50),
        end_ns: send + 100,
        wall_unix_ns: ANCHOR + send + 50,
        status: Some(200),
        content_type: Some("text/plain; version=0.0.4".into()),
        body: Some(body.into()),
        ..Default::default()
    }
}

fn the_log() -> ScrapeLog {
    let mut start = scrape(0, 0, 100, None, FIRST);
    start.trigger = Some(Trigger::Start);
    let gpu = scrape(1, 0, 150, None, "DCGM_FI_DEV_POWER_USAGE{gpu=\"0\"} 100\n");
    let warm = scrape(0, 1, 1_200, Some("warmup"), SECOND);
    // Byte-identical to the one before: AIPerf's duplicate.
    let mut repeat = scrape(0, 2, 1_400, Some("warmup"), SECOND);
    repeat.body = None;
    repeat.same_as = Some(1);
    let mut failed = scrape(0, 3, 3_200, Some("profiling"), "");
    failed.status = Some(500);
    failed.body = None;
    failed.error = Some("HTTP 500".into());
    let json = scrape(0, 4, 3_400, Some("profiling"), "{\"iterations\": []}");
    // The end scrape: only an `_info` family, and no first-byte time.
    let mut end = scrape(0, 5, 5_000, None, "# TYPE build_info gauge\nbuild_info 1\n");
    end.trigger = Some(Trigger::End);
    end.first_byte_ns = None;
    end.wall_unix_ns = ANCHOR + 5_100;
    ScrapeLog {
        header: ScrapesHeader {
            schema_version: 1,
            anchor_unix_ns: ANCHOR,
            targets: vec![
                target(0, TargetKind::Server, "http://127.0.0.1:9/metrics"),
                target(1, TargetKind::Gpu, "http://127.0.0.1:9400/metrics"),
            ],
        },
        scrapes: vec![start, gpu, warm, repeat, failed, json, end],
        end: None,
    }
}

#[test]
fn one_line_per_recorded_scrape_in_aiperfs_slim_shape() {
    let w = windows(true);
    let cfg = serde_json::json!({});
    let text = server_metrics_jsonl(&the_log(), &meta(&w, &cfg)).expect("lines");
    let expected = [
        // The start scrape, before any phase: no phase keys. `foo_total` is `foo`, a float;
        // the gauge's labels sorted by name, its label sets in body order; the histogram's
        // `model="n"` set had a NaN bucket and is gone; `foo_created`, `build_info`, the
        // summary and the all-NaN gauge are left out.
        concat!(
            r#"{"endpoint_url":"http://127.0.0.1:9/metrics","timestamp_ns":1000000000150,"#,
            r#""endpoint_latency_ns":100,"metrics":{"foo":[{"value":3.0}],"#,
            r#""queue":[{"labels":{"model":"m","zone":"b"},"value":2.0},"#,
            r#"{"labels":{"model":"m","zone":"a"},"value":1.5}],"#,
            r#""lat_seconds":[{"labels":{"model":"m"},"buckets":{"0.1":1.0,"1":4.0,"+Inf":5.0},"sum":2.25,"count":5.0}]},"#,
            r#""request_sent_ns":1000000000100,"first_byte_ns":1000000000150}"#,
        ),
        // A warmup scrape: warmup is phase 0 and has no profiling index.
        concat!(
            r#"{"endpoint_url":"http://127.0.0.1:9/metrics","timestamp_ns":1000000001250,"#,
            r#""endpoint_latency_ns":100,"metrics":{"foo":[{"value":7.0}],"#,
            r#""queue":[{"labels":{"model":"m","zone":"a"},"value":0.0}],"#,
            r#""untyped_thing":[{"value":1e+20}]},"#,
            r#""request_sent_ns":1000000001200,"first_byte_ns":1000000001250,"#,
            r#""benchmark_phase":"warmup","phase_index":0,"phase_name":"warmup","phase_kind":"warmup"}"#,
        ),
        // The repeat, the HTTP 500 and the JSON body give no line. The end scrape is
        // profiling (phase 1 after a warmup); its only family is `_info`, so `metrics` is
        // empty; without a first byte its time is the wall clock at the end of the read.
        concat!(
            r#"{"endpoint_url":"http://127.0.0.1:9/metrics","timestamp_ns":1000000005100,"#,
            r#""endpoint_latency_ns":100,"metrics":{},"request_sent_ns":1000000005000,"#,
            r#""benchmark_phase":"profiling","phase_index":1,"profiling_index":0,"#,
            r#""phase_name":"profiling","phase_kind":"profiling"}"#,
        ),
    ];
    let got: Vec<&str> = text.lines().collect();
    assert_eq!(got, expected);
    assert!(text.ends_with("}\n"));
}

#[test]
fn without_warmup_profiling_is_phase_0() {
    let w = windows(false);
    let cfg = serde_json::json!({});
    let mut log = the_log();
    log.scrapes.retain(|s| s.phase.is_none());
    let text = server_metrics_jsonl(&log, &meta(&w, &cfg)).expect("lines");
    let last = text.lines().last().unwrap();
    assert!(
        last.ends_with(r#""benchmark_phase":"profiling","phase_index":0,"profiling_index":0,"phase_name":"profiling","phase_kind":"profiling"}"#),
        "{last}"
    );
}

#[test]
fn no_usable_server_scrape_is_no_file() {
    let w = windows(true);
    let cfg = serde_json::json!({});
    let mut log = the_log();
    // Only the GPU scrape, the failure and the JSON body are left.
    log.scrapes
        .retain(|s| s.target == 1 || s.seq == 3 || s.seq == 4);
    assert_eq!(server_metrics_jsonl(&log, &meta(&w, &cfg)), None);
}

#[test]
fn floats_are_written_as_aiperfs_orjson_writes_them() {
    // AIPerf 0.13 pins orjson ~= 3.11.7; these are that version's renderings.
    let cases: [(f64, &str); 14] = [
        (1e20, "1e+20"),
        (1e16, "1e+16"),
        (1e15, "1000000000000000.0"),
        (123456789012345678.0, "1.2345678901234568e+17"),
        (1e-4, "0.0001"),
        (1e-5, "0.00001"),
        (1e-6, "1e-6"),
        (1.5e-7, "1.5e-7"),
        (5e-324, "5e-324"),
        (f64::MAX, "1.7976931348623157e+308"),
        (100.0, "100.0"),
        (0.1 + 0.2, "0.30000000000000004"),
        (-0.0, "-0.0"),
        (1796150314.8960779, "1796150314.8960779"),
    ];
    for (x, want) in cases {
        let s = Sample {
            labels: Vec::new(),
            body: Body::Value(x),
        };
        assert_eq!(
            serde_json::to_string(&s).unwrap(),
            format!("{{\"value\":{want}}}"),
            "{x:e}"
        );
    }
}
