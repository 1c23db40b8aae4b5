//! Several endpoints and several models: which request goes where (`--url` repeated, `--url-strategy`, `--model-selection-strategy`).
//! The rules are in docs/routing.md.

use serde::{Deserialize, Serialize};

/// `--url-strategy`: how requests are spread over several URLs. AIPerf 0.13 has one value.
#[derive(Serialize, Deserialize, Clone, Copy, Debug, PartialEq, Eq, Default)]
#[serde(rename_all = "snake_case")]
pub enum UrlStrategy {
    /// Session k of the run (in issue order, warmup included) goes to URL k mod N; the later
    /// turns of a conversation stay on its URL (AIPerf's credit issuer ticks at turn 0 only).
    #[default]
    RoundRobin,
}

/// `--model-selection-strategy`: which model each turn of the frozen workload names.
#[derive(Serialize, Deserialize, Clone, Copy, Debug, PartialEq, Eq, Default)]
#[serde(rename_all = "snake_case")]
pub enum ModelStrategy {
    /// Turn j of the workload (in workload order, all conversations' turns counted) names
    /// model j mod M.
    #[default]
    RoundRobin,
    /// Each turn draws a model uniformly from the `model-selection` generator.
    Random,
    /// Each turn draws a model with the probabilities `model_weights`, from the
    /// `model-selection` generator.
    Weighted,
}

impl ModelStrategy {
    pub const NAMES: [&'static str; 3] = ["round_robin", "random", "weighted"];

    /// By AIPerf's enum rule ([`crate::py::enum_name`]).
    pub fn parse(s: &str) -> Option<ModelStrategy> {
        match crate::py::enum_name(s).as_str() {
            "round_robin" => Some(ModelStrategy::RoundRobin),
            "random" => Some(ModelStrategy::Random),
            "weighted" => Some(ModelStrategy::Weighted),
            _ => None,
        }
    }
}

#[derive(Serialize, Deserialize, Clone, Debug, PartialEq, Default)]
pub struct RoutingPlan {
    /// Every `--url` in the order given, normalized and without credentials (index =
    /// `Record::url_index`). Empty with the built-in simulated server: then the run has one
    /// target, `RunPlan::url`, which is always the first URL.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub urls: Vec<String>,
    #[serde(default)]
    pub url_strategy: UrlStrategy,
    #[serde(default)]
    pub model_strategy: ModelStrategy,
    /// `--model-weights`, one per model in `RunPlan::models` order (weighted only; they sum
    /// to 1 ± 0.01, AIPerf's rule).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub model_weights: Vec<f64>,
}

impl RoutingPlan {
    /// The run's URLs: the list, or `base` alone (the simulated server's, or a plan written
    /// before the list existed).
    pub fn urls_or<'a>(&'a self, base: &'a str) -> Vec<&'a str> {
        if self.urls.is_empty() {
            vec![base]
        } else {
            self.urls.iter().map(String::as_str).collect()
        }
    }

    /// URL index of the session that is `session_num`-th in issue order (round robin).
    pub fn url_for_session(&self, session_num: u64, n_urls: usize) -> usize {
        match self.url_strategy {
            UrlStrategy::RoundRobin => (session_num % n_urls.max(1) as u64) as usize,
        }
    }
}

/// Picks the model of each turn, in workload order (see [`ModelStrategy`]). `u` draws a
/// uniform number in [0, 1) from the seeded `model-selection` generator; round robin never
/// draws.
pub struct ModelSelector<'a> {
    models: &'a [String],
    strategy: ModelStrategy,
    cumulative: Vec<f64>,
    next: usize,
}

impl<'a> ModelSelector<'a> {
    pub fn new(models: &'a [String], strategy: ModelStrategy, weights: &[f64]) -> Self {
        let total: f64 = weights.iter().sum();
        let mut acc = 0.0;
        let cumulative = weights
            .iter()
            .map(|w| {
                acc += w / total;
                acc
            })
            .collect();
        ModelSelector {
            models,
            strategy,
            cumulative,
            next: 0,
        }
    }

    /// The index of the next turn's model.
    pub fn pick(&mut self, mut u: impl FnMut() -> f64) -> usize {
        let m = self.models.len().max(1);
        if m == 1 {
            return 0;
        }
        match self.strategy {
            ModelStrategy::RoundRobin => {
                let i = self.next % m;
                self.next += 1;
                i
            }
            ModelStrategy::Random => ((u() * m as f64) as usize).min(m - 1),
            ModelStrategy::Weighted => {
                // The first model whose cumulative weight exceeds the draw (weights are
                // normalized by their total, so the last bound is 1).
                let x = u();
                self.cumulative
                    .iter()
                    .position(|&c| x < c)
                    .unwrap_or(m - 1)
                    .min(m - 1)
            }
        }
    }

    pub fn model(&self, i: usize) -> &'a str {
        &self.models[i]
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn names(n: usize) -> Vec<String> {
        (0..n).map(|i| format!("m{i}")).collect()
    }

    #[test]
    fn round_robin_cycles_models_without_drawing() {
        let m = names(3);
        let mut s = ModelSelector::new(&m, ModelStrategy::RoundRobin, &[]);
        let picks: Vec<usize> = (0..7)
            .map(|_| s.pick(|| panic!("round robin never draws")))
            .collect();
        assert_eq!(picks, [0, 1, 2, 0, 1, 2, 0]);
    }

    #[test]
    fn weighted_takes_the_first_cumulative_bound_above_the_draw() {
        let m = names(3);
        // Cumulative bounds 0.5, 0.8, 1.0.
        let mut s = ModelSelector::new(&m, ModelStrategy::Weighted, &[0.5, 0.3, 0.2]);
        let draws = [0.0, 0.49, 0.5, 0.79, 0.8, 0.999];
        let picks: Vec<usize> = draws.iter().map(|&x| s.pick(|| x)).collect();
        assert_eq!(picks, [0, 0, 1, 1, 2, 2]);
    }

    #[test]
    fn random_maps_the_unit_interval_evenly() {
        let m = names(4);
        let mut s = ModelSelector::new(&m, ModelStrategy::Random, &[]);
        let picks: Vec<usize> = [0.0, 0.24, 0.25, 0.5, 0.99]
            .iter()
            .map(|&x| s.pick(|| x))
            .collect();
        assert_eq!(picks, [0, 0, 1, 2, 3]);
    }

    #[test]
    fn sessions_take_urls_in_turn() {
        let p = RoutingPlan::default();
        let got: Vec<usize> = (0..5).map(|k| p.url_for_session(k, 2)).collect();
        assert_eq!(got, [0, 1, 0, 1, 0]);
        assert_eq!(p.urls_or("http://a"), ["http://a"]);
    }

    #[test]
    fn strategy_names_round_trip() {
        for n in ModelStrategy::NAMES {
            let s = ModelStrategy::parse(n).unwrap();
            assert_eq!(serde_json::to_value(s).unwrap(), n);
        }
        assert!(ModelStrategy::parse("shuffle").is_none());
    }
}
