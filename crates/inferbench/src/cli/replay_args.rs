//! `profile` flags: AIPerf 0.13's trace synthesis (`--synthesis-*`, built for
//! mooncake_trace and, in part, baseten_trace), trace-replay controls
//! (`--inter-turn-delay-cap-seconds`, built for dag_jsonl, weka_trace, tracelab and
//! baseten_trace) and baseten_trace's replay knobs. Those of AIPerf's agentic_replay timing
//! are accepted by name to be refused with the reason (docs/datasets.md, "Trace synthesis
//! and replay controls").

use clap::Args;
use inferbench_core::replay_plan::{BasetenReplay, ReplayPlan, SynthesisPlan};

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

    /// baseten_trace: divide the recorded times (and durations) by this (> 0; 10 = ten
    /// times faster); hash ids are untouched.
    #[arg(long = "replay-speedup", allow_negative_numbers = true)]
    pub replay_speedup: Option<f64>,
    /// baseten_trace: shorten any gap between consecutive requests (over all sessions, in
    /// replay time) to at most this many seconds (> 0).
    #[arg(long = "max-idle-gap-cap-seconds", allow_negative_numbers = true)]
    pub max_idle_gap_cap_seconds: Option<f64>,
    /// baseten_trace: keep this fraction of the sessions, whole (0 < r ≤ 1; seeded by
    /// --random-seed).
    #[arg(long = "trace-session-sample-ratio", allow_negative_numbers = true)]
    pub trace_session_sample_ratio: Option<f64>,
    /// baseten_trace: every turn at its recorded time (the default).
    #[arg(long = "open-loop-replay", conflicts_with = "no_open_loop_replay")]
    pub open_loop_replay: bool,
    /// baseten_trace: a session's later turns wait a think time after the previous turn
    /// (the recorded gap less the recorded duration).
    #[arg(long = "no-open-loop-replay")]
    pub no_open_loop_replay: bool,
    /// baseten_trace: every row its own single-turn session at its recorded time.
    #[arg(long = "open-loop-strict")]
    pub open_loop_strict: bool,
    /// baseten_trace: send no hash_ids/block_size routing hints.
    #[arg(long = "omit-kv-hints")]
    pub omit_kv_hints: bool,
    /// baseten_trace: min_tokens = the recorded output length (the default).
    #[arg(long = "force-min-tokens", conflicts_with = "no_force_min_tokens")]
    pub force_min_tokens: bool,
    /// baseten_trace: send no min_tokens.
    #[arg(long = "no-force-min-tokens")]
    pub no_force_min_tokens: bool,
    /// baseten_trace: the session column preferred when the file has both (AIPerf's
    /// environment variable; provided_session_id by default).
    #[arg(
        long = "baseten-session-column",
        hide = true,
        env = "AIPERF_DATASET_BASETEN_SESSION_COLUMN",
        value_parser = ["provided_session_id", "poor_man_session_id"]
    )]
    pub baseten_session_column: Option<String>,

    // AIPerf's agentic_replay caps: accepted by name to be refused with the reason.
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

/// Why the agentic_replay cap is refused.
pub const AGENTIC: &str = "AIPerf applies it only under its agentic_replay timing (--scenario inferencex-agentx-mvp), which inferbench refuses";

/// Why the per-trace idle-gap cap is refused.
pub const TRACE_GAP: &str = "AIPerf's per-trace idle-gap compression of WEKA replays (parent and subagent submission times rebuilt on one compressed timeline) is not built in inferbench; --inter-turn-delay-cap-seconds clamps each turn's delay instead";

/// The refused flags used, grouped by reason: `--a, --b: refused: why; …`.
fn refused(a: &ReplayArgs) -> Option<String> {
    let used = [
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
        baseten: baseten(a)?,
    })
}

/// baseten_trace's knobs, checked as AIPerf checks them; `given` lists the flags used.
fn baseten(a: &ReplayArgs) -> Result<BasetenReplay, String> {
    let positive = |flag: &str, v: Option<f64>| -> Result<Option<f64>, String> {
        match v {
            Some(x) if !(x.is_finite() && x > 0.0) => {
                Err(format!("{flag} {x}: must be a number > 0"))
            }
            v => Ok(v),
        }
    };
    let ratio = match a.trace_session_sample_ratio {
        Some(x) if !(x > 0.0 && x <= 1.0) => {
            return Err(format!(
                "--trace-session-sample-ratio {x}: must be a number > 0 and ≤ 1"
            ));
        }
        r => r,
    };
    if a.open_loop_strict && a.no_open_loop_replay {
        return Err(
            "--open-loop-strict requires open-loop replay; remove --no-open-loop-replay (or drop --open-loop-strict)"
                .into(),
        );
    }
    let given = [
        (
            "--trace-session-sample-ratio",
            a.trace_session_sample_ratio.is_some(),
        ),
        ("--replay-speedup", a.replay_speedup.is_some()),
        (
            "--max-idle-gap-cap-seconds",
            a.max_idle_gap_cap_seconds.is_some(),
        ),
        (
            "--open-loop-replay/--no-open-loop-replay",
            a.open_loop_replay || a.no_open_loop_replay,
        ),
        ("--open-loop-strict", a.open_loop_strict),
        ("--omit-kv-hints", a.omit_kv_hints),
        (
            "--force-min-tokens/--no-force-min-tokens",
            a.force_min_tokens || a.no_force_min_tokens,
        ),
    ]
    .into_iter()
    .filter(|(_, set)| *set)
    .map(|(f, _)| f.to_string())
    .collect();
    Ok(BasetenReplay {
        speedup: positive("--replay-speedup", a.replay_speedup)?,
        max_idle_gap_cap_seconds: positive(
            "--max-idle-gap-cap-seconds",
            a.max_idle_gap_cap_seconds,
        )?,
        session_sample_ratio: ratio,
        open_loop: !a.no_open_loop_replay,
        open_loop_strict: a.open_loop_strict,
        omit_kv_hints: a.omit_kv_hints,
        force_min_tokens: !a.no_force_min_tokens,
        session_column: a.baseten_session_column.clone(),
        given,
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
    fn agentic_knobs_are_refused_by_name() {
        let a = ReplayArgs {
            system_idle_gap_cap_seconds: Some("5".into()),
            ..Default::default()
        };
        assert_eq!(
            replay_plan(&a).unwrap_err(),
            format!("--system-idle-gap-cap-seconds: refused: {AGENTIC}")
        );
    }

    #[test]
    fn baseten_knobs_are_checked_and_their_flags_listed() {
        let a = ReplayArgs {
            replay_speedup: Some(10.0),
            no_open_loop_replay: true,
            omit_kv_hints: true,
            ..Default::default()
        };
        let b = replay_plan(&a).unwrap().baseten;
        assert_eq!(b.speedup, Some(10.0));
        assert!(!b.open_loop && b.omit_kv_hints && b.force_min_tokens);
        assert_eq!(
            b.given,
            [
                "--replay-speedup",
                "--open-loop-replay/--no-open-loop-replay",
                "--omit-kv-hints"
            ]
        );
        assert!(
            replay_plan(&ReplayArgs::default())
                .unwrap()
                .baseten
                .is_default()
        );
        for (a, want) in [
            (
                ReplayArgs {
                    replay_speedup: Some(0.0),
                    ..Default::default()
                },
                "--replay-speedup 0: must be a number > 0",
            ),
            (
                ReplayArgs {
                    trace_session_sample_ratio: Some(1.5),
                    ..Default::default()
                },
                "--trace-session-sample-ratio 1.5: must be a number > 0 and ≤ 1",
            ),
            (
                ReplayArgs {
                    max_idle_gap_cap_seconds: Some(-1.0),
                    ..Default::default()
                },
                "--max-idle-gap-cap-seconds -1: must be a number > 0",
            ),
            (
                ReplayArgs {
                    open_loop_strict: true,
                    no_open_loop_replay: true,
                    ..Default::default()
                },
                "--open-loop-strict requires open-loop replay; remove --no-open-loop-replay (or drop --open-loop-strict)",
            ),
        ] {
            assert_eq!(replay_plan(&a).unwrap_err(), want);
        }
    }
}
