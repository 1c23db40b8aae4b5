//! `profile` flags: Several URLs and models (docs/routing.md), and their checks.

use clap::Args;
use inferbench_core::routing_plan::{ModelStrategy, RoutingPlan, UrlStrategy};

#[derive(Args, Debug, Clone, Default)]
pub struct RoutingArgs {
    /// How requests are spread over several --url: round_robin (AIPerf's only value; the
    /// default): session k goes to URL k mod N, a conversation's later turns stay on its URL.
    #[arg(long = "url-strategy")]
    pub url_strategy: Option<String>,
    /// Which model each turn names with several --model: round_robin (default), random or
    /// weighted, chosen when the workload is frozen, from the run seed.
    #[arg(long = "model-selection-strategy")]
    pub model_selection_strategy: Option<String>,
    /// Weights of the models for `--model-selection-strategy weighted`, in --model order,
    /// comma list summing to 1 (± 0.01, AIPerf's rule). Not an AIPerf flag (AIPerf takes the
    /// weights from its YAML config's models.items[].weight).
    #[arg(long = "model-weights", value_delimiter = ',')]
    pub model_weights: Vec<f64>,
}

/// The plan these flags give (every value checked; an error names the flag). The URL list
/// is filled in by the caller (see [`routing_plan_for`]).
pub fn routing_plan(a: &RoutingArgs) -> Result<RoutingPlan, String> {
    // AIPerf's enum rule: any case, `-` for `_`.
    let url_strategy = match a.url_strategy.as_deref() {
        None => UrlStrategy::RoundRobin,
        Some(s) if inferbench_core::py::enum_name(s) == "round_robin" => UrlStrategy::RoundRobin,
        Some(other) => {
            return Err(format!(
                "--url-strategy {other:?}: unknown strategy (valid: round_robin)"
            ));
        }
    };
    let model_strategy = match a.model_selection_strategy.as_deref() {
        None => ModelStrategy::RoundRobin,
        Some(s) => ModelStrategy::parse(s).ok_or_else(|| {
            format!(
                "--model-selection-strategy {s:?}: unknown strategy (valid: {})",
                ModelStrategy::NAMES.join(", ")
            )
        })?,
    };
    Ok(RoutingPlan {
        urls: Vec::new(),
        url_strategy,
        model_strategy,
        model_weights: a.model_weights.clone(),
    })
}

/// [`routing_plan`] with the run's URLs (normalized, without credentials) and models: the
/// weights are checked against the models.
pub fn routing_plan_for(
    a: &RoutingArgs,
    urls: Vec<String>,
    models: &[String],
) -> Result<RoutingPlan, String> {
    let mut plan = routing_plan(a)?;
    plan.urls = urls;
    let w = &plan.model_weights;
    match plan.model_strategy {
        ModelStrategy::Weighted => {
            if w.len() != models.len() {
                return Err(format!(
                    "--model-weights: {} weight(s) for {} model(s); give one per --model, in order",
                    w.len(),
                    models.len()
                ));
            }
            if let Some((i, x)) = w
                .iter()
                .enumerate()
                .find(|(_, x)| !(x.is_finite() && **x >= 0.0))
            {
                return Err(format!(
                    "--model-weights: weight #{} ({x}) must be a number ≥ 0",
                    i + 1
                ));
            }
            let total: f64 = w.iter().sum();
            if !(0.99..=1.01).contains(&total) {
                return Err(format!(
                    "--model-weights: the weights must sum to 1.0 (± 0.01), got {total}"
                ));
            }
        }
        _ if !w.is_empty() => {
            return Err(
                "--model-weights applies to --model-selection-strategy weighted".to_string(),
            );
        }
        _ => {}
    }
    Ok(plan)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn args(strategy: Option<&str>, weights: &[f64]) -> RoutingArgs {
        RoutingArgs {
            url_strategy: None,
            model_selection_strategy: strategy.map(str::to_string),
            model_weights: weights.to_vec(),
        }
    }

    fn models(n: usize) -> Vec<String> {
        (0..n).map(|i| format!("m{i}")).collect()
    }

    #[test]
    fn unknown_strategies_list_the_valid_ones() {
        let e = routing_plan(&args(Some("shuffle"), &[])).unwrap_err();
        assert!(e.contains("--model-selection-strategy \"shuffle\""), "{e}");
        assert!(e.contains("round_robin, random, weighted"), "{e}");
        let a = RoutingArgs {
            url_strategy: Some("least_loaded".into()),
            ..Default::default()
        };
        let e = routing_plan(&a).unwrap_err();
        assert!(
            e.contains("--url-strategy") && e.contains("valid: round_robin"),
            "{e}"
        );
    }

    #[test]
    fn weights_are_checked_against_the_models() {
        let m = models(2);
        assert!(routing_plan_for(&args(Some("weighted"), &[0.7, 0.3]), vec![], &m).is_ok());
        let e = routing_plan_for(&args(Some("weighted"), &[1.0]), vec![], &m).unwrap_err();
        assert!(e.contains("1 weight(s) for 2 model(s)"), "{e}");
        let e = routing_plan_for(&args(Some("weighted"), &[0.3, 0.3]), vec![], &m).unwrap_err();
        assert!(e.contains("sum to 1.0"), "{e}");
        let e = routing_plan_for(&args(Some("weighted"), &[1.2, -0.2]), vec![], &m).unwrap_err();
        assert!(e.contains("weight #2"), "{e}");
        let e = routing_plan_for(&args(Some("random"), &[0.5, 0.5]), vec![], &m).unwrap_err();
        assert!(e.contains("applies to"), "{e}");
    }
}
