//! A shard of a frozen schedule (`profile --shard-index I --shard-count N`,
//! docs/scale-out.md): which sessions this process runs ([`apply`], at prepare time, before
//! anything is sent), its start at a shared instant and its clock evidence ([`gate`], in the
//! live run), the clock itself ([`clock`]: `adjtimex`, the 4-timestamp exchange and
//! `inferbench time-server`), and `inferbench merge` ([`merge`]).
//!
//! The unsharded schedule is computed in full on every shard, from the same seed and flags,
//! and cut by [`inferbench_core::shard::assign`]: a rate or trace schedule becomes the fixed
//! list of this shard's sessions (offsets from the phase start, conversations); a concurrency
//! run keeps its closed loop with C/N slots and draws only its own sessions from the shared
//! order. Its digest, equal on every shard, is what `merge` checks.

pub mod clock;
pub mod gate;
pub mod merge;

use std::sync::Arc;

use inferbench_client::engine::{LoadMode, PhaseSpec, PreparedPayload};
use inferbench_core::schedule::RateSchedule;
use inferbench_core::shard::assign::Assigner;
use serde_json::json;

use crate::{Failure, Prepared};

/// More sessions than this in one frozen schedule is refused (the list is held in memory).
const MAX_SESSIONS: usize = 10_000_000;

fn split_concurrency(total: usize, count: u32, index: u32, flag: &str) -> Result<usize, Failure> {
    inferbench_core::shard::assign::split_concurrency(total, count, index, flag)
        .map_err(Failure::input)
}

/// This process's part of the schedule, as prepared.
#[derive(Clone, Debug)]
pub struct Setup {
    pub index: u32,
    pub count: u32,
    /// `sha256:` of the unsharded schedule (equal on every shard).
    pub schedule_sha256: String,
    /// Sessions of the whole schedule (None: open-ended).
    pub total_sessions: Option<u64>,
    /// This shard's sessions and requests (None: open-ended).
    pub sessions: Option<u64>,
    pub requests: Option<u64>,
    /// This shard's slots (concurrency, or the rate's ceiling).
    pub concurrency: Option<usize>,
    /// Turns of each conversation: a session's work.
    turns: Arc<Vec<u64>>,
}

impl Setup {
    /// The engine's order for this shard: the unsharded order, assigned session by session,
    /// keeping this shard's own (a concurrency run draws from it as slots free).
    pub fn order(
        &self,
        mut next: Box<dyn FnMut() -> usize + Send>,
    ) -> Box<dyn FnMut() -> usize + Send> {
        let mut a = Assigner::new(self.count);
        let (index, turns) = (self.index, self.turns.clone());
        Box::new(move || {
            loop {
                let c = next();
                let work = turns.get(c).copied().unwrap_or(1);
                if a.assign(work) == index {
                    return c;
                }
            }
        })
    }
}

/// Turns of each conversation (payloads of one conversation are contiguous).
fn turns_of(payloads: &[PreparedPayload]) -> Vec<u64> {
    let mut v: Vec<u64> = Vec::new();
    let mut last: Option<&str> = None;
    for p in payloads {
        if last == Some(p.conversation_id.as_str()) {
            if let Some(n) = v.last_mut() {
                *n += 1;
            }
        } else {
            v.push(1);
            last = Some(&p.conversation_id);
        }
    }
    v
}

/// One session of the frozen schedule.
#[derive(Clone, Copy, Debug, PartialEq)]
struct Session {
    conversation: usize,
    /// Offset from the phase start (None: a closed loop's, due when a slot frees).
    offset_ns: Option<u64>,
    shard: u32,
    /// Its requests in the schedule: all its turns, but the last session of a
    /// count-limited schedule gets only the turns left, so the total is the count.
    turns: u64,
}

/// Sessions until their turns reach `limit`, or, with `until_ns`, while their offsets are
/// before it; every session assigned whole (its turns stay on one shard). With `limit`, the
/// last session keeps only the turns left, so the shards' requests add up to exactly the
/// count, as the unsharded engine issues exactly `--request-count`.
fn frozen(
    count: u32,
    turns: &[u64],
    mut next: impl FnMut() -> Option<(Option<u64>, usize)>,
    limit: Option<u64>,
    until_ns: Option<u64>,
) -> Result<Vec<Session>, Failure> {
    let mut a = Assigner::new(count);
    let mut out = Vec::new();
    let mut requests = 0u64;
    while limit.is_none_or(|l| requests < l) {
        let Some((offset_ns, conversation)) = next() else {
            break;
        };
        if let (Some(u), Some(o)) = (until_ns, offset_ns)
            && o >= u
        {
            break;
        }
        if out.len() >= MAX_SESSIONS {
            return Err(Failure::input(format!(
                "--shard-count: the schedule has more than {MAX_SESSIONS} sessions; shard a shorter run"
            )));
        }
        let work = turns.get(conversation).copied().unwrap_or(1);
        // The assignment counts the whole session, as `Setup::order` does on the shard.
        let planned = limit.map_or(work, |l| work.min(l - requests));
        requests += planned;
        out.push(Session {
            conversation,
            offset_ns,
            shard: a.assign(work),
            turns: planned,
        });
    }
    Ok(out)
}

/// Cuts the prepared run down to its shard (a no-op without `--shard-count`). Called by
/// [`crate::prepare`]; every refusal names the flag.
pub fn apply(p: &mut Prepared) -> Result<(), Failure> {
    let Some(sp) = p.plan.shard.clone() else {
        return Ok(());
    };
    let (index, count) = (sp.index, sp.count);
    if p.trees {
        return Err(Failure::input(
            "--shard-count with a dataset of child sessions (weka_trace, tracelab, dag_jsonl): a shard's frozen list holds root sessions only, and their children's requests are not known before the run",
        ));
    }
    if count == 0 || index >= count {
        return Err(Failure::input(format!(
            "--shard-index {index}: must be below --shard-count {count}"
        )));
    }
    if p.has_warmup() {
        return Err(Failure::input(
            "--warmup-request-count/--num-warmup-sessions/--warmup-duration with --shard-count: each shard would end its warmup at its own time and miss the shared start; warm the server up with a run of its own first",
        ));
    }
    let turns = turns_of(&p.payloads);
    let mut order = p.order()?;
    let seed = p.seed;
    let phase: &mut PhaseSpec = p
        .engine
        .phases
        .last_mut()
        .ok_or_else(|| Failure::run("no profiling phase"))?;
    let limit = phase.request_count;
    let until = phase
        .duration
        .map(|d| d.as_nanos().min(u64::MAX as u128) as u64);
    let mut sessions: Option<Vec<Session>> = None;
    let concurrency;
    let describe;
    match phase.mode.clone() {
        LoadMode::Burst {
            concurrency: c,
            ramp,
        } => {
            let mine = split_concurrency(c, count, index, "--concurrency")?;
            concurrency = Some(mine);
            describe = json!({"mode": "concurrency", "concurrency": c, "ramp_ns": ramp.map(|d| d.as_nanos() as u64)});
            if limit.is_some() {
                let mut draw = || Some((None, order()));
                sessions = Some(frozen(count, &turns, &mut draw, limit, None)?);
            }
            phase.mode = LoadMode::Burst {
                concurrency: mine,
                ramp,
            };
        }
        LoadMode::Rate {
            pattern,
            rate,
            ramp,
            series,
            ceiling,
            ceiling_ramp,
        } => {
            if ceiling_ramp.is_some() {
                return Err(Failure::input(
                    "--concurrency-ramp-duration with --request-rate and --concurrency: not with --shard-count (the ceiling's ramp is not split)",
                ));
            }
            // The engine's own schedule: the same generator, seed and label.
            let label = format!("arrivals.{}", phase.phase.as_str());
            let mut schedule = RateSchedule::new(pattern, rate, ramp, seed, &label)
                .map_err(|e| Failure::input(e.to_string()))?;
            if let Some(s) = &series {
                schedule = schedule.with_series(s.clone());
            }
            let mut draw = || Some((Some(schedule.next_offset_ns()), order()));
            let list = frozen(count, &turns, &mut draw, limit, until)?;
            concurrency = ceiling
                .map(|c| split_concurrency(c, count, index, "--concurrency"))
                .transpose()?;
            describe = json!({"mode": "rate", "rate": rate, "pattern": format!("{pattern:?}"), "ramp_ns": ramp.map(|d| d.as_nanos() as u64), "series": series.as_deref(), "ceiling": ceiling});
            phase.mode = fixed_of(&list, index, concurrency);
            sessions = Some(list);
        }
        LoadMode::Fixed {
            offsets_ns,
            conversations,
            ceiling,
        } => {
            let mut i = 0;
            let mut draw = || {
                let o = offsets_ns.get(i).copied()?;
                let c = conversations.get(i).copied().unwrap_or_else(&mut order);
                i += 1;
                Some((Some(o), c))
            };
            let list = frozen(count, &turns, &mut draw, limit, until)?;
            concurrency = ceiling
                .map(|c| split_concurrency(c, count, index, "--concurrency"))
                .transpose()?;
            describe = json!({"mode": "fixed", "ceiling": ceiling});
            phase.mode = fixed_of(&list, index, concurrency);
            sessions = Some(list);
        }
        LoadMode::UserCentric { .. } => {
            return Err(Failure::input(
                "--user-centric-rate with --shard-count: not built (a user's requests are planned from its index among all users)",
            ));
        }
    }
    if phase.prefill_ramp.is_some() {
        return Err(Failure::input(
            "--prefill-concurrency-ramp-duration with --shard-count: not built (each shard would open its own places from 1)",
        ));
    }
    if let Some(pc) = phase.prefill_concurrency {
        phase.prefill_concurrency = Some(split_concurrency(
            pc,
            count,
            index,
            "--prefill-concurrency",
        )?);
    }
    let mine: Option<Vec<&Session>> = sessions
        .as_ref()
        .map(|s| s.iter().filter(|s| s.shard == index).collect());
    let requests = mine.as_ref().map(|m| m.iter().map(|s| s.turns).sum());
    if let Some(r) = requests {
        // A count-limited phase stops at this shard's share; an open one keeps its duration.
        if limit.is_some() {
            phase.request_count = Some(r);
        }
    }
    let digest = inferbench_core::canonical::digest(&json!({
        "count": count,
        "load": describe,
        "request_count": limit,
        "duration_ns": until,
        "seed": seed,
        "sampling": p.sampling().as_str(),
        "conversations": turns.len(),
        "sessions": sessions.as_ref().map(|s| s.iter().map(|s| json!([s.conversation, s.offset_ns, s.shard, s.turns])).collect::<Vec<_>>()),
    }))
    .map_err(Failure::run)?;
    p.shard = Some(Arc::new(Setup {
        index,
        count,
        schedule_sha256: digest,
        total_sessions: sessions.as_ref().map(|s| s.len() as u64),
        sessions: mine.as_ref().map(|m| m.len() as u64),
        requests,
        concurrency,
        turns: Arc::new(turns),
    }));
    Ok(())
}

/// This shard's sessions of a frozen list as the engine's fixed schedule.
fn fixed_of(list: &[Session], index: u32, ceiling: Option<usize>) -> LoadMode {
    let mine = list.iter().filter(|s| s.shard == index);
    LoadMode::Fixed {
        offsets_ns: Arc::new(mine.clone().map(|s| s.offset_ns.unwrap_or(0)).collect()),
        conversations: Arc::new(mine.map(|s| s.conversation).collect()),
        ceiling,
    }
}

#[cfg(test)]
mod tests;
