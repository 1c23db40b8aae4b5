//! AIPerf 0.13's `baseten_trace`: Baseten completion traces in Parquet or Arrow IPC, one
//! row per recorded request, replayed with their literal prompts. The rules are AIPerf's
//! (docs/datasets.md, "baseten_trace"); the code is ours.
//!
//! 1. Columns `timestamp_start_unix_ms`, `prompt`, `input_tokens`, `output_tokens` are
//!    required; `total_hashes`, `block_size`, `provided_session_id`, `poor_man_session_id`
//!    and `duration_e2e_ms` are read when present; any other column is ignored.
//! 2. Timestamps become ms after the file's earliest row. `--synthesis-max-isl` drops longer
//!    rows; then `--replay-speedup` divides the times. An output of 0 tokens (a canceled
//!    request) becomes 1.
//! 3. Sessions: the preferred session column if the file has it, else the other one, else
//!    none (every row its own session). `--trace-session-sample-ratio` keeps whole sessions.
//! 4. `--max-idle-gap-cap-seconds` shortens dead air; sessions of several rows are sent with
//!    their history (earlier prompts and the live responses).
//! 5. Bodies: the prompt, `max_tokens` = the recorded output, and `min_tokens` (unless
//!    `--no-force-min-tokens`), `hash_ids` and `block_size` (unless `--omit-kv-hints`).

use std::collections::HashMap;
use std::path::Path;

use inferbench_core::plan::RunPlan;
use inferbench_core::replay_plan::BasetenReplay;
use rand::Rng;
use serde_json::{Map, Value};

use super::columnar::{self, Col};
use super::error::DatasetError;
use super::{Conv, NamedText, TurnSpec, plan_err, session_id};
use crate::error::WorkloadError;
use crate::synthetic::rng_for;

/// AIPerf's block size for baseten traces without `--isl-block-size` (used by
/// `analyze-trace`; the bodies carry the file's own `block_size`).
pub const BASETEN_BLOCK_SIZE: u64 = 64;

/// The named generator of session sampling.
pub const SAMPLING: &str = "dataset.loader.baseten_trace.session_sampling";

const TIME: &str = "timestamp_start_unix_ms";
const PROVIDED: &str = "provided_session_id";
const POOR_MAN: &str = "poor_man_session_id";
const REQUIRED: [&str; 4] = [TIME, "prompt", "input_tokens", "output_tokens"];

/// One row, as read and checked.
#[derive(Clone, Debug, PartialEq)]
pub(crate) struct Row {
    /// 1-based, in file order.
    pub row: usize,
    pub timestamp_ms: u64,
    pub prompt: String,
    pub input_tokens: u64,
    pub output_tokens: u64,
    pub total_hashes: Vec<u64>,
    pub block_size: Option<u64>,
    pub session: Option<String>,
    pub duration_e2e_ms: Option<u64>,
}

/// The session column to group by: the preferred one if the file has it, else the other.
pub(crate) fn session_column(names: &[String], preferred: Option<&str>) -> Option<&'static str> {
    let preferred = if preferred == Some(POOR_MAN) {
        POOR_MAN
    } else {
        PROVIDED
    };
    let other = if preferred == PROVIDED {
        POOR_MAN
    } else {
        PROVIDED
    };
    [preferred, other]
        .into_iter()
        .find(|c| names.iter().any(|n| n == c))
}

/// Reads every row of `path`, checking each cell, and names the session column used; errors
/// name the file, the column and the 1-based row.
pub(crate) fn read(
    path: &Path,
    opts: &BasetenReplay,
) -> Result<(Vec<Row>, Option<&'static str>), WorkloadError> {
    let file = path.display().to_string();
    let bytes = std::fs::read(path).map_err(|e| DatasetError::file(&file, e.to_string()))?;
    read_bytes(&file, bytes, opts)
}

/// [`read`] on a file's bytes, `file` naming it.
pub(crate) fn read_bytes(
    file: &str,
    bytes: Vec<u8>,
    opts: &BasetenReplay,
) -> Result<(Vec<Row>, Option<&'static str>), WorkloadError> {
    if let Some(c) = &opts.session_column
        && c != PROVIDED
        && c != POOR_MAN
    {
        return Err(plan_err(
            "dataset.replay.baseten.session_column",
            format!("{c:?}: the session column is {PROVIDED} or {POOR_MAN}"),
        ));
    }
    Ok(columnar::guarded(file, || read_rows(file, bytes, opts))?)
}

fn read_rows(
    file: &str,
    bytes: Vec<u8>,
    opts: &BasetenReplay,
) -> Result<(Vec<Row>, Option<&'static str>), DatasetError> {
    let (schema, batches) = columnar::open_bytes(file, bytes)?;
    let names: Vec<String> = schema.fields().iter().map(|f| f.name().clone()).collect();
    let missing: Vec<&str> = REQUIRED
        .into_iter()
        .filter(|c| !names.iter().any(|n| n == c))
        .collect();
    if !missing.is_empty() {
        return Err(DatasetError::file(
            file,
            format!(
                "missing column(s) {} (a baseten_trace has {})",
                missing.join(", "),
                REQUIRED.join(", ")
            ),
        ));
    }
    let key = session_column(&names, opts.session_column.as_deref());
    let mut rows = Vec::new();
    for batch in batches {
        let batch = batch.map_err(|e| {
            DatasetError::file(
                file,
                format!("cannot read a batch after row {}: {e}", rows.len()),
            )
        })?;
        let col = |name: &str| columnar::column(&batch, name);
        let required = |name: &str| {
            col(name).ok_or_else(|| {
                DatasetError::file(file, format!("a batch without the column {name}"))
            })
        };
        let (ts, prompt, input, output) = (
            required(TIME)?,
            required("prompt")?,
            required("input_tokens")?,
            required("output_tokens")?,
        );
        let hashes = col("total_hashes");
        let block = col("block_size");
        let session = key.and_then(col);
        let e2e = col("duration_e2e_ms");
        for i in 0..batch.num_rows() {
            let n = rows.len() + 1;
            let at = |name: &str, m: String| {
                DatasetError::field(file, None, name, format!("row {n}: {m}"))
            };
            let null = |name: &str| at(name, "is null (a required column)".into());
            let need = |name: &str, c: &Col| -> Result<u64, DatasetError> {
                c.u64_at(i)
                    .map_err(|m| at(name, m))?
                    .ok_or_else(|| null(name))
            };
            let opt = |name: &str, c: &Option<Col>| -> Result<Option<u64>, DatasetError> {
                match c {
                    Some(c) => c.u64_at(i).map_err(|m| at(name, m)),
                    None => Ok(None),
                }
            };
            let text = prompt
                .str_at(i)
                .map_err(|m| at("prompt", m))?
                .ok_or_else(|| null("prompt"))?;
            let block_size = opt("block_size", &block)?;
            if block_size == Some(0) {
                return Err(at("block_size", "must be at least 1".into()));
            }
            rows.push(Row {
                row: n,
                timestamp_ms: need(TIME, &ts)?,
                prompt: text,
                input_tokens: need("input_tokens", &input)?,
                output_tokens: need("output_tokens", &output)?,
                total_hashes: match &hashes {
                    Some(c) => c.u64_list_at(i).map_err(|m| at("total_hashes", m))?,
                    None => Vec::new(),
                },
                block_size,
                session: match (&session, key) {
                    (Some(c), Some(k)) if k == POOR_MAN => {
                        c.u64_at(i).map_err(|m| at(k, m))?.map(|v| v.to_string())
                    }
                    (Some(c), Some(k)) => c.key_at(i).map_err(|m| at(k, m))?,
                    _ => None,
                },
                duration_e2e_ms: opt("duration_e2e_ms", &e2e)?,
            });
        }
    }
    if rows.is_empty() {
        return Err(DatasetError::file(file, "has no rows"));
    }
    Ok((rows, key))
}

/// `--trace-session-sample-ratio`: sessions in order of (first time, id) are each kept with
/// probability `ratio` (at least one: a random one when none was drawn), then every row
/// without a session, in file order, is kept with the same probability. Returns the kept
/// rows in file order.
pub(crate) fn sample<R: Rng>(rows: Vec<Row>, ratio: f64, rng: &mut R) -> Vec<Row> {
    let mut first: HashMap<&str, u64> = HashMap::new();
    for r in &rows {
        if let Some(s) = &r.session {
            let e = first.entry(s.as_str()).or_insert(r.timestamp_ms);
            *e = (*e).min(r.timestamp_ms);
        }
    }
    let mut sessions: Vec<(u64, &str)> = first.into_iter().map(|(s, t)| (t, s)).collect();
    sessions.sort();
    let mut kept: Vec<&str> = sessions
        .iter()
        .filter(|_| rng.random::<f64>() < ratio)
        .map(|(_, s)| *s)
        .collect();
    if kept.is_empty() && !sessions.is_empty() {
        kept.push(sessions[rng.random_range(0..sessions.len())].1);
    }
    let kept: std::collections::HashSet<String> = kept.into_iter().map(String::from).collect();
    let nulls = rows.iter().filter(|r| r.session.is_none()).count();
    let null_kept: Vec<bool> = (0..nulls).map(|_| rng.random::<f64>() < ratio).collect();
    let mut null_at = 0;
    rows.into_iter()
        .filter(|r| match &r.session {
            Some(s) => kept.contains(s),
            None => {
                null_at += 1;
                null_kept[null_at - 1]
            }
        })
        .collect()
}

/// AIPerf's `reflow_idle_gaps`: walking the times in order (ties in given order), a gap
/// longer than `cap_ms` (rounded up to whole ms) becomes `cap_ms`; the earliest time stays.
/// Times are whole ms (truncated) on the way in.
pub(crate) fn reflow_idle_gaps(times: &mut [f64], cap_ms: f64) {
    let cap = cap_ms.ceil();
    let mut order: Vec<usize> = (0..times.len()).collect();
    for t in times.iter_mut() {
        *t = t.trunc();
    }
    order.sort_by(|&a, &b| times[a].total_cmp(&times[b]).then(a.cmp(&b)));
    let Some(&first) = order.first() else {
        return;
    };
    let (mut prev_old, mut prev_new) = (times[first], times[first]);
    for &i in &order[1..] {
        let old = times[i];
        prev_new += (old - prev_old).min(cap);
        times[i] = prev_new;
        prev_old = old;
    }
}

/// Reads a baseten_trace file's bytes as the loader does (AIPerf's default session column):
/// the row count, or the first error naming `file`. For the fuzz target.
pub fn check_baseten_bytes(file: &str, bytes: &[u8]) -> Result<usize, DatasetError> {
    match read_bytes(file, bytes.to_vec(), &BasetenReplay::default()) {
        Ok((rows, _)) => Ok(rows.len()),
        Err(WorkloadError::Dataset(e)) => Err(e),
        Err(e) => Err(DatasetError::file(file, e.to_string())),
    }
}

/// A row on its way to a turn.
struct Pending {
    row: Row,
    timestamp_ms: Option<f64>,
    delay_ms: Option<f64>,
    output_length: u64,
}

/// Builds the conversations of a baseten trace (the module's rules 1–5).
pub(crate) fn load(path: &Path, plan: &RunPlan, seed: u64) -> Result<Vec<Conv>, WorkloadError> {
    let ds = &plan.dataset;
    let opts = &ds.replay.baseten;
    let syn = &ds.replay.synthesis;
    check_extra_inputs(plan)?;
    let fs = &plan.load.fixed_schedule;
    if opts.speedup.is_some_and(|s| s != 1.0)
        && (fs.start_offset_ms.is_some() || fs.end_offset_ms.is_some())
    {
        return Err(plan_err(
            "load.fixed_schedule",
            "--fixed-schedule-start-offset/--fixed-schedule-end-offset with --replay-speedup: not built (AIPerf reads the offsets in recorded time, inferbench's schedule in replay time)",
        ));
    }
    let (rows, key) = read(path, opts)?;
    let min_ts = rows.iter().map(|r| r.timestamp_ms).min().unwrap_or(0);
    let rows = match opts.session_sample_ratio {
        // AIPerf warns and replays every row; refused here, so the flag is never ignored.
        Some(_) if key.is_none() => {
            return Err(DatasetError::file(
                path.display().to_string(),
                format!(
                    "--trace-session-sample-ratio samples sessions, and this file has neither {PROVIDED} nor {POOR_MAN}"
                ),
            )
            .into());
        }
        Some(r) if r < 1.0 => sample(rows, r, &mut rng_for(seed, SAMPLING)),
        _ => rows,
    };
    let speedup = opts.speedup.unwrap_or(1.0);
    let mut pending: Vec<Pending> = rows
        .into_iter()
        .filter(|r| super::synthesis::keep_row(syn, Some(r.input_tokens)))
        .map(|row| Pending {
            timestamp_ms: Some((row.timestamp_ms - min_ts) as f64 / speedup),
            delay_ms: None,
            output_length: row.output_tokens.max(1),
            row,
        })
        .collect();
    let cap_ms = opts.max_idle_gap_cap_seconds.map(|s| s * 1000.0);
    if opts.open_loop
        && let Some(cap) = cap_ms
    {
        reflow(&mut pending, cap);
    }

    // Sessions: named by the column, or one generated id per row; each sorted by time, and
    // the sessions ordered by (first time, id).
    let mut groups: Vec<(String, Vec<Pending>)> = Vec::new();
    let mut index: HashMap<String, usize> = HashMap::new();
    let mut unnamed = 0usize;
    // A generated id never takes one the file uses, even on a later row.
    let named: std::collections::HashSet<String> = pending
        .iter()
        .filter_map(|p| p.row.session.clone())
        .collect();
    for p in pending {
        let id = match &p.row.session {
            Some(s) => s.clone(),
            None => {
                let mut id = session_id(unnamed);
                unnamed += 1;
                while named.contains(&id) || index.contains_key(&id) {
                    id = session_id(unnamed);
                    unnamed += 1;
                }
                id
            }
        };
        match index.get(&id) {
            Some(&g) => groups[g].1.push(p),
            None => {
                index.insert(id.clone(), groups.len());
                groups.push((id, vec![p]));
            }
        }
    }
    let whole_ms = |p: &Pending| p.timestamp_ms.unwrap_or(0.0).trunc();
    for (_, g) in groups.iter_mut() {
        g.sort_by(|a, b| whole_ms(a).total_cmp(&whole_ms(b)));
    }
    groups.sort_by(|a, b| {
        let first = |g: &[Pending]| g.iter().map(whole_ms).fold(f64::INFINITY, f64::min);
        first(&a.1)
            .total_cmp(&first(&b.1))
            .then_with(|| a.0.cmp(&b.0))
    });

    // Output lengths: the synthesizer's multiplier, then the cap.
    for p in groups.iter_mut().flat_map(|(_, g)| g.iter_mut()) {
        if syn.output_len_multiplier != 1.0 {
            let scaled = (p.output_length as f64 * syn.output_len_multiplier).round_ties_even();
            p.output_length = (scaled.min(u32::MAX as f64) as u64).max(1);
        }
        p.output_length = super::synthesis::cap_output(syn, Some(p.output_length)).unwrap_or(1);
    }

    if opts.open_loop && opts.open_loop_strict {
        groups = groups
            .into_iter()
            .flat_map(|(id, g)| {
                g.into_iter()
                    .enumerate()
                    .map(move |(i, p)| (format!("{id}#{i}"), vec![p]))
            })
            .collect();
    } else if !opts.open_loop {
        back_pressure(&mut groups, speedup, ds.replay.inter_turn_delay_cap_seconds);
        if let Some(cap) = cap_ms {
            let mut timed: Vec<&mut Pending> = groups
                .iter_mut()
                .flat_map(|(_, g)| g.iter_mut())
                .filter(|p| p.timestamp_ms.is_some())
                .collect();
            let mut times: Vec<f64> = timed
                .iter()
                .map(|p| p.timestamp_ms.unwrap_or(0.0))
                .collect();
            reflow_idle_gaps(&mut times, cap);
            for (p, t) in timed.iter_mut().zip(times) {
                p.timestamp_ms = Some(t);
            }
        }
    }

    Ok(groups
        .into_iter()
        .map(|(id, g)| Conv {
            id,
            history: g.len() > 1,
            turns: g.into_iter().map(|p| turn(p, opts, path)).collect(),
        })
        .collect())
}

/// `--max-idle-gap-cap-seconds` over every row's time.
fn reflow(pending: &mut [Pending], cap_ms: f64) {
    let mut times: Vec<f64> = pending
        .iter()
        .map(|p| p.timestamp_ms.unwrap_or(0.0))
        .collect();
    reflow_idle_gaps(&mut times, cap_ms);
    for (p, t) in pending.iter_mut().zip(times) {
        p.timestamp_ms = Some(t);
    }
}

/// `--no-open-loop-replay`: a later turn of a session is sent a think time after the
/// previous one ends: its recorded start-to-start gap (whole ms) less the previous row's
/// recorded `duration_e2e_ms` (÷ speedup), at least 0, capped by
/// `--inter-turn-delay-cap-seconds`. Only the session's first turn keeps its time.
fn back_pressure(groups: &mut [(String, Vec<Pending>)], speedup: f64, cap_s: Option<f64>) {
    for (_, g) in groups.iter_mut() {
        let mut prev: Option<(f64, f64)> = None;
        for p in g.iter_mut() {
            let ts = p.timestamp_ms.unwrap_or(0.0).trunc();
            let e2e = p.row.duration_e2e_ms.unwrap_or(0) as f64 / speedup;
            if let Some((prev_ts, prev_e2e)) = prev {
                let think = ((ts - prev_ts).max(0.0) - prev_e2e).max(0.0);
                p.delay_ms = Some(match cap_s {
                    Some(c) => think.min(c * 1000.0),
                    None => think,
                });
                p.timestamp_ms = None;
            }
            prev = Some((ts, e2e));
        }
    }
}

/// The turn of one row: the literal prompt, the recorded output as `max_tokens`, and the
/// per-row body fields.
fn turn(p: Pending, opts: &BasetenReplay, path: &Path) -> TurnSpec {
    let mut extra = Map::new();
    if opts.force_min_tokens {
        extra.insert("min_tokens".into(), Value::from(p.output_length));
    }
    if !opts.omit_kv_hints {
        if !p.row.total_hashes.is_empty() {
            extra.insert("hash_ids".into(), Value::from(p.row.total_hashes.clone()));
        }
        if let Some(b) = p.row.block_size {
            extra.insert("block_size".into(), Value::from(b));
        }
    }
    TurnSpec {
        texts: vec![NamedText::plain(p.row.prompt)],
        max_tokens: Some(p.output_length),
        extra: (!extra.is_empty()).then_some(extra),
        timestamp_ms: p.timestamp_ms,
        delay_ms: p.delay_ms,
        origin: Some((path.display().to_string(), p.row.row)),
        ..Default::default()
    }
}

/// AIPerf refuses an `--extra-inputs` key that the loader would overwrite in every body,
/// naming the flag that stops the loader writing it.
fn check_extra_inputs(plan: &RunPlan) -> Result<(), WorkloadError> {
    let opts = &plan.dataset.replay.baseten;
    let mut clashes = Vec::new();
    if opts.force_min_tokens && plan.extra_inputs.contains_key("min_tokens") {
        clashes.push(("min_tokens", "--no-force-min-tokens"));
    }
    if !opts.omit_kv_hints {
        for k in ["hash_ids", "block_size"] {
            if plan.extra_inputs.contains_key(k) {
                clashes.push((k, "--omit-kv-hints"));
            }
        }
    }
    if clashes.is_empty() {
        return Ok(());
    }
    Err(plan_err(
        "extra_inputs",
        clashes
            .iter()
            .map(|(k, flag)| {
                format!("--extra-inputs {k} is overwritten per-turn by the baseten_trace loader; pass {flag} to send your value instead")
            })
            .collect::<Vec<_>>()
            .join("; "),
    ))
}

#[cfg(test)]
#[path = "baseten_tests.rs"]
mod tests;
