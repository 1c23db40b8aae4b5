//! `profile` flags: AIPerf 0.13's trace synthesis (`--synthesis-*`, built for
//! mooncake_trace) and trace-replay controls (`--inter-turn-delay-cap-seconds`, built for
//! dag_jsonl, weka_trace and tracelab). The replay knobs AIPerf honors only in its
//! baseten_trace loader, and those of its agentic_replay timing, are accepted by name to be
//! refused with the reason (docs/datasets.md, "Trace synthesis and replay controls").

use clap::Args;
use inferbench_core::replay_plan::{ReplayPlan, SynthesisPlan};

#[derive(Args, Debug, Clone, Default)]
pub struct ReplayArgs {
    /// mooncake_trace: divide row timestamps by this ratio (> 0; 2 = twice as fast).
    #[arg(long = "synthesis-speedup-ratio", allow_negative_numbers = true)]
    pub synthesis_speedup_ratio: Option<f64>,
    /// mooncake_trace: multiply the shared-prefix blocks of hash_ids (> 0).
    #[arg(
        long = "synthesis-prefix-len-multiplier",
        allow_negative_numbers = true
    )]
    pub synthesis_prefix_len_multiplier: Option<f64>,
    /// mooncake_trace: spread rows over this many independent prefix trees (≥ 1).
    #[arg(
        long = "synthesis-prefix-root-multiplier",
        allow_negative_numbers = true
    )]
    pub synthesis_prefix_root_multiplier: Option<i64>,
    /// mooncake_trace: multiply each row's unique (non-shared) prompt length (> 0).
    #[arg(
        long = "synthesis-prompt-len-multiplier",
        allow_negative_numbers = true
    )]
    pub synthesis_prompt_len_multiplier: Option<f64>,
    /// mooncake_trace: multiply recorded output lengths (≥ 0).
    #[arg(
        long = "synthesis-output-len-multiplier",
        allow_negative_numbers = true
    )]
    pub synthesis_output_len_multiplier: Option<f64>,
    /// mooncake_trace: drop rows whose input_length exceeds this; cap synthesized lengths.
    #[arg(long = "synthesis-max-isl", allow_negative_numbers = true)]
    pub synthesis_max_isl: Option<i64>,
    /// mooncake_trace: cap recorded output lengths at this.
    #[arg(long = "synthesis-max-osl", allow_negative_numbers = true)]
    pub synthesis_max_osl: Option<i64>,
    /// dag_jsonl, weka_trace, tracelab: clamp each turn's delay to at most this many seconds.
    #[arg(long = "inter-turn-delay-cap-seconds", allow_negative_numbers = true)]
    pub inter_turn_delay_cap_seconds: Option<f64>,

    // AIPerf's baseten_trace replay knobs and agentic_replay caps: accepted by name to be
    // refused with the reason.
    #[arg(long = "replay-speedup", hide = true, allow_hyphen_values = true)]
    pub replay_speedup: Option<String>,
    #[arg(
        long = "max-idle-gap-cap-seconds",
        hide = true,
        allow_hyphen_values = true
    )]
    pub max_idle_gap_cap_seconds: Option<String>,
    #[arg(
        long = "trace-session-sample-ratio",
        hide = true,
        allow_hyphen_values = true
    )]
    pub trace_session_sample_ratio: Option<String>,
    #[arg(long = "open-loop-replay", hide = true)]
    pub open_loop_replay: bool,
    #[arg(long = "no-open-loop-replay", hide = true)]
    pub no_open_loop_replay: bool,
    #[arg(long = "open-loop-strict", hide = true)]
    pub open_loop_strict: bool,
    #[arg(long = "omit-kv-hints", hide = true)]
    pub omit_kv_hints: bool,
    #[arg(long = "force-min-tokens", hide = true)]
    pub force_min_tokens: bool,
    #[arg(long = "no-force-min-tokens", hide = true)]
    pub no_force_min_tokens: bool,
    #[arg(
        long = "system-idle-gap-cap-seconds",
        hide = true,
        allow_hyphen_values = true
    )]
    pub system_idle_gap_cap_seconds: Option<String>,
    #[arg(
        long = "trace-idle-gap-cap-seconds",
        hide = true,
        allow_hyphen_values = true
    )]
    pub trace_idle_gap_cap_seconds: Option<String>,
}

/// Why the baseten_trace knobs are refused.
pub const BASETEN: &str = "AIPerf 0.13 honors it only in its baseten_trace loader (any other dataset type is an error there), and inferbench does not build baseten_trace (a Parquet/Arrow reader, docs/datasets.md)";

/// Why the agentic_replay cap is refused.
pub const AGENTIC: &str = "AIPerf applies it only under its agentic_replay timing (--scenario inferencex-agentx-mvp), which inferbench refuses";

/// Why the per-trace idle-gap cap is refused.
pub const TRACE_GAP: &str = "AIPerf's per-trace idle-gap compression of WEKA replays (parent and subagent submission times rebuilt on one compressed timeline) is not built in inferbench; --inter-turn-delay-cap-seconds clamps each turn's delay instead";

/// The refused flags used, grouped by reason: `--a, --b: refused: why; …`.
fn refused(a: &ReplayArgs) -> Option<String> {
    let used = [
        ("--replay-speedup", a.replay_speedup.is_some(), BASETEN),
        (
            "--max-idle-gap-cap-seconds",
            a.max_idle_gap_cap_seconds.is_some(),
            BASETEN,
        ),
        (
            "--trace-session-sample-ratio",
            a.trace_session_sample_ratio.is_some(),
            BASETEN,
        ),
        ("--open-loop-replay", a.open_loop_replay, BASETEN),
        ("--no-open-loop-replay", a.no_open_loop_replay, BASETEN),
        ("--open-loop-strict", a.open_loop_strict, BASETEN),
        ("--omit-kv-hints", a.omit_kv_hints, BASETEN),
        ("--force-min-tokens", a.force_min_tokens, BASETEN),
        ("--no-force-min-tokens", a.no_force_min_tokens, BASETEN),
        (
            "--system-idle-gap-cap-seconds",
            a.system_idle_gap_cap_seconds.is_some(),
            AGENTIC,
        ),
        (
            "--trace-idle-gap-cap-seconds",
            a.trace_idle_gap_cap_seconds.is_some(),
            TRACE_GAP,
        ),
    ];
    let mut groups: Vec<(&str, Vec<&str>)> = Vec::new();
    for (name, _, why) in used.iter().filter(|u| u.1) {
        match groups.iter_mut().find(|(w, _)| w == why) {
            Some((_, names)) => names.push(name),
            None => groups.push((why, vec![name])),
        }
    }
    (!groups.is_empty()).then(|| {
        groups
            .iter()
            .map(|(why, names)| format!("{}: refused: {why}", names.join(", ")))
            .collect::<Vec<_>>()
            .join("; ")
    })
}

/// The replay plan these flags give; an error names the flag.
pub fn replay_plan(a: &ReplayArgs) -> Result<ReplayPlan, String> {
    if let Some(e) = refused(a) {
        return Err(e);
    }
    let positive = |flag: &str, v: Option<f64>| -> Result<f64, String> {
        match v {
            None => Ok(1.0),
            Some(x) if x.is_finite() && x > 0.0 => Ok(x),
            Some(x) => Err(format!("{flag} {x}: must be a number > 0")),
        }
    };
    let at_least_one = |flag: &str, v: Option<i64>| -> Result<Option<u64>, String> {
        match v {
            None => Ok(None),
            Some(x) if x >= 1 => Ok(Some(x as u64)),
            Some(x) => Err(format!("{flag} {x}: must be an integer ≥ 1")),
        }
    };
    let output_len_multiplier = match a.synthesis_output_len_multiplier {
        None => 1.0,
        Some(x) if x.is_finite() && x >= 0.0 => x,
        Some(x) => {
            return Err(format!(
                "--synthesis-output-len-multiplier {x}: must be a number ≥ 0"
            ));
        }
    };
    let inter_turn_delay_cap_seconds = match a.inter_turn_delay_cap_seconds {
        None => None,
        Some(x) if x.is_finite() && x >= 0.0 => Some(x),
        Some(x) => {
            return Err(format!(
                "--inter-turn-delay-cap-seconds {x}: must be a number ≥ 0"
            ));
        }
    };
    let synthesis = SynthesisPlan {
        speedup_ratio: positive("--synthesis-speedup-ratio", a.synthesis_speedup_ratio)?,
        prefix_len_multiplier: positive(
            "--synthesis-prefix-len-multiplier",
            a.synthesis_prefix_len_multiplier,
        )?,
        prefix_root_multiplier: at_least_one(
            "--synthesis-prefix-root-multiplier",
            a.synthesis_prefix_root_multiplier,
        )?
        .unwrap_or(1),
        prompt_len_multiplier: positive(
            "--synthesis-prompt-len-multiplier",
            a.synthesis_prompt_len_multiplier,
        )?,
        output_len_multiplier,
        max_isl: at_least_one("--synthesis-max-isl", a.synthesis_max_isl)?,
        max_osl: at_least_one("--synthesis-max-osl", a.synthesis_max_osl)?,
    };
    if synthesis.prefix_root_multiplier > 1_000_000 {
        return Err(format!(
            "--synthesis-prefix-root-multiplier {}: at most 1000000 trees",
            synthesis.prefix_root_multiplier
        ));
    }
    Ok(ReplayPlan {
        synthesis,
        inter_turn_delay_cap_seconds,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn values_are_checked_and_recorded() {
        let a = ReplayArgs {
            synthesis_speedup_ratio: Some(2.0),
            synthesis_prefix_root_multiplier: Some(3),
            synthesis_max_osl: Some(8),
            inter_turn_delay_cap_seconds: Some(1.5),
            ..Default::default()
        };
        let p = replay_plan(&a).unwrap();
        assert_eq!(p.synthesis.speedup_ratio, 2.0);
        assert_eq!(p.synthesis.prefix_root_multiplier, 3);
        assert_eq!(p.synthesis.max_osl, Some(8));
        assert_eq!(p.synthesis.prompt_len_multiplier, 1.0);
        assert_eq!(p.inter_turn_delay_cap_seconds, Some(1.5));
        assert!(replay_plan(&ReplayArgs::default()).unwrap().is_default());

        for (a, want) in [
            (
                ReplayArgs {
                    synthesis_speedup_ratio: Some(0.0),
                    ..Default::default()
                },
                "--synthesis-speedup-ratio 0: must be a number > 0",
            ),
            (
                ReplayArgs {
                    synthesis_prefix_root_multiplier: Some(0),
                    ..Default::default()
                },
                "--synthesis-prefix-root-multiplier 0: must be an integer ≥ 1",
            ),
            (
                ReplayArgs {
                    synthesis_output_len_multiplier: Some(-1.0),
                    ..Default::default()
                },
                "--synthesis-output-len-multiplier -1: must be a number ≥ 0",
            ),
            (
                ReplayArgs {
                    inter_turn_delay_cap_seconds: Some(f64::NAN),
                    ..Default::default()
                },
                "--inter-turn-delay-cap-seconds NaN: must be a number ≥ 0",
            ),
        ] {
            assert_eq!(replay_plan(&a).unwrap_err(), want);
        }
    }

    #[test]
    fn baseten_and_agentic_knobs_are_refused_by_name() {
        let a = ReplayArgs {
            replay_speedup: Some("10".into()),
            omit_kv_hints: true,
            system_idle_gap_cap_seconds: Some("5".into()),
            ..Default::default()
        };
        assert_eq!(
            replay_plan(&a).unwrap_err(),
            format!(
                "--replay-speedup, --omit-kv-hints: refused: {BASETEN}; --system-idle-gap-cap-seconds: refused: {AGENTIC}"
            )
        );
    }
}
