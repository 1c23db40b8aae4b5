//! The grading rules (reference ledger-gate.md §5.2), applied mechanically: each metric tag
//! falls into a class, each row of the table names the classes it lowers and the field that
//! caused it. Pure functions of the identity and what the run directory holds, so that every
//! rule is tested on hand-built identities.

use inferbench_core::grade::{Downgrade, MetricGrade, Tier, pin_downgrade};
use inferbench_core::identity::{CATALOGUE, Identity, PinClass};

/// What a metric measures, as far as the rules care.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum Class {
    /// End-to-end request latency.
    RequestLatency,
    /// Time to first (or second) token.
    FirstToken,
    /// Inter-token latency, time per output token.
    InterToken,
    /// Token counts: ISL, OSL, usage, reasoning tokens.
    TokenCounts,
    /// Tokens per second.
    TokenThroughput,
    /// Requests per second.
    RequestThroughput,
    Goodput,
    /// Request, error and mismatch counts.
    Counts,
    /// Verdicts and context (validity flags, durations): only the rules that touch every
    /// metric apply.
    Other,
}

impl Class {
    pub fn as_str(self) -> &'static str {
        match self {
            Class::RequestLatency => "request_latency",
            Class::FirstToken => "first_token",
            Class::InterToken => "inter_token",
            Class::TokenCounts => "token_counts",
            Class::TokenThroughput => "token_throughput",
            Class::RequestThroughput => "request_throughput",
            Class::Goodput => "goodput",
            Class::Counts => "counts",
            Class::Other => "other",
        }
    }
}

/// The class of a metric tag, under any definition set in the registry (the names differ
/// by set: `ttft`, `time_to_first_token`, `tpot`, `completed_samples_per_second`, …).
pub fn classify(tag: &str) -> Class {
    let has = |s: &str| tag.contains(s);
    // AIPerf's HTTP phases: times are transport latencies (the client's own timing, so the
    // latency rules apply), sizes and the reuse flag are counts.
    if let Some(phase) = tag.strip_prefix("http_req_") {
        return if phase.starts_with("data_")
            || phase.starts_with("chunks_")
            || phase == "connection_reused"
        {
            Class::Counts
        } else {
            Class::RequestLatency
        };
    }
    if has("goodput") || has("good_request") {
        Class::Goodput
    } else if has("throughput") || has("per_second") || has("per_s") {
        if has("token") {
            Class::TokenThroughput
        } else {
            Class::RequestThroughput
        }
    } else if has("time_to_first") || has("time_to_second") || has("ttft") || has("ttst") {
        Class::FirstToken
    } else if has("inter_token")
        || has("inter_chunk")
        || has("itl")
        || has("tpot")
        || has("time_per_output")
    {
        Class::InterToken
    } else if has("latency") || has("e2el") {
        Class::RequestLatency
    } else if has("token") || has("sequence_length") || has("usage") || has("isl") || has("osl") {
        Class::TokenCounts
    } else if has("count")
        || has("error")
        || has("samples_")
        || tag == "completed"
        || tag == "failed"
    {
        Class::Counts
    } else {
        Class::Other
    }
}

use Class::*;

const ALL: &[Class] = &[
    RequestLatency,
    FirstToken,
    InterToken,
    TokenCounts,
    TokenThroughput,
    RequestThroughput,
    Goodput,
    Counts,
    Other,
];
const TOKEN_BASED: &[Class] = &[TokenCounts, TokenThroughput, InterToken];
const RATES: &[Class] = &[TokenThroughput, RequestThroughput, Goodput];
const LATENCIES: &[Class] = &[RequestLatency, FirstToken, InterToken];

/// Concurrency at or above which a client without resource evidence may be the bottleneck.
pub const HIGH_CONCURRENCY: u64 = 64;

/// What the run directory holds, beside the identity.
#[derive(Clone, Debug)]
pub struct Evidence {
    /// Raw per-request records are present (not a summary only).
    pub per_request_records: bool,
    /// Failed requests are accounted for (a rate's denominator is known).
    pub error_counts: bool,
    /// Re-scoring under the native set: None when it could not be checked (with why),
    /// Some(differences) otherwise.
    pub rescoring: Result<Vec<String>, String>,
    /// Reasoning text was seen in the records (the model reasons).
    pub reasoning_seen: bool,
    /// The client's own CPU and memory were sampled during the run.
    pub client_resources: bool,
}

/// One row of §5.2: a field, the tier when it is missing, the classes it lowers.
struct Row {
    fields: &'static [&'static str],
    tier: Tier,
    classes: &'static [Class],
    why: &'static str,
}

const ROWS: &[Row] = &[
    Row {
        fields: &["workload_digest"],
        tier: Tier::Insufficient,
        classes: ALL,
        why: "the workload is unproven (no frozen request bodies)",
    },
    Row {
        fields: &["chat_template_digest"],
        tier: Tier::Insufficient,
        classes: &[TokenCounts, FirstToken],
        why: "the rendered control tokens are unknown",
    },
    Row {
        fields: &["tokenizer_digest", "tokenizer_revision"],
        tier: Tier::Insufficient,
        classes: TOKEN_BASED,
        why: "token counts depend on the tokenizer",
    },
    Row {
        fields: &["token_count_source"],
        tier: Tier::Insufficient,
        classes: TOKEN_BASED,
        why: "server usage and a local tokenizer count differently",
    },
    Row {
        fields: &["model_revision"],
        tier: Tier::Insufficient,
        classes: ALL,
        why: "the weights are unknown",
    },
    Row {
        fields: &["precision"],
        tier: Tier::Insufficient,
        classes: ALL,
        why: "the numeric precision is unknown",
    },
    Row {
        fields: &["runtime_args"],
        tier: Tier::Insufficient,
        classes: ALL,
        why: "the server's runtime arguments are unknown",
    },
    Row {
        fields: &["image_digest"],
        tier: Tier::Insufficient,
        classes: ALL,
        why: "the server image is not held by digest",
    },
    Row {
        fields: &["streaming"],
        tier: Tier::Insufficient,
        classes: &[FirstToken, InterToken],
        why: "first-token and inter-token times need streaming",
    },
    Row {
        fields: &["max_tokens"],
        tier: Tier::Insufficient,
        classes: &[TokenThroughput, RequestThroughput, TokenCounts],
        why: "output length controls decide throughput and OSL",
    },
    Row {
        fields: &["min_tokens"],
        tier: Tier::Insufficient,
        classes: &[TokenThroughput, RequestThroughput, TokenCounts],
        why: "output length controls decide throughput and OSL",
    },
    Row {
        fields: &["ignore_eos"],
        tier: Tier::Insufficient,
        classes: &[TokenThroughput, RequestThroughput, TokenCounts],
        why: "output length controls decide throughput and OSL",
    },
    Row {
        fields: &["warmup"],
        tier: Tier::Insufficient,
        classes: RATES,
        why: "the duration denominator is unknown",
    },
    Row {
        fields: &["stop_rule"],
        tier: Tier::Insufficient,
        classes: RATES,
        why: "the duration denominator is unknown",
    },
    Row {
        fields: &["stop_reason"],
        tier: Tier::Insufficient,
        classes: RATES,
        why: "the duration denominator is unknown",
    },
    Row {
        fields: &["arrival_policy"],
        tier: Tier::Insufficient,
        classes: ALL,
        why: "the load the numbers were measured under is unknown",
    },
];

fn down(field: &str, tier: Tier, reason: String) -> Downgrade {
    Downgrade {
        field: field.into(),
        tier,
        reason,
    }
}

/// Every downgrade of one class of metric.
pub fn downgrades(class: Class, id: &Identity, ev: &Evidence) -> Vec<Downgrade> {
    let mut out = Vec::new();
    let mut covered: Vec<&str> = Vec::new();
    for row in ROWS {
        covered.extend(row.fields);
        if !row.classes.contains(&class) {
            continue;
        }
        // The first field of a row that is known decides (either tokenizer pin will do).
        let pin = row.fields.iter().find_map(|f| id.get(f).map(|p| (*f, p)));
        let d = match pin {
            Some((f, p)) => pin_downgrade(f, Some(p), row.tier, row.why),
            None => pin_downgrade(row.fields[0], None, row.tier, row.why),
        };
        out.extend(d);
    }
    // The seed: without it a synthetic workload is unknown, unless the bodies survive.
    covered.push("random_seed");
    if id.get("random_seed").is_none() && id.get("workload_digest").is_none() {
        out.extend(pin_downgrade(
            "random_seed",
            None,
            Tier::Insufficient,
            "a synthetic workload cannot be regenerated",
        ));
    }
    // The harness version: ITL/TTST and token counts changed definitions across versions;
    // an end-to-end latency stays comparable.
    covered.push("harness");
    let harness_tier = match class {
        InterToken | TokenCounts => Tier::Insufficient,
        FirstToken | RequestLatency | Other => Tier::Comparable,
        _ => Tier::Comparable,
    };
    out.extend(pin_downgrade(
        "harness",
        id.get("harness"),
        harness_tier,
        "metric definitions changed across harness versions",
    ));
    covered.push("reasoning_accounting");
    if ev.reasoning_seen && [FirstToken, TokenCounts, TokenThroughput].contains(&class) {
        out.extend(pin_downgrade(
            "reasoning_accounting",
            id.get("reasoning_accounting"),
            Tier::Insufficient,
            "the model reasons and how its reasoning was counted is unknown",
        ));
    }
    // `reference` needs every contract pin: the ones no row names lower to comparable.
    for s in CATALOGUE.iter().filter(|s| s.class == PinClass::Contract) {
        if !covered.contains(&s.name) {
            out.extend(pin_downgrade(
                s.name,
                id.get(s.name),
                Tier::Comparable,
                "a reference needs every contract pin",
            ));
        }
    }
    if !ev.error_counts {
        if RATES.contains(&class) {
            out.push(down(
                "error_counts",
                Tier::Unusable,
                "failed requests are not accounted for: the rate's denominator is unknown".into(),
            ));
        } else if LATENCIES.contains(&class) {
            out.push(down(
                "error_counts",
                Tier::Insufficient,
                "failed requests are not accounted for: latencies of survivors only".into(),
            ));
        }
    }
    if !ev.per_request_records {
        out.push(down(
            "per_request_records",
            Tier::Comparable,
            "summary only: no interval, a point comparison at best".into(),
        ));
    }
    match &ev.rescoring {
        Ok(d) if d.is_empty() => {}
        Ok(d) => out.push(down(
            "rescoring",
            Tier::Comparable,
            format!(
                "re-scoring under the native set differs from the stored summary in {} values (first: {})",
                d.len(),
                d[0]
            ),
        )),
        Err(why) => out.push(down(
            "rescoring",
            Tier::Comparable,
            format!("re-scoring not verified: {why}"),
        )),
    }
    out
}

/// The run's concurrency, from its arrival policy (None when unknown or rate-driven
/// without a ceiling).
fn concurrency(id: &Identity) -> Option<u64> {
    id.get("arrival_policy")?.value.get("concurrency")?.as_u64()
}

/// Grades every tag; also returns the run-wide flags.
pub fn grade_tags(
    tags: &[String],
    id: &Identity,
    ev: &Evidence,
) -> (Vec<MetricGrade>, Vec<String>) {
    let metrics = tags
        .iter()
        .map(|t| MetricGrade::new(t, downgrades(classify(t), id, ev)))
        .collect();
    let mut flags: Vec<String> = id.flags.iter().map(|f| f.name.clone()).collect();
    if concurrency(id).is_some_and(|c| c >= HIGH_CONCURRENCY) && !ev.client_resources {
        flags.push("client_bound_suspect".into());
    }
    (metrics, flags)
}

#[cfg(test)]
mod tests;
