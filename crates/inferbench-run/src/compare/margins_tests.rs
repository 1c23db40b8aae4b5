use super::*;
use inferbench_core::summary::{MetricResult, MetricValue, Stats};

fn summary() -> Summary {
    let dist = |tag: &str, unit: &str| MetricResult {
        tag: tag.into(),
        header: tag.into(),
        unit: unit.into(),
        value: MetricValue::Distribution {
            stats: Stats::default(),
        },
    };
    let scalar = |tag: &str, unit: &str| MetricResult {
        tag: tag.into(),
        header: tag.into(),
        unit: unit.into(),
        value: MetricValue::Scalar { value: 1.0 },
    };
    Summary {
        definitions: "aiperf-0.13".into(),
        metrics: vec![
            dist("time_to_first_token", "ms"),
            dist("output_sequence_length", "tokens"),
            scalar("output_token_throughput", "tokens/sec"),
        ],
        error_summary: vec![],
    }
}

#[test]
fn parses_the_three_kinds_of_margin() {
    let m = parse_margin("time_to_first_token.p99=±5%", "--margin").unwrap();
    assert_eq!(m.metric, "time_to_first_token");
    assert_eq!(m.stat.as_deref(), Some("p99"));
    assert_eq!(m.value, MarginValue::Relative(0.05));
    let m = parse_margin("request_error_rate=+-1.5pp", "--margin").unwrap();
    assert_eq!(m.value, MarginValue::Points(0.015));
    let m = parse_margin("time_to_first_token.avg=5ms", "--margin").unwrap();
    assert_eq!(
        m.value,
        MarginValue::Absolute {
            value: 5.0,
            unit: "ms".into()
        }
    );
    let m = parse_margin("output_token_throughput=+/-3 %", "--margin").unwrap();
    assert_eq!(m.value, MarginValue::Relative(0.03));
}

#[test]
fn a_margin_without_a_unit_or_value_is_refused_by_name() {
    let e = parse_margin("time_to_first_token.p99=±5", "--margin").unwrap_err();
    assert!(
        e.contains("'time_to_first_token.p99=±5'") && e.contains("no unit"),
        "{e}"
    );
    let e = parse_margin("time_to_first_token.p99", "--margin").unwrap_err();
    assert!(e.contains("expected METRIC"), "{e}");
    let e = parse_margin("x=±abc", "--margin").unwrap_err();
    assert!(e.contains("not a margin"), "{e}");
    let e = parse_margin("x=0%", "--margin").unwrap_err();
    assert!(e.contains("positive"), "{e}");
    let e = parse_margin("time_to_first_token.max=±5%", "--margin").unwrap_err();
    assert!(e.contains("unknown statistic 'max'"), "{e}");
}

#[test]
fn resolve_checks_metric_stat_and_unit() {
    let s = summary();
    let r = |arg: &str| {
        resolve(
            &[parse_margin(arg, "--margin").unwrap()],
            &s,
            "aiperf-0.13",
            false,
        )
    };
    let ok = r("time_to_first_token.p99=±5%").unwrap();
    assert_eq!(ok[0].stat, Stat::Percentile(99.0));
    assert_eq!(ok[0].direction, Direction::LowerIsBetter);
    let ok = r("output_token_throughput=±3%").unwrap();
    assert_eq!(ok[0].stat, Stat::Value);
    assert_eq!(ok[0].direction, Direction::HigherIsBetter);
    assert_eq!(
        r("request_error_rate=±1pp").unwrap()[0].stat,
        Stat::Fraction
    );
    assert_eq!(
        r("output_sequence_length.avg=±1%").unwrap()[0].direction,
        Direction::Neutral
    );

    let e = r("time_to_frist_token.p99=±5%").unwrap_err();
    assert!(
        e.contains("unknown metric 'time_to_frist_token' under aiperf-0.13"),
        "{e}"
    );
    let e = r("time_to_first_token=±5%").unwrap_err();
    assert!(e.contains("name a statistic"), "{e}");
    let e = r("output_token_throughput.p99=±5%").unwrap_err();
    assert!(e.contains("no statistic 'p99'"), "{e}");
    let e = r("time_to_first_token.p99=±5s").unwrap_err();
    assert!(e.contains("is in ms, not s"), "{e}");
    let e = r("time_to_first_token.p99=±5pp").unwrap_err();
    assert!(e.contains("pp is for fractions"), "{e}");
    let e = r("request_error_rate=±1%").unwrap_err();
    assert!(e.contains("percentage points"), "{e}");
    let e = r("good_request_fraction=±1pp").unwrap_err();
    assert!(e.contains("needs --goodput"), "{e}");
    let twice = [
        parse_margin("request_error_rate=±1pp", "a").unwrap(),
        parse_margin("request_error_rate=±2pp", "b").unwrap(),
    ];
    assert!(
        resolve(&twice, &s, "x", false)
            .unwrap_err()
            .contains("twice")
    );
}

#[test]
fn the_defaults_are_marked_and_include_goodput_only_with_it() {
    let d = default_margins(false);
    assert!(d.iter().all(|e| e.default));
    assert!(
        d.iter()
            .any(|e| e.key == "output_token_throughput" && e.value == MarginValue::Relative(0.03))
    );
    assert!(
        d.iter()
            .any(|e| e.key == "time_to_first_token.p99" && e.value == MarginValue::Relative(0.05))
    );
    assert!(!d.iter().any(|e| e.key == GOOD_FRACTION));
    assert!(
        default_margins(true)
            .iter()
            .any(|e| e.key == GOOD_FRACTION && e.value == MarginValue::Points(0.015))
    );
}

#[test]
fn a_margins_file_names_its_bad_line() {
    let dir = tempfile::Builder::new()
        .prefix("ib-margins-")
        .tempdir()
        .unwrap();
    let p = dir.path().join("m.txt");
    std::fs::write(
        &p,
        "# comment\ntime_to_first_token.p99 = ±5%\n\nrequest_latency.avg=7\n",
    )
    .unwrap();
    let e = parse_margins_file(&p).unwrap_err();
    assert!(e.contains("m.txt:4:") && e.contains("no unit"), "{e}");
    std::fs::write(&p, "time_to_first_token.p99 = ±5%  # tail\n").unwrap();
    let m = parse_margins_file(&p).unwrap();
    assert_eq!(m.len(), 1);
    assert_eq!(m[0].text, "±5%");
}
