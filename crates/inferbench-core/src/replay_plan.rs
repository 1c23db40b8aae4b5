//! AIPerf's trace-replay controls that inferbench builds: trace synthesis (`--synthesis-*`,
//! mooncake_trace) and the inter-turn delay cap (dag_jsonl, weka_trace, tracelab). See
//! docs/datasets.md, "Trace synthesis and replay controls".
//!
//! Every field has a serde default, so a manifest written before a field existed still reads.

use serde::{Deserialize, Serialize};

/// AIPerf's `SynthesisConfig`: transforms applied to a trace's rows before replay.
#[derive(Serialize, Deserialize, Clone, Debug, PartialEq)]
pub struct SynthesisPlan {
    /// `--synthesis-speedup-ratio` (> 0, default 1): row timestamps are divided by it.
    #[serde(default = "one")]
    pub speedup_ratio: f64,
    /// `--synthesis-prefix-len-multiplier` (> 0, default 1): shared-prefix blocks.
    #[serde(default = "one")]
    pub prefix_len_multiplier: f64,
    /// `--synthesis-prefix-root-multiplier` (≥ 1, default 1): independent prefix trees.
    #[serde(default = "one_u64")]
    pub prefix_root_multiplier: u64,
    /// `--synthesis-prompt-len-multiplier` (> 0, default 1): the unique (non-shared) part.
    #[serde(default = "one")]
    pub prompt_len_multiplier: f64,
    /// `--synthesis-output-len-multiplier` (≥ 0, default 1): recorded output lengths.
    #[serde(default = "one")]
    pub output_len_multiplier: f64,
    /// `--synthesis-max-isl` (≥ 1): rows longer are dropped; synthesized lengths capped.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub max_isl: Option<u64>,
    /// `--synthesis-max-osl` (≥ 1): recorded output lengths are capped to it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub max_osl: Option<u64>,
}

impl Default for SynthesisPlan {
    fn default() -> Self {
        SynthesisPlan {
            speedup_ratio: 1.0,
            prefix_len_multiplier: 1.0,
            prefix_root_multiplier: 1,
            prompt_len_multiplier: 1.0,
            output_len_multiplier: 1.0,
            max_isl: None,
            max_osl: None,
        }
    }
}

impl SynthesisPlan {
    /// AIPerf runs its synthesizer only when a multiplier or the speed-up ratio is not its
    /// default; `max_isl` and `max_osl` alone are a filter and a cap, not a transform.
    pub fn transforms(&self) -> bool {
        self.speedup_ratio != 1.0
            || self.prefix_len_multiplier != 1.0
            || self.prefix_root_multiplier != 1
            || self.prompt_len_multiplier != 1.0
            || self.output_len_multiplier != 1.0
    }

    /// Any field differs from its default (the flags were used).
    pub fn is_set(&self) -> bool {
        *self != SynthesisPlan::default()
    }
}

/// The replay controls of a file dataset.
#[derive(Serialize, Deserialize, Clone, Debug, PartialEq, Default)]
pub struct ReplayPlan {
    /// The `--synthesis-*` flags.
    #[serde(default, skip_serializing_if = "is_identity")]
    pub synthesis: SynthesisPlan,
    /// `--inter-turn-delay-cap-seconds` (≥ 0): each later turn's delay is clamped to it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub inter_turn_delay_cap_seconds: Option<f64>,
}

impl ReplayPlan {
    pub fn is_default(&self) -> bool {
        *self == ReplayPlan::default()
    }
}

fn is_identity(s: &SynthesisPlan) -> bool {
    !s.is_set()
}
fn one() -> f64 {
    1.0
}
fn one_u64() -> u64 {
    1
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn defaults_read_back_and_only_multipliers_transform() {
        let p: ReplayPlan = serde_json::from_str("{}").unwrap();
        assert!(p.is_default());
        assert_eq!(serde_json::to_string(&p).unwrap(), "{}");
        let caps = SynthesisPlan {
            max_isl: Some(4),
            max_osl: Some(2),
            ..Default::default()
        };
        assert!(caps.is_set() && !caps.transforms());
        let out = SynthesisPlan {
            output_len_multiplier: 2.0,
            ..Default::default()
        };
        assert!(out.transforms());
        let back: SynthesisPlan =
            serde_json::from_str(&serde_json::to_string(&out).unwrap()).unwrap();
        assert_eq!(back, out);
    }
}
