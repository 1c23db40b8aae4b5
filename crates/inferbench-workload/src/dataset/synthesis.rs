//! AIPerf 0.13's trace synthesis (`--synthesis-*`) and inter-turn delay cap
//! (`--inter-turn-delay-cap-seconds`), as rules over a trace's rows. The rules are AIPerf's
//! (docs/datasets.md, "Trace synthesis and replay controls"); the code is ours.

use std::collections::{HashMap, HashSet};

use inferbench_core::dataset_plan::DatasetPlan;
use inferbench_core::replay_plan::SynthesisPlan;
use rand::Rng;

use super::{Conv, DatasetKind, plan_err};
use crate::error::WorkloadError;

/// The fields of one trace row that synthesis reads and rewrites.
#[derive(Clone, Debug, PartialEq)]
pub(crate) struct SynthRow {
    /// `hash_ids` (None: the row has none).
    pub hash_ids: Option<Vec<i64>>,
    /// `input_length` (None: a `text_input`, `messages` or `payload` row).
    pub input_length: Option<u64>,
    /// `timestamp`, ms.
    pub timestamp_ms: Option<f64>,
    /// `output_length` (None: not recorded).
    pub output_length: Option<u64>,
}

/// Applies AIPerf's synthesizer to `rows`, given in AIPerf's grouped order (sessions in
/// order of first appearance, each session's rows in file order). Runs only when
/// [`SynthesisPlan::transforms`]. Err((row index, message)) when a row's `input_length` is
/// shorter than its shared-prefix blocks.
///
/// 1. A hash id is *shared* when it occurs more than once over all rows.
/// 2. New ids are numbered from `(max shared id + 1) × m` on, where m is the integer part
///    of the prefix multiplier when it is above 1, else 1.
/// 3. Per row with hash ids: its prefix is its leading run of shared ids (p blocks), its
///    prompt `input_length − p·block` tokens. Prefix multiplier M > 1: each id h becomes
///    `h·m … h·m+m−1`, then fresh ids up to `ceil(p·M)` blocks; M < 1: the first
///    `max(1, floor(p·M))` ids are kept, and the prefix counts that many blocks (even when
///    the row had no shared id). The prompt becomes `floor(prompt × prompt multiplier)`
///    tokens on `ceil(prompt/block)` fresh ids; `input_length` = prefix + prompt tokens.
/// 4. Root multiplier R > 1: each row with ids draws a tree t in 0..R (`purpose`), and
///    t > 0 adds `t × (last new id + 1)` to every id.
/// 5. Every row: `input_length` capped at `max_isl`, `timestamp` → `floor(ts / speedup)`,
///    a recorded `output_length` → `max(1, round_half_even(out × output multiplier))`.
pub(crate) fn synthesize<R: Rng>(
    rows: &mut [SynthRow],
    s: &SynthesisPlan,
    block: u64,
    rng: &mut R,
) -> Result<(), (usize, String)> {
    if !s.transforms() {
        return Ok(());
    }
    let mut counts: HashMap<i64, usize> = HashMap::new();
    for h in rows.iter().flat_map(|r| r.hash_ids.iter().flatten()) {
        *counts.entry(*h).or_default() += 1;
    }
    let shared: HashSet<i64> = counts
        .into_iter()
        .filter_map(|(h, n)| (n > 1).then_some(h))
        .collect();
    let m: i64 = if s.prefix_len_multiplier > 1.0 {
        s.prefix_len_multiplier.trunc() as i64
    } else {
        1
    };
    let big = |what: &str| format!("{what} overflows a 64-bit integer");
    let mut next_id = shared
        .iter()
        .copied()
        .max()
        .unwrap_or(0)
        .checked_add(1)
        .and_then(|v| v.checked_mul(m))
        .ok_or_else(|| (0, big("hash id")))?;
    let mut fresh = |out: &mut Vec<i64>, n: u64| {
        for _ in 0..n {
            next_id += 1;
            out.push(next_id);
        }
    };
    for (i, r) in rows.iter_mut().enumerate() {
        let Some(ids) = r.hash_ids.as_ref().filter(|ids| !ids.is_empty()) else {
            continue;
        };
        let isl = r.input_length.unwrap_or(0);
        let prefix: Vec<i64> = ids
            .iter()
            .copied()
            .take_while(|h| shared.contains(h))
            .collect();
        let p = prefix.len() as u64;
        let prompt = isl.checked_sub(p * block).ok_or_else(|| {
            (
                i,
                format!(
                    "input_length {isl} is shorter than its {p} shared prefix blocks of {block} tokens"
                ),
            )
        })?;
        let (mut new_ids, prefix_tokens) = if s.prefix_len_multiplier > 1.0 {
            let mut v = Vec::with_capacity(prefix.len() * m as usize);
            for h in &prefix {
                for j in 0..m {
                    v.push(
                        h.checked_mul(m)
                            .and_then(|x| x.checked_add(j))
                            .ok_or_else(|| (i, big("hash id")))?,
                    );
                }
            }
            let target = (p as f64 * s.prefix_len_multiplier).ceil() as u64;
            let extra = target.saturating_sub(v.len() as u64);
            fresh(&mut v, extra);
            let n = v.len() as u64;
            (v, n * block)
        } else if s.prefix_len_multiplier < 1.0 {
            let keep = ((p as f64 * s.prefix_len_multiplier).trunc() as u64).max(1);
            (
                prefix[..prefix.len().min(keep as usize)].to_vec(),
                keep * block,
            )
        } else {
            (prefix, p * block)
        };
        let new_prompt = (prompt as f64 * s.prompt_len_multiplier).trunc() as u64;
        fresh(&mut new_ids, new_prompt.div_ceil(block));
        r.hash_ids = Some(new_ids);
        r.input_length = Some(prefix_tokens + new_prompt);
    }
    if s.prefix_root_multiplier > 1 {
        let base = next_id.checked_add(1).ok_or_else(|| (0, big("hash id")))?;
        for (i, r) in rows.iter_mut().enumerate() {
            let Some(ids) = r.hash_ids.as_mut().filter(|ids| !ids.is_empty()) else {
                continue;
            };
            let tree = rng.random_range(0..s.prefix_root_multiplier) as i64;
            if tree > 0 {
                let off = tree.checked_mul(base).ok_or_else(|| (i, big("hash id")))?;
                for h in ids.iter_mut() {
                    *h = h.checked_add(off).ok_or_else(|| (i, big("hash id")))?;
                }
            }
        }
    }
    for r in rows.iter_mut() {
        if let (Some(isl), Some(cap)) = (r.input_length, s.max_isl) {
            r.input_length = Some(isl.min(cap));
        }
        if let Some(ts) = r.timestamp_ms {
            r.timestamp_ms = Some((ts / s.speedup_ratio).trunc());
        }
        if let Some(out) = r.output_length {
            let scaled = (out as f64 * s.output_len_multiplier).round_ties_even();
            r.output_length = Some((scaled.min(u32::MAX as f64) as u64).max(1));
        }
    }
    Ok(())
}

/// AIPerf's loader rules around synthesis: before it, a row whose `input_length` exceeds
/// `max_isl` is dropped; after it, a recorded `output_length` above `max_osl` is capped.
pub(crate) fn keep_row(s: &SynthesisPlan, input_length: Option<u64>) -> bool {
    !matches!((s.max_isl, input_length), (Some(cap), Some(n)) if n > cap)
}

/// `max_osl` applied to a recorded output length (after synthesis).
pub(crate) fn cap_output(s: &SynthesisPlan, out: Option<u64>) -> Option<u64> {
    match (out, s.max_osl) {
        (Some(o), Some(cap)) => Some(o.min(cap)),
        (o, _) => o,
    }
}

/// The replay flags apply where AIPerf 0.13 reads them, and are refused elsewhere by name:
/// synthesis on mooncake_trace, bailian_trace, burst_gpt_trace and sagemaker_data_capture,
/// and on baseten_trace all but the speed-up ratio and the prompt-reshaping multipliers; the inter-turn delay cap on dag_jsonl,
/// weka_trace, tracelab and baseten_trace; the baseten knobs on baseten_trace only.
pub(crate) fn check_flags(ds: &DatasetPlan, kind: DatasetKind) -> Result<(), WorkloadError> {
    let r = &ds.replay;
    let s = &r.synthesis;
    if kind == DatasetKind::BasetenTrace {
        if s.speedup_ratio != 1.0 {
            return Err(plan_err(
                "dataset.replay.synthesis",
                "--synthesis-speedup-ratio is not supported with baseten_trace; use --replay-speedup to scale replay pacing",
            ));
        }
        let reshaping: Vec<&str> = [
            (
                "--synthesis-prefix-len-multiplier",
                s.prefix_len_multiplier != 1.0,
            ),
            (
                "--synthesis-prefix-root-multiplier",
                s.prefix_root_multiplier != 1,
            ),
            (
                "--synthesis-prompt-len-multiplier",
                s.prompt_len_multiplier != 1.0,
            ),
        ]
        .into_iter()
        .filter_map(|(f, set)| set.then_some(f))
        .collect();
        if !reshaping.is_empty() {
            return Err(plan_err(
                "dataset.replay.synthesis",
                format!(
                    "{} {} not supported with baseten_trace: it replays recorded prompts verbatim, so hash-reshaping synthesis cannot change the sent prompt and would desync the forwarded hash_ids KV hints",
                    reshaping.join(", "),
                    if reshaping.len() == 1 { "is" } else { "are" }
                ),
            ));
        }
    } else {
        let synthesized = matches!(
            kind,
            DatasetKind::MooncakeTrace
                | DatasetKind::BailianTrace
                | DatasetKind::BurstGptTrace
                | DatasetKind::SagemakerDataCapture
        );
        if s.is_set() && !synthesized {
            return Err(plan_err(
                "dataset.replay.synthesis",
                format!(
                    "--synthesis-* transforms the rows of mooncake_trace, bailian_trace, burst_gpt_trace, sagemaker_data_capture and (in part) baseten_trace, not {}",
                    kind.as_str()
                ),
            ));
        }
        check_baseten_knobs(ds, Some(kind))?;
    }
    if r.inter_turn_delay_cap_seconds.is_some()
        && !matches!(
            kind,
            DatasetKind::DagJsonl
                | DatasetKind::WekaTrace
                | DatasetKind::Tracelab
                | DatasetKind::BasetenTrace
        )
    {
        return Err(plan_err(
            "dataset.replay.inter_turn_delay_cap_seconds",
            format!(
                "--inter-turn-delay-cap-seconds clamps the turn delays of dag_jsonl, weka_trace, tracelab and baseten_trace, not {}",
                kind.as_str()
            ),
        ));
    }
    Ok(())
}

/// The baseten knobs given for a dataset that is not a baseten_trace (None: no input file)
/// are refused, as AIPerf refuses them, even at their defaults.
pub(crate) fn check_baseten_knobs(
    ds: &DatasetPlan,
    kind: Option<DatasetKind>,
) -> Result<(), WorkloadError> {
    let given = &ds.replay.baseten.given;
    if given.is_empty() || kind == Some(DatasetKind::BasetenTrace) {
        return Ok(());
    }
    let msg = format!(
        "{} {} only supported by the baseten_trace loader",
        given.join(", "),
        if given.len() == 1 { "is" } else { "are" }
    );
    Err(plan_err(
        "dataset.replay.baseten",
        match kind {
            Some(k) => format!("{msg}, but the dataset is {}", k.as_str()),
            None => {
                format!("{msg}; provide --input-file and --custom-dataset-type baseten_trace")
            }
        },
    ))
}

/// `--inter-turn-delay-cap-seconds`: every turn's delay (ms) above `cap × 1000` becomes it
/// (AIPerf's `DelayCapTracker.clamp`; negative and absent delays are left alone).
pub(crate) fn cap_delays(convs: &mut [Conv], cap_seconds: Option<f64>) {
    let Some(cap) = cap_seconds else {
        return;
    };
    let cap_ms = cap * 1000.0;
    for t in convs.iter_mut().flat_map(|c| c.turns.iter_mut()) {
        if let Some(d) = t.delay_ms
            && d > cap_ms
        {
            t.delay_ms = Some(cap_ms);
        }
    }
}

#[cfg(test)]
#[path = "synthesis_tests.rs"]
mod tests;
