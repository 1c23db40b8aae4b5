//! The client-headroom rule's qualification checks: the candidate runs against a decided
//! client-saturation qualification (`qualification = "…"`, docs/gate.md, docs/qualify.md).

use serde_json::json;

use super::Ctx;
use crate::gate::spec::{ClientHeadroomRule, QualificationRef};
use crate::gate::verdict::{Check, Outcome};
use crate::qualify::Verdict;

fn verdict_check(ctx: &Ctx, q: &QualificationRef) -> Check {
    let d = &q.decided;
    let ladder: Vec<usize> = {
        let mut w: Vec<usize> = d.runs.iter().map(|r| r.workers).collect();
        w.sort_unstable();
        w.dedup();
        w
    };
    let mut observed = json!({
        "file": q.path,
        "digest": q.digest,
        "verdict": d.verdict.as_str(),
        "qualified_workers": d.qualified_workers,
        "ladder": ladder,
    });
    let first = d.reasons.first().cloned().unwrap_or_default();
    let (verdict, reason) = match (d.verdict, d.qualified_workers) {
        (Verdict::ClientSufficient | Verdict::ServerSaturated, Some(qw)) => {
            let top = ladder.last().copied().unwrap_or(qw);
            let runs: Vec<(String, usize)> = ctx
                .obs
                .candidate
                .iter()
                .map(|r| (r.id.clone(), r.workers_max.unwrap_or(1)))
                .collect();
            observed["candidate_workers"] = json!(runs.iter().map(|r| r.1).collect::<Vec<_>>());
            if let Some((id, w)) = runs.iter().find(|r| r.1 < qw) {
                (
                    Outcome::Fail,
                    format!(
                        "run {id} ran {w} worker(s), fewer than the {qw} the qualification ({}) found sufficient",
                        d.verdict.as_str()
                    ),
                )
            } else if let Some((id, w)) = runs.iter().find(|r| r.1 > top) {
                (
                    Outcome::Inconclusive,
                    format!(
                        "run {id} ran {w} workers, beyond the largest worker count the qualification tested ({top})"
                    ),
                )
            } else {
                (
                    Outcome::Pass,
                    format!(
                        "{} at {qw} workers; every candidate run used between {qw} and {top} workers",
                        d.verdict.as_str()
                    ),
                )
            }
        }
        (Verdict::ClientLimited, _) => (Outcome::Fail, format!("CLIENT_LIMITED: {first}")),
        _ => (
            Outcome::Inconclusive,
            format!("{}: {}", d.verdict.as_str(), d.reasons.join("; ")),
        ),
    };
    Check {
        name: "client_saturation".into(),
        verdict,
        observed,
        limit: Some(json!({"qualification": q.path})),
        reason,
    }
}

/// The qualification's checks: its verdict against the candidate runs' worker counts, and
/// the spec's `worker_levels_min` and `plateau_tolerance` against what it ran and declared.
pub fn qualification_checks(ctx: &Ctx, c: &ClientHeadroomRule, q: &QualificationRef) -> Vec<Check> {
    let d = &q.decided;
    let mut checks = vec![verdict_check(ctx, q)];
    if let Some(min) = c.worker_levels_min {
        let mut levels: Vec<usize> = d.runs.iter().map(|r| r.workers).collect();
        levels.sort_unstable();
        levels.dedup();
        let n = levels.len();
        checks.push(super::check(
            "worker_levels_min",
            n >= min as usize,
            json!(n),
            Some(json!({"op": ">=", "value": min})),
            format!("the qualification ran {n} worker counts {levels:?} (minimum {min})"),
        ));
    }
    if let Some(tol) = c.plateau_tolerance {
        let declared = d.spec.tolerance_pct;
        checks.push(super::check(
            "plateau_tolerance",
            declared <= tol * 100.0,
            super::num(declared / 100.0),
            Some(json!({"op": "<=", "value": tol})),
            format!(
                "the qualification declared τ = {declared} % (the spec allows at most {} %)",
                tol * 100.0
            ),
        ));
    }
    checks
}
