//! `benchmark.dataset` (a file dataset): AIPerf's `synthesis` table and trace-replay keys,
//! mapped to the `--synthesis-*`, `--inter-turn-delay-cap-seconds` and baseten_trace flags,
//! or refused with the flag's reason (docs/datasets.md, "Trace synthesis and replay
//! controls").

use serde_json::Value;

use super::part::{Part, fmt_num};
use crate::cli::replay_args::{AGENTIC, TRACE_GAP};

/// `synthesis`: every field to its flag (defaults too: they change nothing).
pub(super) fn synthesis(d: &Part<'_>, s: &Value, out: &mut Vec<String>) -> Result<(), String> {
    let mut p = Part::new(d.file, &d.path("synthesis"), s)?;
    for (k, flag) in [
        ("speedupRatio", "--synthesis-speedup-ratio"),
        ("prefixLenMultiplier", "--synthesis-prefix-len-multiplier"),
        ("promptLenMultiplier", "--synthesis-prompt-len-multiplier"),
        ("outputLenMultiplier", "--synthesis-output-len-multiplier"),
    ] {
        if let Some(v) = p.num(k)? {
            out.extend([flag.into(), fmt_num(v)]);
        }
    }
    for (k, flag) in [
        ("prefixRootMultiplier", "--synthesis-prefix-root-multiplier"),
        ("maxIsl", "--synthesis-max-isl"),
        ("maxOsl", "--synthesis-max-osl"),
    ] {
        if let Some(v) = p.uint(k)? {
            out.extend([flag.into(), v.to_string()]);
        }
    }
    if p.boolean("allowDatasetWrap")? == Some(true) {
        return Err(p.refuse_why(
            "allowDatasetWrap",
            &Value::Bool(true),
            "it applies to weka/agentic traces, which are not built",
        ));
    }
    p.done()
}

/// The replay keys of a file dataset.
pub(super) fn file_keys(d: &mut Part<'_>, out: &mut Vec<String>) -> Result<(), String> {
    if let Some(s) = d.seconds("interTurnDelayCapSeconds")? {
        out.extend(["--inter-turn-delay-cap-seconds".into(), fmt_num(s)]);
    }
    if let Some(v) = d.take("traceIdleGapCapSeconds") {
        return Err(d.refuse_why("traceIdleGapCapSeconds", &v, TRACE_GAP));
    }
    if let Some(v) = d.num("replaySpeedup")? {
        out.extend(["--replay-speedup".into(), fmt_num(v)]);
    }
    if let Some(s) = d.seconds("maxIdleGapCapSeconds")? {
        out.extend(["--max-idle-gap-cap-seconds".into(), fmt_num(s)]);
    }
    if let Some(v) = d.num("traceSessionSampleRatio")? {
        out.extend(["--trace-session-sample-ratio".into(), fmt_num(v)]);
    }
    // baseten_trace's switches: at AIPerf's defaults they change nothing (and AIPerf accepts
    // them on any file dataset then), so only a value off its default becomes a flag.
    for (k, default, flag) in [
        ("openLoopReplay", true, "--no-open-loop-replay"),
        ("openLoopStrict", false, "--open-loop-strict"),
        ("omitKvHints", false, "--omit-kv-hints"),
        ("forceMinTokens", true, "--no-force-min-tokens"),
    ] {
        if let Some(b) = d.boolean(k)?
            && b != default
        {
            out.push(flag.into());
        }
    }
    Ok(())
}

/// A phase's `systemIdleGapCapSeconds` (agentic_replay only).
pub(super) fn phase_keys(p: &mut Part<'_>) -> Result<(), String> {
    if let Some(v) = p.take("systemIdleGapCapSeconds") {
        return Err(p.refuse_why("systemIdleGapCapSeconds", &v, AGENTIC));
    }
    Ok(())
}
