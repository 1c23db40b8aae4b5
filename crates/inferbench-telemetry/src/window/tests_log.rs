//! The analysis of a raw scrape log with text bodies: what is usable, duplicates, failures,
//! OpenMetrics names.

use super::*;
use crate::scrape::{ScrapesHeader, TargetKind, TargetOrigin};

const S: u64 = 1_000_000_000;

fn target(index: u32, kind: TargetKind) -> TargetInfo {
    TargetInfo {
        index,
        kind,
        origin: TargetOrigin::Flag,
        url: format!("http://h/{index}"),
        interval_ns: S,
    }
}

fn ok(target: u32, seq: u64, t: u64, body: &str) -> ScrapeLine {
    ScrapeLine {
        target,
        seq,
        send_ns: t.saturating_sub(1000),
        first_byte_ns: Some(t),
        end_ns: t + 5000,
        status: Some(200),
        body: Some(body.into()),
        ..Default::default()
    }
}

fn log(targets: Vec<TargetInfo>, scrapes: Vec<ScrapeLine>) -> ScrapeLog {
    ScrapeLog {
        header: ScrapesHeader {
            schema_version: 1,
            anchor_unix_ns: 0,
            targets,
        },
        scrapes,
        end: None,
    }
}

fn windows(start_ns: u64, end_ns: u64) -> Windows {
    Windows {
        profiling: Window { start_ns, end_ns },
        warmup: None,
    }
}

fn tokens(v: u32) -> String {
    format!(
        "# TYPE vllm:generation_tokens_total counter\n\
         vllm:generation_tokens_total{{engine=\"0\"}} {v}\n\
         # TYPE vllm:num_requests_waiting gauge\n\
         vllm:num_requests_waiting{{engine=\"0\"}} {}\n",
        v / 10
    )
}

#[test]
fn failures_duplicates_and_unparsable_bodies_are_counted_per_target() {
    let mut dup = ScrapeLine {
        body: None,
        same_as: Some(1),
        ..ok(0, 2, 2 * S, "")
    };
    dup.content_type = None;
    let failed = ScrapeLine {
        error: Some("connection refused".into()),
        status: None,
        body: None,
        ..ok(0, 3, 3 * S, "")
    };
    let status = ScrapeLine {
        status: Some(503),
        ..ok(0, 4, 4 * S, "oops")
    };
    let scrapes = vec![
        ok(0, 0, 0, &tokens(100)),
        ok(1, 0, S / 2, "{\"json\": true}"),
        ok(0, 1, S, &tokens(150)),
        ok(1, 1, S, "{\"json\": true}"),
        dup,
        failed,
        status,
        ok(0, 5, 5 * S, &tokens(400)),
    ];
    let a = analyze(
        &log(
            vec![target(0, TargetKind::Server), target(1, TargetKind::Gpu)],
            scrapes,
        ),
        &windows(S / 2, 9 * S / 2),
    );
    let t = &a.targets[0];
    assert_eq!(
        (t.scrapes, t.failed, t.unparsable, t.duplicates),
        (6, 2, 0, 1)
    );
    let b = t.bracket.unwrap();
    assert_eq!((b.start.seq, b.end.seq, b.closed), (0, 5, true));
    let SeriesStats::Counter(c) =
        &t.family("vllm:generation_tokens_total").unwrap().series[0].stats
    else {
        panic!()
    };
    // 100 → 150 → 150 (the duplicate) → 400, over 5 s.
    assert_eq!((c.increase, c.rate_per_s), (300.0, 60.0));
    // The waiting gauge in [0.5 s, 4.5 s]: 15 at 1 s, 15 at 2 s (the duplicate is a sample).
    let SeriesStats::Gauge(g) = &t.family("vllm:num_requests_waiting").unwrap().series[0].stats
    else {
        panic!()
    };
    assert_eq!((g.samples, g.mean), (2, Some(15.0)));
    let j = &a.targets[1];
    assert_eq!((j.scrapes, j.unparsable, j.failed), (2, 2, 0));
    assert!(j.bracket.is_none());
    // The parse error is reported once, naming the scrape and the body's line.
    let parse: Vec<&String> = j
        .warnings
        .iter()
        .filter(|w| w.contains("not Prometheus"))
        .collect();
    assert_eq!(parse.len(), 1, "{:?}", j.warnings);
    assert!(
        parse[0].starts_with("scrape 0:") && parse[0].contains("line 1"),
        "{}",
        parse[0]
    );
}

#[test]
fn openmetrics_created_samples_under_escaped_names_restart_the_counter() {
    let body = |v: u32, created: &str| {
        format!(
            "# TYPE vllm:generation_tokens counter\n\
             vllm_generation_tokens_total{{engine=\"0\"}} {v}\n\
             vllm_generation_tokens_created{{engine=\"0\"}} {created}\n# EOF\n"
        )
    };
    let om = |mut s: ScrapeLine| {
        s.content_type = Some("application/openmetrics-text; version=1.0.0".into());
        s
    };
    let scrapes = vec![
        om(ok(0, 0, 0, &body(10, "1.5e9"))),
        om(ok(0, 1, S, &body(30, "1.5e9"))),
        // A restart that already reached 40: no drop, but a new start time.
        om(ok(0, 2, 2 * S, &body(40, "1.6e9"))),
    ];
    let a = analyze(
        &log(vec![target(0, TargetKind::Server)], scrapes),
        &windows(0, 2 * S),
    );
    let t = &a.targets[0];
    let f = t.family("vllm:generation_tokens").unwrap();
    let SeriesStats::Counter(c) = &f.series[0].stats else {
        panic!("{f:?}")
    };
    // 20, then 40 from zero.
    assert_eq!((c.increase, c.resets, c.created_changed), (60.0, 1, true));
}

#[test]
fn a_series_own_timestamp_is_noted_and_does_not_move_the_sample_time() {
    let scrapes = vec![
        ok(0, 0, 0, "# TYPE c counter\nc 1 1000\n"),
        ok(0, 1, 4 * S, "# TYPE c counter\nc 9 1001\n"),
    ];
    let a = analyze(
        &log(vec![target(0, TargetKind::Server)], scrapes),
        &windows(0, 4 * S),
    );
    let t = &a.targets[0];
    assert_eq!(t.bracket.unwrap().seconds(), 4.0);
    assert!(
        t.warnings
            .iter()
            .any(|w| w.contains("own exposition timestamp")),
        "{:?}",
        t.warnings
    );
}
