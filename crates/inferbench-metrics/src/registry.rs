//! The one list of definition sets: each entry's name, the releases it stands for, its
//! `--goodput` syntax and parser, whether a live run can stream it, and its scorer. Every other
//! list of set names (the error's "known" list, `--help`, the GenAI-Perf sets) is derived
//! from [`registry`].

use std::sync::LazyLock;

use inferbench_core::{Evidence, EvidenceHeader, Phase};

use crate::{Accumulator, Computed, MetricsError, aiperf, genai_perf, mlperf, vllm_bench};

/// Which code scores a set (the GenAI-Perf sets share one, keyed by the set's name).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Scorer {
    Aiperf,
    GenaiPerf,
    VllmBench,
    Mlperf,
}

/// One definition set.
#[derive(Debug, PartialEq, Eq)]
pub struct DefinitionSet {
    /// The name given to `--definitions` (e.g. `genai-perf-0.0.13`).
    pub name: &'static str,
    /// The tool releases whose definitions the set reproduces (e.g. "GenAI-Perf 0.0.13–0.0.16").
    pub covers: &'static str,
    /// The newest GenAI-Perf release whose file shapes `--format genai-perf` writes for this
    /// set; `None` for a set that is not GenAI-Perf's.
    pub file_release: Option<&'static str>,
    /// One line on what sets it apart.
    pub summary: &'static str,
    /// The `--goodput` syntax the set reads; `None` when it has no goodput.
    pub goodput_syntax: Option<&'static str>,
    /// Whether the live run's streaming [`Accumulator`] computes it.
    pub streams: bool,
    scorer: Scorer,
}

/// `--goodput`, parsed once for one set (see [`DefinitionSet::parse_goodput`]).
#[derive(Clone, Debug, Default, PartialEq)]
pub enum Goodput {
    /// No `--goodput` given: no goodput metric is computed.
    #[default]
    None,
    /// AIPerf's record-metric SLOs (`metric:value …`, display units).
    Aiperf(Vec<aiperf::Slo>),
    /// GenAI-Perf's `metric:value …` constraints.
    GenaiPerf(Vec<genai_perf::GoodputSlo>),
    /// vLLM's `ttft:ms tpot:ms e2el:ms`.
    VllmBench(vllm_bench::Goodput),
}

impl Goodput {
    /// The SLOs for the live [`Accumulator::with_slos`] (AIPerf's set): empty without
    /// `--goodput`; an error for a goodput read under another set.
    pub fn aiperf_slos(&self) -> Result<Vec<aiperf::Slo>, MetricsError> {
        match self {
            Goodput::None => Ok(Vec::new()),
            Goodput::Aiperf(s) => Ok(s.clone()),
            _ => Err(mismatch(aiperf::NAME)),
        }
    }
}

fn mismatch(set: &str) -> MetricsError {
    MetricsError::Invalid(format!(
        "--goodput was read under another definition set than {set}"
    ))
}

static REGISTRY: [DefinitionSet; 7] = [
    DefinitionSet {
        name: aiperf::NAME,
        covers: "AIPerf 0.13.0",
        file_release: None,
        summary: "AIPerf's metrics, what a live run writes (checked bit for bit against AIPerf)",
        goodput_syntax: Some("metric:value … (AIPerf record metrics, display units)"),
        streams: true,
        scorer: Scorer::Aiperf,
    },
    DefinitionSet {
        name: genai_perf::SET_0_0_13,
        covers: "GenAI-Perf 0.0.13–0.0.16",
        file_release: Some("0.0.16"),
        summary: "ITL v2 (≥ 2 responses, OSL > 1), output_token_throughput_per_user, p1/p5/p10",
        goodput_syntax: Some("metric:value … (ms; tokens/sec for throughputs)"),
        streams: false,
        scorer: Scorer::GenaiPerf,
    },
    DefinitionSet {
        name: genai_perf::SET_0_0_10,
        covers: "GenAI-Perf 0.0.10–0.0.12",
        file_release: Some("0.0.12"),
        summary: "ITL v2 with OSL > 1 only, TTST and request_count, percentiles p25–p99",
        goodput_syntax: Some("metric:value … (ms; tokens/sec for throughputs)"),
        streams: false,
        scorer: Scorer::GenaiPerf,
    },
    DefinitionSet {
        name: genai_perf::SET_0_0_4,
        covers: "GenAI-Perf 0.0.4–0.0.9",
        file_release: Some("0.0.9"),
        summary: "as genai-perf-0.0.10, without TTST and request_count",
        goodput_syntax: Some("metric:value … (ms; tokens/sec for throughputs)"),
        streams: false,
        scorer: Scorer::GenaiPerf,
    },
    DefinitionSet {
        name: genai_perf::SET_0_0_1,
        covers: "GenAI-Perf 0.0.1–0.0.3",
        file_release: Some("0.0.3"),
        summary: "ITL v1: pooled chunk-gap ITL, OSL the sum of per-chunk counts",
        goodput_syntax: Some("metric:value … (ms; tokens/sec for throughputs)"),
        streams: false,
        scorer: Scorer::GenaiPerf,
    },
    DefinitionSet {
        name: vllm_bench::NAME,
        covers: "vLLM `vllm bench serve` (benchmark_serving)",
        file_release: None,
        summary: "TTFT, TPOT, ITL, E2EL over successes; throughputs over the issuing window",
        goodput_syntax: Some("ttft:ms tpot:ms e2el:ms"),
        streams: false,
        scorer: Scorer::VllmBench,
    },
    DefinitionSet {
        name: mlperf::NAME,
        covers: "MLPerf Inference LoadGen, Server scenario (LLM)",
        file_release: None,
        summary: "latencies from the scheduled issue time, LoadGen percentiles, validity verdicts",
        goodput_syntax: None,
        streams: false,
        scorer: Scorer::Mlperf,
    },
];

/// Every definition set, AIPerf's first (what a live run writes).
pub fn registry() -> &'static [DefinitionSet] {
    &REGISTRY
}

/// The names of [`registry`], in its order.
pub fn names() -> &'static [&'static str] {
    static NAMES: LazyLock<Vec<&'static str>> =
        LazyLock::new(|| REGISTRY.iter().map(|s| s.name).collect());
    &NAMES
}

/// The names of the sets the streaming [`Accumulator`] computes.
pub(crate) fn streaming_names() -> &'static [&'static str] {
    static NAMES: LazyLock<Vec<&'static str>> = LazyLock::new(|| {
        REGISTRY
            .iter()
            .filter(|s| s.streams)
            .map(|s| s.name)
            .collect()
    });
    &NAMES
}

/// The names of the GenAI-Perf sets, newest first.
pub(crate) fn genai_perf_names() -> &'static [&'static str] {
    static NAMES: LazyLock<Vec<&'static str>> = LazyLock::new(|| {
        REGISTRY
            .iter()
            .filter(|s| s.scorer == Scorer::GenaiPerf)
            .map(|s| s.name)
            .collect()
    });
    &NAMES
}

/// The set named `name`; an unknown name is an error that lists every valid one.
pub fn find(name: &str) -> Result<&'static DefinitionSet, MetricsError> {
    REGISTRY
        .iter()
        .find(|s| s.name == name)
        .ok_or_else(|| MetricsError::UnknownDefinitions {
            name: name.to_string(),
            known: names(),
        })
}

/// One line per set (name, releases, summary), for `--definitions`' help.
pub fn help_text() -> String {
    let width = REGISTRY.iter().map(|s| s.name.len()).max().unwrap_or(0);
    REGISTRY
        .iter()
        .map(|s| format!("{:width$}  {}: {}", s.name, s.covers, s.summary))
        .collect::<Vec<_>>()
        .join("\n")
}

impl DefinitionSet {
    /// Whether the set is one of GenAI-Perf's (counts tokens per response with the run's
    /// tokenizer, and can be written with `--format genai-perf`).
    pub fn is_genai_perf(&self) -> bool {
        self.scorer == Scorer::GenaiPerf
    }

    /// Parses `--goodput` in this set's syntax.
    pub fn parse_goodput(&self, spec: &str) -> Result<Goodput, MetricsError> {
        match self.scorer {
            Scorer::Aiperf => aiperf::parse_slos(spec)
                .map(Goodput::Aiperf)
                .map_err(MetricsError::Invalid),
            Scorer::GenaiPerf => genai_perf::parse_goodput(spec).map(Goodput::GenaiPerf),
            Scorer::VllmBench => vllm_bench::Goodput::parse(spec)
                .map(Goodput::VllmBench)
                .map_err(MetricsError::Invalid),
            Scorer::Mlperf => Err(MetricsError::Invalid(
                "--goodput: mlperf-loadgen has no goodput (its verdicts are the latency targets)"
                    .into(),
            )),
        }
    }

    /// Computes this set over the records of `phase`. `count` is the run's tokenizer (the
    /// GenAI-Perf sets count tokens per response); `goodput` comes from
    /// [`parse_goodput`](Self::parse_goodput) of this set (or is [`Goodput::None`]);
    /// `confidence_level` is the good fraction's Wilson interval (AIPerf's set).
    pub fn score(
        &self,
        evidence: &Evidence,
        phase: Phase,
        count: &dyn Fn(&str) -> u64,
        goodput: &Goodput,
        confidence_level: f64,
    ) -> Result<Computed, MetricsError> {
        match (self.scorer, goodput) {
            (Scorer::Aiperf, Goodput::None | Goodput::Aiperf(_)) => crate::compute_with_slos(
                self.name,
                evidence,
                phase,
                goodput.aiperf_slos()?,
                confidence_level,
            ),
            (Scorer::GenaiPerf, Goodput::None) => {
                genai_perf::compute_with_goodput(self.name, evidence, phase, count, &[])
            }
            (Scorer::GenaiPerf, Goodput::GenaiPerf(slos)) => {
                genai_perf::compute_with_goodput(self.name, evidence, phase, count, slos)
            }
            (Scorer::VllmBench, Goodput::None) => Ok(vllm_bench::compute(evidence, phase)),
            (Scorer::VllmBench, Goodput::VllmBench(g)) => {
                Ok(vllm_bench::compute_with_goodput(evidence, phase, g))
            }
            (Scorer::Mlperf, Goodput::None) => Ok(mlperf::compute(evidence, phase)),
            _ => Err(mismatch(self.name)),
        }
    }

    /// The streaming fold of this set, for a live run; an error for a set that does not
    /// stream (the error lists the ones that do).
    pub fn accumulator(&self, header: &EvidenceHeader) -> Result<Accumulator, MetricsError> {
        match self.scorer {
            Scorer::Aiperf => Ok(Accumulator::Aiperf(Box::new(aiperf::Accumulator::new(
                header,
            )))),
            _ => Err(MetricsError::UnknownDefinitions {
                name: self.name.to_string(),
                known: streaming_names(),
            }),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn header() -> EvidenceHeader {
        EvidenceHeader {
            schema_version: 1,
            tool: "t".into(),
            tool_version: "0".into(),
            anchor_unix_ns: 0,
            benchmark_id: "b".into(),
            endpoint_type: "chat".into(),
            streaming: true,
            tokenizer: "builtin".into(),
            use_server_token_count: false,
            per_chunk_usage: false,
        }
    }

    #[test]
    fn names_are_unique_and_streaming_sets_have_an_accumulator() {
        let mut seen = std::collections::HashSet::new();
        for s in registry() {
            assert!(seen.insert(s.name), "{} twice", s.name);
            assert_eq!(s.accumulator(&header()).is_ok(), s.streams, "{}", s.name);
            // A GenAI-Perf set, and only one, names the release whose files it writes.
            assert_eq!(s.file_release.is_some(), s.is_genai_perf(), "{}", s.name);
        }
        assert_eq!(streaming_names(), ["aiperf-0.13"]);
    }

    #[test]
    fn find_names_every_valid_set_in_its_error() {
        assert_eq!(find("vllm-bench").unwrap().name, "vllm-bench");
        let e = find("genai-perf-9").unwrap_err().to_string();
        for s in registry() {
            assert!(e.contains(s.name), "{e}");
        }
    }

    #[test]
    fn file_releases_are_the_newest_of_each_generation() {
        let rel = |n: &str| find(n).unwrap().file_release;
        assert_eq!(rel("genai-perf-0.0.13"), Some("0.0.16"));
        assert_eq!(rel("genai-perf-0.0.10"), Some("0.0.12"));
        assert_eq!(rel("genai-perf-0.0.4"), Some("0.0.9"));
        assert_eq!(rel("genai-perf-0.0.1"), Some("0.0.3"));
        assert_eq!(rel("aiperf-0.13"), None);
    }

    #[test]
    fn help_has_one_line_per_set_including_genai_perf_0_0_10() {
        let h = help_text();
        assert_eq!(h.lines().count(), 7);
        assert!(
            h.lines().any(|l| l.starts_with("genai-perf-0.0.10 ")),
            "{h}"
        );
        assert!(h.contains("GenAI-Perf 0.0.10–0.0.12"), "{h}");
    }

    #[test]
    fn goodput_is_parsed_per_set_and_names_the_flag() {
        let g = find("aiperf-0.13")
            .unwrap()
            .parse_goodput("time_to_first_token:100")
            .unwrap();
        let slos = g.aiperf_slos().unwrap();
        assert_eq!(slos.len(), 1);
        assert_eq!(slos[0].bound, 100.0);
        let g = find("genai-perf-0.0.13")
            .unwrap()
            .parse_goodput("time_to_first_token:5 output_token_throughput_per_user:7")
            .unwrap();
        assert_eq!(
            g,
            Goodput::GenaiPerf(vec![
                genai_perf::GoodputSlo {
                    metric: "time_to_first_token".into(),
                    value: 5.0
                },
                genai_perf::GoodputSlo {
                    metric: "output_token_throughput_per_user".into(),
                    value: 7.0
                },
            ])
        );
        assert!(g.aiperf_slos().is_err());
        let g = find("vllm-bench")
            .unwrap()
            .parse_goodput("ttft:100 e2el:2000")
            .unwrap();
        assert_eq!(
            g,
            Goodput::VllmBench(vllm_bench::Goodput {
                ttft_ms: Some(100.0),
                tpot_ms: None,
                e2el_ms: Some(2000.0),
            })
        );
        for (set, spec) in [
            ("aiperf-0.13", "ttft:5"),
            ("genai-perf-0.0.4", "ttft"),
            ("mlperf-loadgen", "ttft:5"),
        ] {
            let e = find(set).unwrap().parse_goodput(spec).unwrap_err();
            assert!(e.to_string().starts_with("--goodput"), "{set}: {e}");
        }
    }

    #[test]
    fn a_goodput_read_for_one_set_is_refused_by_another() {
        let ev = Evidence {
            header: header(),
            records: Vec::new(),
            phases: Vec::new(),
            end: None,
        };
        let g = Goodput::VllmBench(vllm_bench::Goodput::default());
        let e = find("mlperf-loadgen")
            .unwrap()
            .score(&ev, Phase::Profiling, &|_| 0, &g, 0.95)
            .unwrap_err();
        assert!(e.to_string().contains("mlperf-loadgen"), "{e}");
    }
}
