//! From the frozen workload to what the engine sends: payloads with their session timing,
//! and, for trace replay, the fixed schedule (`--fixed-schedule` and its offsets).

use std::time::Duration;

use bytes::Bytes;
use inferbench_client::engine::{ChildBranch, PreparedPayload};
use inferbench_core::RunPlan;
use inferbench_core::workload::Workload;

/// A trace's schedule: session k starts conversation `conversations[k]` at `offsets_ns[k]`
/// from the phase start.
#[derive(Clone, Debug, PartialEq)]
pub struct FixedSchedule {
    pub offsets_ns: Vec<u64>,
    pub conversations: Vec<usize>,
    /// Requests (turns) in the kept sessions: the default request count.
    pub requests: u64,
    /// The trace time that became offset 0 (ms).
    pub zero_ms: f64,
}

#[derive(Clone, Debug)]
pub struct Prepared {
    pub payloads: Vec<PreparedPayload>,
    /// Number of root conversations (what the sampler draws from).
    pub conversations: usize,
    /// The conversation index of each root, in workload order: the sampler's k-th
    /// conversation is `roots[k]` (every conversation, unless some are children).
    pub roots: Vec<usize>,
    /// Some conversation is a child session (an agentic dataset).
    pub trees: bool,
    /// Every turn of every conversation.
    pub requests: u64,
    pub fixed: Option<FixedSchedule>,
}

/// Groups the workload into conversations (its turns are contiguous), converts their
/// timing, and builds the fixed schedule when it is on: asked for with `--fixed-schedule`,
/// or by itself when the first record has a timestamp (unless `--no-fixed-schedule`).
pub fn prepare(plan: &RunPlan, workload: &Workload) -> Result<Prepared, String> {
    let first_has_ts = workload
        .payloads
        .first()
        .is_some_and(|p| p.timestamp_ms.is_some());
    prepare_with(plan, workload, first_has_ts)
}

/// [`prepare`], with whether the dataset turns a fixed schedule on by itself (its loader
/// knows: a WEKA trace's times do not).
pub fn prepare_with(
    plan: &RunPlan,
    workload: &Workload,
    auto_fixed: bool,
) -> Result<Prepared, String> {
    let fs = plan.load.fixed_schedule;
    let fixed_on = fs.enabled.unwrap_or(auto_fixed);

    // Conversation c covers payloads[starts[c] .. starts[c] + lens[c]].
    let mut starts: Vec<(usize, usize)> = Vec::new();
    for (i, p) in workload.payloads.iter().enumerate() {
        match starts.last_mut() {
            Some((s, n)) if workload.payloads[*s].conversation_id == p.conversation_id => *n += 1,
            _ => starts.push((i, 1)),
        }
    }

    let roots: Vec<usize> = (0..starts.len())
        .filter(|&c| !workload.payloads[starts[c].0].child)
        .collect();
    let trees = roots.len() < starts.len();
    let index: std::collections::HashMap<&str, usize> = starts
        .iter()
        .enumerate()
        .map(|(c, &(s, _))| (workload.payloads[s].conversation_id.as_str(), c))
        .collect();

    let mut fixed = None;
    let mut zero_ms = 0.0;
    if fixed_on {
        let mut firsts = Vec::with_capacity(starts.len());
        // Child sessions start from their parents, not from the schedule.
        for &c in &roots {
            let s = starts[c].0;
            let p = &workload.payloads[s];
            let ts = p.timestamp_ms.ok_or_else(|| {
                format!(
                    "--fixed-schedule: conversation {} has no timestamp on its first turn (every session of a fixed schedule needs one)",
                    p.conversation_id
                )
            })?;
            if !(ts.is_finite() && ts >= 0.0) {
                return Err(format!(
                    "--fixed-schedule: conversation {}: timestamp {ts} is not a number ≥ 0",
                    p.conversation_id
                ));
            }
            let kept = fs.start_offset_ms.is_none_or(|s| ts >= s as f64)
                && fs.end_offset_ms.is_none_or(|e| ts <= e as f64);
            if kept {
                firsts.push((ts, c));
            }
        }
        if firsts.is_empty() {
            return Err(
                "--fixed-schedule-start-offset/--fixed-schedule-end-offset: no session of the trace falls inside the offsets"
                    .into(),
            );
        }
        // Stable: sessions at the same instant keep the dataset's order.
        firsts.sort_by(|a, b| a.0.total_cmp(&b.0));
        zero_ms = if fs.auto_offset {
            firsts[0].0
        } else {
            fs.start_offset_ms.map_or(0.0, |s| s as f64)
        };
        let offsets_ns = firsts
            .iter()
            .map(|(ts, _)| ms_to_ns(ts - zero_ms))
            .collect();
        let conversations: Vec<usize> = firsts.iter().map(|(_, c)| *c).collect();
        let requests = conversations
            .iter()
            .map(|&c| tree_requests(workload, &starts, &index, c, 0))
            .sum();
        fixed = Some(FixedSchedule {
            offsets_ns,
            conversations,
            requests,
            zero_ms,
        });
    } else if fs.auto_offset || fs.start_offset_ms.is_some() || fs.end_offset_ms.is_some() {
        return Err(
            "--fixed-schedule-auto-offset/-start-offset/-end-offset apply to a fixed schedule: add --fixed-schedule (or use a dataset with timestamps)"
                .into(),
        );
    }

    let payloads = workload
        .payloads
        .iter()
        .enumerate()
        .map(|(i, p)| {
            Ok(PreparedPayload {
                conversation_id: p.conversation_id.clone(),
                turn_index: p.turn_index,
                body: wire_body(plan, i, &p.body)?,
                input_tokens: p.input_tokens,
                requested_output_tokens: p.requested_output_tokens,
                delay: p
                    .delay_ms
                    .filter(|d| d.is_finite() && *d > 0.0)
                    .map(|ms| Duration::from_nanos(ms_to_ns(ms))),
                // A later turn's own trace time counts only under a fixed schedule.
                schedule_ns: match (&fixed, p.turn_index, p.timestamp_ms) {
                    (Some(_), 1.., Some(ts)) => Some(ms_to_ns((ts - zero_ms).max(0.0))),
                    _ => None,
                },
                history: p.history,
                media: p.media,
                branches: p
                    .branches
                    .iter()
                    .map(|b| ChildBranch {
                        children: b
                            .children
                            .iter()
                            .filter_map(|id| index.get(id.as_str()).copied())
                            .map(|c| (c, child_offset(b.start_ms, &workload.payloads[starts[c].0])))
                            .collect(),
                        fork: b.fork,
                        join_turn: b.join_turn,
                    })
                    .collect(),
            })
        })
        .collect::<Result<_, String>>()?;
    Ok(Prepared {
        payloads,
        conversations: roots.len(),
        roots,
        trees,
        requests: workload.payloads.len() as u64,
        fixed,
    })
}

/// How long after its spawning turn ended a child's first turn is due: its trace time past
/// the branch's (AIPerf's dispatch offset); zero without both times.
fn child_offset(start_ms: Option<f64>, first: &inferbench_core::workload::Payload) -> Duration {
    match (start_ms, first.timestamp_ms) {
        (Some(s), Some(t)) if t > s => Duration::from_nanos(ms_to_ns(t - s)),
        _ => Duration::ZERO,
    }
}

/// Requests of conversation `c` with every child session it starts, recursively (a DAG
/// file's branches are acyclic; the depth guard keeps a bad one from recursing forever).
fn tree_requests(
    w: &Workload,
    starts: &[(usize, usize)],
    index: &std::collections::HashMap<&str, usize>,
    c: usize,
    depth: usize,
) -> u64 {
    let (s, n) = starts[c];
    let own = n as u64;
    if depth > 64 {
        return own;
    }
    let kids: u64 = w.payloads[s..s + n]
        .iter()
        .flat_map(|p| p.branches.iter().flat_map(|b| b.children.iter()))
        .filter_map(|id| index.get(id.as_str()))
        .map(|&k| tree_requests(w, starts, index, k, depth + 1))
        .sum();
    own + kids
}

/// The bytes that go on the wire for a frozen body: the body itself, or for a form endpoint
/// (`audio_transcription`) its multipart encoding, made once here so that no request pays
/// for it (the Content-Type with the boundary is one of the plan's headers).
fn wire_body(plan: &RunPlan, index: usize, body: &str) -> Result<Bytes, String> {
    if !plan.endpoint_type.multipart() {
        return Ok(Bytes::from(body.to_owned()));
    }
    let json: serde_json::Map<String, serde_json::Value> = serde_json::from_str(body)
        .map_err(|e| format!("payload {index}: a form body must be a JSON object ({e})"))?;
    inferbench_client::multipart::form_body(&json)
        .map(Bytes::from)
        .map_err(|e| format!("payload {index}: {e}"))
}

fn ms_to_ns(ms: f64) -> u64 {
    (ms * 1e6).round().max(0.0) as u64
}

#[cfg(test)]
mod tests {
    use super::*;
    use inferbench_core::workload::Payload;

    fn payload(conv: &str, turn: u32, ts: Option<f64>, delay: Option<f64>) -> Payload {
        Payload {
            conversation_id: conv.into(),
            turn_index: turn,
            body: "{}".into(),
            timestamp_ms: ts,
            delay_ms: delay,
            ..Default::default()
        }
    }

    fn plan_with(f: impl FnOnce(&mut inferbench_core::plan::FixedSchedulePlan)) -> RunPlan {
        let mut plan = crate::test_plan::plan();
        f(&mut plan.load.fixed_schedule);
        plan
    }

    fn trace() -> Workload {
        Workload {
            payloads: vec![
                payload("a", 0, Some(1000.0), None),
                payload("b", 0, Some(500.0), None),
                payload("b", 1, Some(2500.0), Some(100.0)),
                payload("c", 0, Some(3000.0), None),
            ],
        }
    }

    #[test]
    fn timestamps_turn_the_fixed_schedule_on_and_sessions_go_in_time_order() {
        let p = prepare(&plan_with(|_| {}), &trace()).unwrap();
        let f = p.fixed.expect("on by itself");
        // No auto-offset: trace times are offsets from 0.
        assert_eq!(f.offsets_ns, [500_000_000, 1_000_000_000, 3_000_000_000]);
        assert_eq!(f.conversations, [1, 0, 2]);
        assert_eq!(f.requests, 4);
        assert_eq!(p.conversations, 3);
        // b's second turn: its trace time, and its delay.
        assert_eq!(p.payloads[2].schedule_ns, Some(2_500_000_000));
        assert_eq!(p.payloads[2].delay, Some(Duration::from_millis(100)));
        assert_eq!(p.payloads[0].schedule_ns, None);
    }

    #[test]
    fn auto_offset_and_inclusive_offsets() {
        let p = prepare(
            &plan_with(|f| {
                f.auto_offset = true;
                f.start_offset_ms = Some(1000);
                f.end_offset_ms = Some(3000);
            }),
            &trace(),
        )
        .unwrap();
        let f = p.fixed.unwrap();
        // b (500) is cut; a (1000) and c (3000) are kept, both bounds inclusive; a is zero.
        assert_eq!(f.conversations, [0, 2]);
        assert_eq!(f.offsets_ns, [0, 2_000_000_000]);
        assert_eq!(f.requests, 2);
        assert_eq!(f.zero_ms, 1000.0);
    }

    #[test]
    fn a_start_offset_without_auto_offset_is_the_zero() {
        let p = prepare(&plan_with(|f| f.start_offset_ms = Some(1000)), &trace()).unwrap();
        assert_eq!(p.fixed.unwrap().offsets_ns, [0, 2_000_000_000]);
    }

    #[test]
    fn no_fixed_schedule_and_missing_timestamps() {
        let p = prepare(&plan_with(|f| f.enabled = Some(false)), &trace()).unwrap();
        assert!(p.fixed.is_none());
        assert!(p.payloads.iter().all(|p| p.schedule_ns.is_none()));
        let mut w = trace();
        w.payloads[3].timestamp_ms = None;
        let e = prepare(&plan_with(|_| {}), &w).unwrap_err();
        assert!(e.contains("conversation c has no timestamp"), "{e}");
        let e = prepare(
            &plan_with(|f| {
                f.enabled = Some(false);
                f.auto_offset = true;
            }),
            &trace(),
        )
        .unwrap_err();
        assert!(e.contains("--fixed-schedule"), "{e}");
    }
}
