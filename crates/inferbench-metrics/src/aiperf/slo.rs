//! `--goodput` for `aiperf-0.13`: AIPerf's service-level objectives.

/// One service-level objective of `--goodput`: a per-request metric, a bound in the metric's
/// display unit, and its direction (throughputs must reach it, everything else stay under).
#[derive(Clone, Debug, PartialEq)]
pub struct Slo {
    pub tag: String,
    pub bound: f64,
    pub larger_is_better: bool,
}

/// Per-request metrics an SLO may name (AIPerf: record metrics of one value).
pub const SLO_METRICS: &[&str] = &[
    "request_latency",
    "time_to_first_token",
    "time_to_second_token",
    "time_to_first_output_token",
    "inter_token_latency",
    "decode_duration",
    "output_token_throughput_per_user",
    "e2e_output_token_throughput",
    "prefill_throughput_per_user",
    "output_sequence_length",
    "input_sequence_length",
    "output_token_count",
];

/// Parse `--goodput "tag:value tag:value"` (values in display units: ms, tokens/sec/user).
pub fn parse_slos(spec: &str) -> Result<Vec<Slo>, String> {
    let mut out: Vec<Slo> = Vec::new();
    for item in spec.split_whitespace() {
        let (tag, value) = item
            .split_once(':')
            .ok_or_else(|| format!("--goodput {item:?}: expected metric:value"))?;
        if !SLO_METRICS.contains(&tag) {
            return Err(format!(
                "--goodput: unknown metric {tag:?} (valid: {})",
                SLO_METRICS.join(", ")
            ));
        }
        let bound: f64 = value
            .parse()
            .ok()
            .filter(|v: &f64| v.is_finite())
            .ok_or_else(|| format!("--goodput {item:?}: {value:?} is not a number"))?;
        out.retain(|s| s.tag != tag);
        out.push(Slo {
            tag: tag.to_string(),
            bound,
            larger_is_better: tag.contains("throughput"),
        });
    }
    if out.is_empty() {
        return Err("--goodput: no metric:value given".into());
    }
    Ok(out)
}

#[cfg(test)]
mod slo_tests {
    use super::*;

    #[test]
    fn slos_parse_with_directions_and_name_bad_input() {
        let s = parse_slos("time_to_first_token:100 output_token_throughput_per_user:50").unwrap();
        assert_eq!(s.len(), 2);
        assert!(!s[0].larger_is_better && s[0].bound == 100.0);
        assert!(s[1].larger_is_better && s[1].bound == 50.0);
        // A repeated metric keeps the last bound.
        let s = parse_slos("request_latency:10 request_latency:20").unwrap();
        assert_eq!(s.len(), 1);
        assert_eq!(s[0].bound, 20.0);
        for bad in ["", "ttft:5", "time_to_first_token", "time_to_first_token:x"] {
            let e = parse_slos(bad).unwrap_err();
            assert!(e.starts_with("--goodput"), "{bad}: {e}");
        }
    }
}
