//! GenAI-Perf's file shapes per release, on a hand-built summary. The byte-for-byte checks
//! against real 0.0.16 and 0.0.12 files (import → score → write) are in
//! `crates/inferbench-import/tests/genai_perf_parity.rs`.

use inferbench_artifacts::genai_perf_export::{genai_perf_csv, genai_perf_json};
use inferbench_core::{MetricResult, MetricValue, Stats, Summary};
use serde_json::json;

fn dist(tag: &str, header: &str, unit: &str, v: f64) -> MetricResult {
    MetricResult {
        tag: tag.into(),
        header: header.into(),
        unit: unit.into(),
        value: MetricValue::Distribution {
            stats: Stats {
                avg: Some(v),
                p1: Some(v),
                p5: Some(v),
                p10: Some(v),
                p25: Some(v),
                p50: Some(v),
                p75: Some(v),
                p90: Some(v),
                p95: Some(v),
                p99: Some(v),
                min: Some(v),
                max: Some(v),
                std: Some(0.0),
                count: 1,
                sum: Some(v),
            },
        },
    }
}

fn scalar(tag: &str, header: &str, unit: &str, v: f64) -> MetricResult {
    MetricResult {
        tag: tag.into(),
        header: header.into(),
        unit: unit.into(),
        value: MetricValue::Scalar { value: v },
    }
}

/// A 0.0.8-era summary (no TTST, no request count), one request of 1234.5 ms.
fn old_summary() -> Summary {
    Summary {
        definitions: "genai-perf-0.0.4".into(),
        metrics: vec![
            scalar(
                "request_throughput",
                "Request Throughput",
                "requests/sec",
                0.5,
            ),
            dist("request_latency", "Request Latency", "ms", 1234.5),
            dist("time_to_first_token", "Time To First Token", "ms", 0.0),
            scalar(
                "output_token_throughput",
                "Output Token Throughput",
                "tokens/sec",
                1500.0,
            ),
            dist(
                "output_sequence_length",
                "Output Sequence Length",
                "tokens",
                3.0,
            ),
        ],
        error_summary: Vec::new(),
    }
}

#[test]
fn json_of_0_0_8_labels_non_time_metrics_requests_per_sec() {
    let cfg = json!({"model": ["m"], "concurrency": 1});
    let got = genai_perf_json(&old_summary(), "0.0.8", Some(&cfg));
    let stats = |v: &str, std: &str| {
        format!(
            "    \"avg\": {v},\n    \"p25\": {v},\n    \"p50\": {v},\n    \"p75\": {v},\n    \
             \"p90\": {v},\n    \"p95\": {v},\n    \"p99\": {v},\n    \"min\": {v},\n    \
             \"max\": {v},\n    \"std\": {std}\n"
        )
    };
    let expected = format!(
        "{{\n  \"request_throughput\": {{\n    \"unit\": \"requests/sec\",\n    \"avg\": 0.5\n  }},\n  \
         \"request_latency\": {{\n    \"unit\": \"ms\",\n{}  }},\n  \
         \"time_to_first_token\": {{\n    \"unit\": \"ms\",\n{}  }},\n  \
         \"output_token_throughput\": {{\n    \"unit\": \"requests/sec\",\n    \"avg\": 1500.0\n  }},\n  \
         \"output_sequence_length\": {{\n    \"unit\": \"requests/sec\",\n{}  }},\n  \
         \"input_config\": {{\n    \"model\": [\n      \"m\"\n    ],\n    \"concurrency\": 1\n  }}\n}}",
        stats("1234.5", "0.0"),
        stats("0.0", "0.0"),
        stats("3.0", "0.0"),
    );
    assert_eq!(got, expected);
}

#[test]
fn csv_of_0_0_8_has_no_thousands_in_block_two_and_no_request_count() {
    let got = genai_perf_csv(&old_summary(), "0.0.8", true);
    let expected = "Metric,avg,min,max,p99,p95,p90,p75,p50,p25\r\n\
        Time To First Token (ms),0.00,0.00,0.00,0.00,0.00,0.00,0.00,0.00,0.00\r\n\
        Request Latency (ms),\"1,234.50\",\"1,234.50\",\"1,234.50\",\"1,234.50\",\"1,234.50\",\
        \"1,234.50\",\"1,234.50\",\"1,234.50\",\"1,234.50\"\r\n\
        Output Sequence Length,3.00,3.00,3.00,3.00,3.00,3.00,3.00,3.00,3.00\r\n\
        \r\n\
        Metric,Value\r\n\
        Output Token Throughput (per sec),1500.00\r\n\
        Request Throughput (per sec),0.50\r\n";
    assert_eq!(got, expected);
}

#[test]
fn csv_of_0_0_9_prints_zero_as_na() {
    let got = genai_perf_csv(&old_summary(), "0.0.9", true);
    assert!(got.contains("Time To First Token (ms),N/A,N/A,"), "{got}");
}

#[test]
fn csv_of_0_0_16_without_streaming() {
    let mut s = old_summary();
    s.metrics
        .push(scalar("request_count", "Request Count", "count", 2.0));
    let got = genai_perf_csv(&s, "0.0.15-0.0.16", false);
    let expected = "Metric,avg,min,max,p99,p95,p90,p75,p50,p25,p10,p5,p1\r\n\
        Request Latency (ms),\"1,234.50\",\"1,234.50\",\"1,234.50\",\"1,234.50\",\"1,234.50\",\
        \"1,234.50\",\"1,234.50\",\"1,234.50\",\"1,234.50\",\"1,234.50\",\"1,234.50\",\"1,234.50\"\r\n\
        Output Sequence Length (tokens),3.00,3.00,3.00,3.00,3.00,3.00,3.00,3.00,3.00,3.00,3.00,3.00\r\n\
        \r\n\
        Metric,Value\r\n\
        Output Token Throughput (tokens/sec),\"1,500.00\"\r\n\
        Request Throughput (per sec),0.50\r\n\
        Request Count (count),2.00\r\n";
    assert_eq!(got, expected);
}

#[test]
fn json_of_0_0_13_has_no_low_percentiles() {
    let got = genai_perf_json(&old_summary(), "0.0.13-0.0.14", None);
    assert!(!got.contains("\"p1\""));
    assert!(got.contains("\"p25\""));
    assert!(got.ends_with("}\n}"), "no input_config, no final newline");
    let got = genai_perf_json(&old_summary(), "0.0.15-0.0.16", None);
    assert!(got.contains("\"p1\": 1234.5"));
}
