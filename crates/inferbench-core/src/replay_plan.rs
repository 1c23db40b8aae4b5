//! AIPerf's trace-replay controls that inferbench builds: trace synthesis (`--synthesis-*`,
//! mooncake_trace), the inter-turn delay cap (dag_jsonl, weka_trace, tracelab, and
//! baseten_trace's closed-loop think times) and baseten_trace's replay knobs. See
//! docs/datasets.md, "Trace synthesis and replay controls" and "baseten_trace".
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
    /// baseten_trace's replay knobs.
    #[serde(default, skip_serializing_if = "BasetenReplay::is_default")]
    pub baseten: BasetenReplay,
}

/// AIPerf 0.13's `baseten_trace` replay knobs (its loader reads them; any other dataset type
/// refuses them by name).
#[derive(Serialize, Deserialize, Clone, Debug, PartialEq)]
pub struct BasetenReplay {
    /// `--replay-speedup` (> 0): normalized timestamps (and recorded durations) are divided
    /// by it; hash ids are untouched.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub speedup: Option<f64>,
    /// `--max-idle-gap-cap-seconds` (> 0): a gap between consecutive requests (over all
    /// sessions, in replay time) longer than this is shortened to it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub max_idle_gap_cap_seconds: Option<f64>,
    /// `--trace-session-sample-ratio` (0 < r ≤ 1): the fraction of sessions kept, whole.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub session_sample_ratio: Option<f64>,
    /// `--open-loop-replay` (default) / `--no-open-loop-replay`: every turn keeps its
    /// recorded time, or continuation turns wait a think time after the previous turn.
    #[serde(default = "yes")]
    pub open_loop: bool,
    /// `--open-loop-strict`: every row is its own single-turn session.
    #[serde(default)]
    pub open_loop_strict: bool,
    /// `--omit-kv-hints`: no `hash_ids`/`block_size` in the bodies.
    #[serde(default)]
    pub omit_kv_hints: bool,
    /// `--force-min-tokens` (default) / `--no-force-min-tokens`: `min_tokens` = the
    /// recorded output length.
    #[serde(default = "yes")]
    pub force_min_tokens: bool,
    /// The session column preferred when both exist (AIPerf's
    /// `AIPERF_DATASET_BASETEN_SESSION_COLUMN`; None: `provided_session_id`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub session_column: Option<String>,
    /// The knobs given on the command line (or by a config file), by flag: AIPerf refuses
    /// them, even at their defaults, for any other dataset type.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub given: Vec<String>,
}

impl Default for BasetenReplay {
    fn default() -> Self {
        BasetenReplay {
            speedup: None,
            max_idle_gap_cap_seconds: None,
            session_sample_ratio: None,
            open_loop: true,
            open_loop_strict: false,
            omit_kv_hints: false,
            force_min_tokens: true,
            session_column: None,
            given: Vec::new(),
        }
    }
}

impl BasetenReplay {
    pub fn is_default(&self) -> bool {
        *self == BasetenReplay::default()
    }
}

impl ReplayPlan {
    pub fn is_default(&self) -> bool {
        *self == ReplayPlan::default()
    }
}

fn is_identity(s: &SynthesisPlan) -> bool {
    !s.is_set()
}
fn yes() -> bool {
    true
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
        // The baseten knobs default to AIPerf's (open loop, min_tokens forced) and are left
        // out of the manifest at those defaults.
        let b: BasetenReplay = serde_json::from_str("{}").unwrap();
        assert!(b.open_loop && b.force_min_tokens && b.is_default());
    }
}
