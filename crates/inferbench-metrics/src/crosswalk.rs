//! The crosswalk: each metric of a legacy definition set next to its counterpart under
//! another set, both values, the difference, and the evidence from the records that decides
//! whether the two numbers mean the same thing. A mapping whose evidence fails is marked
//! not comparable, with the reason. Documented in `docs/crosswalk.md`.

use inferbench_core::Evidence;
use inferbench_core::record::{Phase, Record};
use inferbench_core::summary::Summary;
use serde::Serialize;

/// What the records say about the response shapes (profiling records without errors).
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct EvidenceFacts {
    pub records: u64,
    /// Records that had any text in a separate reasoning field.
    pub reasoning_separate: u64,
    /// Records whose content holds `<think>` or `</think>`.
    pub think_in_content: u64,
    /// Content events, and those carrying more than one token.
    pub content_events: u64,
    pub multi_token_events: u64,
    /// Records with a server `usage` object.
    pub with_usage: u64,
    /// Records with usage whose `completion_tokens` equals the client's count (output +
    /// reasoning).
    pub usage_agrees: u64,
    /// Records that asked for an output length, and those that got exactly it.
    pub with_requested_osl: u64,
    pub osl_as_requested: u64,
    /// Records whose first data event carried no text (role-only).
    pub role_only_first: u64,
    /// Records with an event after the last content (a usage chunk, `[DONE]`) later than
    /// 1 ms after it: the latencies that end at the last content and at the last response
    /// differ for them.
    pub tail_after_content: u64,
}

impl EvidenceFacts {
    /// The facts as the one plain-text sentence the `crosswalk` command and the HTML report
    /// print under the table (the report escapes it for HTML).
    pub fn sentence(&self) -> String {
        format!(
            "Evidence ({} successful requests): reasoning in a separate field {}, <think> in content {}, multi-token content events {} of {}, usage present {} (agrees with the client count {}), OSL as requested {} of {}, role-only first event {}.",
            self.records,
            self.reasoning_separate,
            self.think_in_content,
            self.multi_token_events,
            self.content_events,
            self.with_usage,
            self.usage_agrees,
            self.osl_as_requested,
            self.with_requested_osl,
            self.role_only_first
        )
    }
}

/// One row of the crosswalk.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct Mapping {
    pub from_metric: String,
    pub to_metric: String,
    /// `avg`, `p50`, `p99` or `value` (a run-level number).
    pub stat: String,
    pub unit: String,
    pub from_value: Option<f64>,
    pub to_value: Option<f64>,
    /// to − from, and relative to from (%).
    pub difference: Option<f64>,
    pub difference_pct: Option<f64>,
    pub comparable: bool,
    /// Why not comparable (empty when comparable).
    pub reasons: Vec<String>,
    /// What the mapping assumes, always shown.
    pub conditions: Vec<String>,
}

#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct Crosswalk {
    pub from: String,
    pub to: String,
    pub facts: EvidenceFacts,
    pub mappings: Vec<Mapping>,
}

/// Which check a mapping needs.
#[derive(Clone, Copy, Debug, PartialEq)]
enum Check {
    /// Both sets must see reasoning the same way: fails when reasoning is in a separate
    /// field and the mapping does not switch to the content-only counterpart.
    NoSeparateReasoning,
    /// No `<think>` in content (both then time and count reasoning as output).
    NoThinkInContent,
    /// Client and server token counts agree (token metrics rest on the tokenizer).
    UsageAgrees,
    /// The latency end points agree (no late usage or `[DONE]` after the last content).
    SameLatencyEnd,
    /// Every request was kept (GenAI-Perf's throughput numerator counts skipped ones).
    NoSkippedRequests,
}

struct Rule {
    from: &'static str,
    /// Counterpart when reasoning is not separate, and when it is (None: the same).
    to: &'static str,
    to_with_reasoning: Option<&'static str>,
    checks: &'static [Check],
    note: &'static str,
}

/// GenAI-Perf (any version) → AIPerf 0.13.
const GP_TO_AIPERF: &[Rule] = &[
    Rule {
        from: "time_to_first_token",
        to: "time_to_first_token",
        to_with_reasoning: Some("time_to_first_output_token"),
        checks: &[Check::NoThinkInContent],
        note: "GenAI-Perf ignores reasoning_content, so its TTFT is AIPerf's time to first output token when reasoning is a separate field",
    },
    Rule {
        from: "time_to_second_token",
        to: "time_to_second_token",
        to_with_reasoning: None,
        checks: &[Check::NoSeparateReasoning, Check::NoThinkInContent],
        note: "both: the gap from the first to the second response with text",
    },
    Rule {
        from: "request_latency",
        to: "request_latency",
        to_with_reasoning: None,
        checks: &[Check::SameLatencyEnd],
        note: "GenAI-Perf ends at the last non-empty response, AIPerf at the last response",
    },
    Rule {
        from: "inter_token_latency",
        to: "inter_token_latency",
        to_with_reasoning: None,
        checks: &[
            Check::NoSeparateReasoning,
            Check::SameLatencyEnd,
            Check::UsageAgrees,
        ],
        note: "both per request, (latency − TTFT)/(OSL − 1), averaged over requests (not a chunk-gap distribution); GenAI-Perf rounds each to whole ns",
    },
    Rule {
        from: "output_token_throughput_per_user",
        to: "output_token_throughput_per_user",
        to_with_reasoning: None,
        checks: &[Check::NoSeparateReasoning, Check::SameLatencyEnd],
        note: "1 / ITL per request",
    },
    Rule {
        from: "output_sequence_length",
        to: "output_sequence_length",
        to_with_reasoning: Some("output_token_count"),
        checks: &[Check::UsageAgrees, Check::NoThinkInContent],
        note: "GenAI-Perf's OSL excludes reasoning; AIPerf's includes it (its output_token_count does not)",
    },
    Rule {
        from: "input_sequence_length",
        to: "input_sequence_length",
        to_with_reasoning: None,
        checks: &[],
        note: "both: the message texts joined by a space, without a chat template",
    },
    Rule {
        from: "output_token_throughput",
        to: "output_token_throughput",
        to_with_reasoning: None,
        checks: &[Check::NoSeparateReasoning, Check::UsageAgrees],
        note: "sum of OSL over each tool's own duration: GenAI-Perf from the first request start to the last content; AIPerf over its profiling window",
    },
    Rule {
        from: "request_throughput",
        to: "request_throughput",
        to_with_reasoning: None,
        checks: &[Check::NoSkippedRequests],
        note: "GenAI-Perf's numerator counts every exported request, skipped ones included",
    },
    Rule {
        from: "request_count",
        to: "request_count",
        to_with_reasoning: None,
        checks: &[Check::NoSkippedRequests],
        note: "requests kept for the metrics",
    },
];

/// GenAI-Perf → vLLM's benchmark: GenAI-Perf's per-request ITL is vLLM's TPOT, not its
/// pooled chunk-gap ITL.
const GP_TO_VLLM: &[Rule] = &[
    Rule {
        from: "time_to_first_token",
        to: "ttft",
        to_with_reasoning: None,
        checks: &[Check::NoSeparateReasoning, Check::NoThinkInContent],
        note: "vLLM times the first chunk with any text",
    },
    Rule {
        from: "inter_token_latency",
        to: "tpot",
        to_with_reasoning: None,
        checks: &[Check::NoSeparateReasoning, Check::UsageAgrees],
        note: "both per request, (latency − TTFT)/(OSL − 1); vLLM's itl is a pooled chunk-gap distribution and is not the counterpart",
    },
    Rule {
        from: "request_latency",
        to: "e2el",
        to_with_reasoning: None,
        checks: &[Check::SameLatencyEnd],
        note: "end-to-end latency",
    },
    Rule {
        from: "output_token_throughput",
        to: "output_throughput",
        to_with_reasoning: None,
        checks: &[Check::NoSeparateReasoning, Check::UsageAgrees],
        note: "each over its own benchmark duration",
    },
    Rule {
        from: "request_throughput",
        to: "request_throughput",
        to_with_reasoning: None,
        checks: &[Check::NoSkippedRequests],
        note: "completed requests per second",
    },
];

/// AIPerf 0.13 → GenAI-Perf: the reverse of [`GP_TO_AIPERF`].
fn rules(from: &str, to: &str) -> Option<(Vec<Rule>, bool)> {
    let gp = |s: &str| s.starts_with("genai-perf-");
    if gp(from) && to == "aiperf-0.13" {
        return Some((copy(GP_TO_AIPERF), false));
    }
    if from == "aiperf-0.13" && gp(to) {
        return Some((copy(GP_TO_AIPERF), true));
    }
    if gp(from) && to == "vllm-bench" {
        return Some((copy(GP_TO_VLLM), false));
    }
    if gp(from) && gp(to) {
        // Between GenAI-Perf versions the names are the same; what differs is the rules.
        let same: Vec<Rule> = GP_TO_AIPERF
            .iter()
            .map(|r| Rule {
                from: r.from,
                to: r.from,
                to_with_reasoning: None,
                checks: &[],
                note: "the same metric under another release's rules",
            })
            .collect();
        return Some((same, false));
    }
    None
}

fn copy(r: &[Rule]) -> Vec<Rule> {
    r.iter()
        .map(|r| Rule {
            from: r.from,
            to: r.to,
            to_with_reasoning: r.to_with_reasoning,
            checks: r.checks,
            note: r.note,
        })
        .collect()
}

/// The pairs of definition sets a crosswalk is defined for.
pub const PAIRS: &[&str] = &[
    "genai-perf-* → aiperf-0.13",
    "aiperf-0.13 → genai-perf-*",
    "genai-perf-* → vllm-bench",
    "genai-perf-* → genai-perf-*",
];

/// Facts from the profiling records. `count` is the run's tokenizer.
pub fn facts(evidence: &Evidence, count: &dyn Fn(&str) -> u64) -> EvidenceFacts {
    let mut f = EvidenceFacts {
        records: 0,
        reasoning_separate: 0,
        think_in_content: 0,
        content_events: 0,
        multi_token_events: 0,
        with_usage: 0,
        usage_agrees: 0,
        with_requested_osl: 0,
        osl_as_requested: 0,
        role_only_first: 0,
        tail_after_content: 0,
    };
    for r in evidence
        .records_of(Phase::Profiling)
        .filter(|r| !r.is_error())
    {
        f.records += 1;
        record_facts(r, count, &mut f);
    }
    f
}

fn record_facts(r: &Record, count: &dyn Fn(&str) -> u64, f: &mut EvidenceFacts) {
    let mut content = String::new();
    let mut reasoning = false;
    for e in &r.events {
        if e.reasoning.as_deref().is_some_and(|s| !s.is_empty()) {
            reasoning = true;
        }
        let out: String = [e.content.as_deref(), e.tool.as_deref()]
            .into_iter()
            .flatten()
            .collect();
        if !out.is_empty() {
            f.content_events += 1;
            if count(&out) > 1 {
                f.multi_token_events += 1;
            }
            content.push_str(&out);
        }
    }
    f.reasoning_separate += u64::from(reasoning);
    f.think_in_content += u64::from(content.contains("<think>") || content.contains("</think>"));
    let client = r.tokens.output.unwrap_or(0) + r.tokens.reasoning.unwrap_or(0);
    if let Some(u) = r.last_usage() {
        f.with_usage += 1;
        if u.get("completion_tokens").and_then(|v| v.as_u64()) == Some(client) {
            f.usage_agrees += 1;
        }
    }
    if let Some(want) = r.requested_output_tokens {
        f.with_requested_osl += 1;
        f.osl_as_requested += u64::from(client == want);
    }
    if let Some(first) = r
        .events
        .iter()
        .find(|e| e.kind() == inferbench_core::EventKind::Data)
        && !first.has_text()
        && first.usage.is_none()
    {
        f.role_only_first += 1;
    }
    if let Some(last) = r.events.iter().rev().find(|e| e.has_text())
        && r.end_ns > last.t_ns + 1_000_000
    {
        f.tail_after_content += 1;
    }
}

fn check(c: Check, f: &EvidenceFacts, skipped: u64) -> Option<String> {
    let pct = |n: u64| 100.0 * n as f64 / f.records.max(1) as f64;
    match c {
        Check::NoSeparateReasoning if f.reasoning_separate > 0 => Some(format!(
            "reasoning in a separate field ({:.0} % of requests): counted by one set only",
            pct(f.reasoning_separate)
        )),
        Check::NoThinkInContent if f.think_in_content > 0 => Some(format!(
            "<think> text is embedded in the content of {:.0} % of requests: it is timed and counted as output; split it with --reasoning-tags think before comparing",
            pct(f.think_in_content)
        )),
        Check::UsageAgrees if f.with_usage > 0 && f.usage_agrees < f.with_usage => Some(format!(
            "the server's completion_tokens differ from the client's count in {} of {} requests: token counts rest on the tokenizer",
            f.with_usage - f.usage_agrees,
            f.with_usage
        )),
        Check::SameLatencyEnd
            if f.tail_after_content > 0 && f.tail_after_content * 10 > f.records =>
        {
            Some(format!(
                "in {:.0} % of requests a response arrived more than 1 ms after the last content (a usage chunk or [DONE]): latencies that end at the last content and at the last response differ",
                pct(f.tail_after_content)
            ))
        }
        Check::NoSkippedRequests if skipped > 0 => Some(format!(
            "{skipped} requests had no text and were skipped by GenAI-Perf but count in its throughput numerator"
        )),
        _ => None,
    }
}

/// The crosswalk between two summaries of the same records.
pub fn crosswalk(
    from_set: &str,
    from: &Summary,
    to_set: &str,
    to: &Summary,
    facts: EvidenceFacts,
    skipped_requests: u64,
) -> Result<Crosswalk, String> {
    let (rules, reverse) = rules(from_set, to_set).ok_or_else(|| {
        format!(
            "no crosswalk from {from_set} to {to_set} (defined: {})",
            PAIRS.join(", ")
        )
    })?;
    let reasoning = facts.reasoning_separate > 0;
    let mut mappings = Vec::new();
    for r in &rules {
        let counterpart = match (reasoning, r.to_with_reasoning) {
            (true, Some(alt)) => alt,
            _ => r.to,
        };
        let (from_tag, to_tag) = if reverse {
            (counterpart, r.from)
        } else {
            (r.from, counterpart)
        };
        let (Some(a), Some(b)) = (from.get(from_tag), to.get(to_tag)) else {
            continue;
        };
        let mut reasons: Vec<String> = r
            .checks
            .iter()
            .filter(|c| {
                !(reasoning && r.to_with_reasoning.is_some() && **c == Check::NoSeparateReasoning)
            })
            .filter_map(|c| check(*c, &facts, skipped_requests))
            .collect();
        if a.unit != b.unit {
            reasons.push(format!("units differ: {} and {}", a.unit, b.unit));
        }
        let mut conditions = vec![r.note.to_string()];
        if reasoning && r.to_with_reasoning.is_some() {
            conditions.push(format!(
                "reasoning is a separate field here, so the counterpart is {counterpart}"
            ));
        }
        let stats: Vec<(&str, Option<f64>, Option<f64>)> = match (a.stats(), b.stats()) {
            (Some(x), Some(y)) => ["avg", "p50", "p99"]
                .iter()
                .map(|s| (*s, x.get(s), y.get(s)))
                .collect(),
            _ => vec![("value", a.avg(), b.avg())],
        };
        for (stat, fv, tv) in stats {
            let difference = fv.zip(tv).map(|(f, t)| t - f);
            let difference_pct = fv
                .zip(difference)
                .and_then(|(f, d)| (f != 0.0).then(|| 100.0 * d / f));
            mappings.push(Mapping {
                from_metric: from_tag.to_string(),
                to_metric: to_tag.to_string(),
                stat: stat.to_string(),
                unit: a.unit.clone(),
                from_value: fv,
                to_value: tv,
                difference,
                difference_pct,
                comparable: reasons.is_empty(),
                reasons: reasons.clone(),
                conditions: conditions.clone(),
            });
        }
    }
    Ok(Crosswalk {
        from: from_set.to_string(),
        to: to_set.to_string(),
        facts,
        mappings,
    })
}

/// The crosswalk as Markdown, for an acceptance packet.
pub fn markdown(c: &Crosswalk) -> String {
    use std::fmt::Write;
    let f = |v: Option<f64>| v.map_or("–".to_string(), |v| format!("{v:.4}"));
    let mut o = String::new();
    let _ = writeln!(o, "# Crosswalk: {} → {}\n", c.from, c.to);
    let x = &c.facts;
    let _ = writeln!(
        o,
        "Evidence from {} successful profiling requests:\n",
        x.records
    );
    let _ = writeln!(
        o,
        "- reasoning in a separate field: {}\n- `<think>` in content: {}\n- content events with more than one token: {} of {}\n- server usage present: {}; agrees with the client count: {}\n- output length as requested: {} of {}\n- role-only first event: {}\n- a response more than 1 ms after the last content: {}\n",
        x.reasoning_separate,
        x.think_in_content,
        x.multi_token_events,
        x.content_events,
        x.with_usage,
        x.usage_agrees,
        x.osl_as_requested,
        x.with_requested_osl,
        x.role_only_first,
        x.tail_after_content
    );
    let _ = writeln!(
        o,
        "| {} | {} | stat | unit | {} | {} | difference | % | comparable | why not / conditions |",
        c.from, c.to, c.from, c.to
    );
    let _ = writeln!(o, "|---|---|---|---|---:|---:|---:|---:|---|---|");
    for m in &c.mappings {
        let why = if m.comparable {
            m.conditions.join("; ")
        } else {
            m.reasons.join("; ")
        };
        let _ = writeln!(
            o,
            "| {} | {} | {} | {} | {} | {} | {} | {} | {} | {} |",
            m.from_metric,
            m.to_metric,
            m.stat,
            m.unit,
            f(m.from_value),
            f(m.to_value),
            f(m.difference),
            m.difference_pct
                .map_or("–".to_string(), |p| format!("{p:+.2}")),
            if m.comparable { "yes" } else { "**no**" },
            why.replace('|', "\\|")
        );
    }
    o
}

#[cfg(test)]
mod tests {
    use super::*;
    use inferbench_core::summary::{MetricResult, MetricValue, Stats};
    use inferbench_core::{Event, EvidenceHeader, TokenCounts};

    #[test]
    fn the_evidence_sentence_puts_each_fact_in_its_place() {
        // Distinct numbers, so that a swapped argument shows.
        let f = EvidenceFacts {
            records: 1,
            reasoning_separate: 2,
            think_in_content: 3,
            content_events: 4,
            multi_token_events: 5,
            with_usage: 6,
            usage_agrees: 7,
            with_requested_osl: 8,
            osl_as_requested: 9,
            role_only_first: 10,
            tail_after_content: 11,
        };
        assert_eq!(
            f.sentence(),
            "Evidence (1 successful requests): reasoning in a separate field 2, <think> in content 3, multi-token content events 5 of 4, usage present 6 (agrees with the client count 7), OSL as requested 9 of 8, role-only first event 10."
        );
    }

    fn dist(tag: &str, avg: f64) -> MetricResult {
        MetricResult {
            tag: tag.into(),
            header: tag.into(),
            unit: "ms".into(),
            value: MetricValue::Distribution {
                stats: Stats {
                    avg: Some(avg),
                    p50: Some(avg),
                    p99: Some(avg),
                    count: 1,
                    ..Default::default()
                },
            },
        }
    }

    fn summary(set: &str, m: Vec<MetricResult>) -> Summary {
        Summary {
            definitions: set.into(),
            metrics: m,
            error_summary: vec![],
        }
    }

    fn evidence(records: Vec<Record>) -> Evidence {
        Evidence {
            header: EvidenceHeader {
                schema_version: 1,
                tool: "t".into(),
                tool_version: "0".into(),
                anchor_unix_ns: 0,
                benchmark_id: "b".into(),
                endpoint_type: "chat".into(),
                streaming: true,
                tokenizer: "w".into(),
                use_server_token_count: false,
                per_chunk_usage: false,
            },
            records,
            phases: vec![],
            end: None,
        }
    }

    fn rec(reasoning: bool) -> Record {
        let mut events = vec![];
        if reasoning {
            events.push(Event {
                t_ns: 10,
                reasoning: Some("r".into()),
                ..Default::default()
            });
        }
        events.push(Event {
            t_ns: 20,
            content: Some("a b".into()),
            ..Default::default()
        });
        events.push(Event {
            t_ns: 20,
            usage: Some(serde_json::json!({"completion_tokens": 2 + u64::from(reasoning)})),
            ..Default::default()
        });
        Record {
            end_ns: 20,
            streaming: true,
            tokens: TokenCounts {
                input: Some(1),
                output: Some(2),
                reasoning: reasoning.then_some(1),
            },
            events,
            ..Default::default()
        }
    }

    fn words(s: &str) -> u64 {
        s.split_whitespace().count() as u64
    }

    #[test]
    fn reasoning_switches_ttft_to_ttfo_and_breaks_itl() {
        let ev = evidence(vec![rec(true), rec(true)]);
        let fx = facts(&ev, &words);
        assert_eq!(fx.records, 2);
        assert_eq!(fx.reasoning_separate, 2);
        assert_eq!(fx.multi_token_events, 2);
        assert_eq!(fx.usage_agrees, 2);
        let gp = summary(
            "genai-perf-0.0.13",
            vec![
                dist("time_to_first_token", 30.0),
                dist("inter_token_latency", 5.0),
            ],
        );
        let ai = summary(
            "aiperf-0.13",
            vec![
                dist("time_to_first_token", 10.0),
                dist("time_to_first_output_token", 30.5),
                dist("inter_token_latency", 4.0),
            ],
        );
        let c = crosswalk("genai-perf-0.0.13", &gp, "aiperf-0.13", &ai, fx, 0).unwrap();
        let ttft = c
            .mappings
            .iter()
            .find(|m| m.from_metric == "time_to_first_token" && m.stat == "avg")
            .unwrap();
        assert_eq!(ttft.to_metric, "time_to_first_output_token");
        assert!(ttft.comparable);
        assert_eq!(ttft.difference, Some(0.5));
        assert!((ttft.difference_pct.unwrap() - 100.0 * 0.5 / 30.0).abs() < 1e-12);
        let itl = c
            .mappings
            .iter()
            .find(|m| m.from_metric == "inter_token_latency")
            .unwrap();
        assert!(!itl.comparable);
        assert!(
            itl.reasons[0].contains("separate field"),
            "{:?}",
            itl.reasons
        );
        let md = markdown(&c);
        assert!(md.contains("| time_to_first_token | time_to_first_output_token | avg | ms |"));
    }

    #[test]
    fn plain_streams_map_name_to_name_and_unknown_pairs_are_errors() {
        let ev = evidence(vec![rec(false)]);
        let fx = facts(&ev, &words);
        let gp = summary("genai-perf-0.0.13", vec![dist("time_to_first_token", 30.0)]);
        let ai = summary("aiperf-0.13", vec![dist("time_to_first_token", 31.0)]);
        let c = crosswalk("genai-perf-0.0.13", &gp, "aiperf-0.13", &ai, fx.clone(), 0).unwrap();
        assert_eq!(c.mappings[0].to_metric, "time_to_first_token");
        assert!(c.mappings.iter().all(|m| m.comparable));
        let e = crosswalk("vllm-bench", &gp, "mlperf-loadgen", &ai, fx, 0).unwrap_err();
        assert!(e.contains("no crosswalk from vllm-bench"), "{e}");
    }
}
