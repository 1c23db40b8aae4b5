use inferbench_core::summary::{MetricResult, MetricValue, Stats, Summary};
use serde_json::json;

use super::*;

fn summary(throughput: f64, ttft_p99: Option<f64>) -> Summary {
    let mut metrics = vec![MetricResult {
        tag: "output_token_throughput".into(),
        header: "Output Token Throughput".into(),
        unit: "tokens/sec".into(),
        value: MetricValue::Scalar { value: throughput },
    }];
    if let Some(p99) = ttft_p99 {
        metrics.push(MetricResult {
            tag: "time_to_first_token".into(),
            header: "Time to First Token".into(),
            unit: "ms".into(),
            value: MetricValue::Distribution {
                stats: Stats {
                    p99: Some(p99),
                    avg: Some(1.0),
                    ..Default::default()
                },
            },
        });
    }
    Summary {
        definitions: "aiperf-0.13".into(),
        metrics,
        error_summary: Vec::new(),
    }
}

#[test]
fn one_trial_shows_its_statistic_several_their_mean() {
    let one = [summary(100.0, Some(12.345))];
    assert_eq!(
        cell_value(&one, "output_token_throughput", "avg"),
        Some(100.0)
    );
    assert_eq!(cell_value(&one, "time_to_first_token", "p99"), Some(12.345));
    // A scalar has no p99; a missing metric is empty.
    assert_eq!(cell_value(&one, "output_token_throughput", "p99"), None);
    assert_eq!(cell_value(&one, "request_latency", "p95"), None);
    // Three trials: (100 + 110 + 105) / 3 = 105; TTFT p99 only in two: (10 + 20) / 2 = 15.
    let three = [
        summary(100.0, Some(10.0)),
        summary(110.0, None),
        summary(105.0, Some(20.0)),
    ];
    assert_eq!(
        cell_value(&three, "output_token_throughput", "avg"),
        Some(105.0)
    );
    assert_eq!(cell_value(&three, "time_to_first_token", "p99"), Some(15.0));
    assert_eq!(cell_value(&[], "output_token_throughput", "avg"), None);
}

#[test]
fn the_table_grows_a_row_per_cell_with_sorted_parameter_columns() {
    let c1 = vec![
        ("isl".to_string(), json!(128)),
        ("concurrency".to_string(), json!(1)),
    ];
    let c2 = vec![
        ("isl".to_string(), json!(128)),
        ("concurrency".to_string(), json!(16)),
    ];
    let mut t = SweepTable::new([c1.as_slice(), c2.as_slice()]);
    let first = t.add(&c1, 1, &[summary(123.456, Some(12.3))]);
    let lines: Vec<&str> = first.lines().collect();
    assert_eq!(lines.len(), 3, "{first}");
    // Columns: concurrency, isl (sorted), the four headline metrics, trials; each right-aligned
    // to its header, with a space of padding either side and one between columns.
    assert_eq!(
        lines[0],
        "  concurrency   isl   output_token_throughput   time_to_first_token   inter_token_latency   request_latency   trials"
    );
    let w = [11, 3, 23, 19, 19, 15, 6];
    let inner: usize = w.iter().map(|x| x + 2).sum::<usize>() + w.len() - 1;
    assert_eq!(lines[1], format!(" {}", "━".repeat(inner)));
    assert_eq!(
        lines[2],
        format!(
            "  {:>11}   {:>3}   {:>23}   {:>19}   {:>19}   {:>15}   {:>6}",
            "1", "128", "123.46", "12.30", "", "", "1"
        )
    );
    // The second cell, a failed trial among three: every row so far is printed again.
    let second = t.add(&c2, 3, &[summary(1402.0, None), summary(1398.0, None)]);
    let lines: Vec<&str> = second.lines().collect();
    assert_eq!(lines.len(), 4, "{second}");
    assert_eq!(lines[2], first.lines().nth(2).unwrap());
    assert!(lines[3].starts_with(&format!(
        "  {:>11}   {:>3}   {:>23}",
        "16", "128", "1400.00"
    )));
    assert!(lines[3].ends_with("     3"), "{:?}", lines[3]);
}

#[test]
fn it_is_printed_only_for_a_sweep_at_a_terminal_unless_suppressed() {
    assert!(wanted(false, true, 2));
    assert!(!wanted(true, true, 2));
    assert!(!wanted(false, false, 2));
    assert!(!wanted(false, true, 1));
}
