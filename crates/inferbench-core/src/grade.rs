//! Per-metric grades of a run (reference ledger-gate.md §5): whether a number may gate, may
//! be compared only through a bridge, or is context only, and which missing field says so.
//! The grading rules live in `inferbench_run::grade`; these are the types it returns and the
//! ledger stores.

use serde::{Deserialize, Serialize};

use crate::identity::{Pin, Provenance};

pub const GRADE_FILE: &str = "inferbench_grade.json";
pub const GRADE_SCHEMA: &str = "inferbench.grade/1";

/// Best first: a metric's tier is the worst any rule gives it.
#[derive(Serialize, Deserialize, Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
#[serde(rename_all = "snake_case")]
pub enum Tier {
    /// All contract pins present with digests, raw per-request evidence present, and
    /// re-scoring reproduces the stored values: may gate.
    Reference,
    /// Pins present but the harness differs from the target, or summaries only, or a pin held
    /// by declaration alone: compare through a bridge, or as a point with no interval.
    Comparable,
    /// A pin the metric depends on is missing: context only.
    Insufficient,
    /// The number cannot be interpreted (unknown unit or denominator, no error accounting).
    Unusable,
}

impl Tier {
    pub fn as_str(self) -> &'static str {
        match self {
            Tier::Reference => "reference",
            Tier::Comparable => "comparable",
            Tier::Insufficient => "insufficient",
            Tier::Unusable => "unusable",
        }
    }
}

/// One rule that lowered a metric, naming the field that caused it.
#[derive(Serialize, Deserialize, Clone, Debug, PartialEq, Eq)]
pub struct Downgrade {
    /// A catalogue pin name, or an evidence item (`per_request_records`, `error_counts`, …).
    pub field: String,
    pub tier: Tier,
    pub reason: String,
}

#[derive(Serialize, Deserialize, Clone, Debug, PartialEq, Eq)]
pub struct MetricGrade {
    /// The metric's tag under the graded definition set.
    pub metric: String,
    pub tier: Tier,
    /// Every rule that applied, worst first; empty for `reference`.
    pub downgrades: Vec<Downgrade>,
}

impl MetricGrade {
    /// A metric with the downgrades that apply to it: its tier is the worst of them.
    pub fn new(metric: &str, mut downgrades: Vec<Downgrade>) -> MetricGrade {
        downgrades.sort_by(|a, b| b.tier.cmp(&a.tier).then_with(|| a.field.cmp(&b.field)));
        downgrades.dedup();
        MetricGrade {
            metric: metric.to_string(),
            tier: downgrades.first().map_or(Tier::Reference, |d| d.tier),
            downgrades,
        }
    }
}

#[derive(Serialize, Deserialize, Clone, Debug, PartialEq)]
pub struct Grade {
    pub schema: String,
    /// The definition set the metrics were named and graded under.
    pub definition_set: String,
    /// The worst tier over all metrics.
    pub overall: Tier,
    pub metrics: Vec<MetricGrade>,
    /// Run-wide findings (e.g. `client_bound_suspect`, `image_tag_movable`).
    pub flags: Vec<String>,
}

impl Grade {
    pub fn new(definition_set: &str, metrics: Vec<MetricGrade>, flags: Vec<String>) -> Grade {
        Grade {
            schema: GRADE_SCHEMA.into(),
            definition_set: definition_set.into(),
            overall: metrics
                .iter()
                .map(|m| m.tier)
                .max()
                .unwrap_or(Tier::Reference),
            metrics,
            flags,
        }
    }

    pub fn metric(&self, tag: &str) -> Option<&MetricGrade> {
        self.metrics.iter().find(|m| m.metric == tag)
    }
}

/// The downgrade a pin causes, if any, for a metric that depends on it (`missing` is the tier
/// when the pin is absent). A declared content pin ([`crate::identity::held_by_content`])
/// without a digest lifts `insufficient` to `comparable` and never to `reference`; a declared
/// setting, or a measured, recovered or digest-held pin, causes nothing.
pub fn pin_downgrade(name: &str, pin: Option<&Pin>, missing: Tier, why: &str) -> Option<Downgrade> {
    match pin {
        None => Some(Downgrade {
            field: name.into(),
            tier: missing,
            reason: format!("{name} unknown: {why}"),
        }),
        Some(p)
            if matches!(p.provenance, Provenance::Declared { .. })
                && crate::identity::held_by_content(name)
                && !p.is_digest() =>
        {
            Some(Downgrade {
                field: name.into(),
                tier: missing.min(Tier::Comparable),
                reason: format!("{name} declared without a digest"),
            })
        }
        Some(_) => None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn d(field: &str, tier: Tier) -> Downgrade {
        Downgrade {
            field: field.into(),
            tier,
            reason: String::new(),
        }
    }

    #[test]
    fn a_metric_takes_its_worst_downgrade() {
        let m = MetricGrade::new(
            "ttft",
            vec![d("a", Tier::Comparable), d("b", Tier::Insufficient)],
        );
        assert_eq!(m.tier, Tier::Insufficient);
        assert_eq!(m.downgrades[0].field, "b");
        assert_eq!(MetricGrade::new("x", vec![]).tier, Tier::Reference);
        let g = Grade::new(
            "aiperf-0.13",
            vec![m, MetricGrade::new("x", vec![])],
            vec![],
        );
        assert_eq!(g.overall, Tier::Insufficient);
    }

    #[test]
    fn a_declaration_lifts_to_comparable_and_a_digest_to_nothing() {
        let declared = |v| Pin {
            value: v,
            provenance: Provenance::Declared {
                route: "--declare".into(),
            },
        };
        let missing =
            pin_downgrade("model_revision", None, Tier::Insufficient, "not recorded").unwrap();
        assert_eq!(missing.tier, Tier::Insufficient);
        assert_eq!(missing.reason, "model_revision unknown: not recorded");
        let lifted = pin_downgrade(
            "model_revision",
            Some(&declared(json!("main"))),
            Tier::Insufficient,
            "",
        );
        assert_eq!(lifted.unwrap().tier, Tier::Comparable);
        // A setting declared is evidence enough.
        assert_eq!(
            pin_downgrade(
                "precision",
                Some(&declared(json!("fp8"))),
                Tier::Insufficient,
                ""
            ),
            None
        );
        // A revision pinned by its full commit id is held by content.
        let commit = "0123456789abcdef0123456789abcdef01234567";
        assert_eq!(
            pin_downgrade(
                "model_revision",
                Some(&declared(json!(commit))),
                Tier::Insufficient,
                ""
            ),
            None
        );
        let digest = format!("sha256:{}", "a".repeat(64));
        assert_eq!(
            pin_downgrade(
                "image_digest",
                Some(&declared(json!(digest))),
                Tier::Insufficient,
                ""
            ),
            None
        );
        let measured = Pin {
            value: json!(1),
            provenance: Provenance::Measured,
        };
        assert_eq!(
            pin_downgrade("random_seed", Some(&measured), Tier::Insufficient, ""),
            None
        );
    }
}
