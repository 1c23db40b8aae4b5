//! `plan_result.json` (docs/schemas/plan-result.schema.json) and the console table: one
//! entry per profile, each scored on its own (never one blended score).

use std::path::Path;

use inferbench_ledger::{Entry, Ledger, runs::Added};
use inferbench_run::exit;
use inferbench_run::gate::Verdict;
use serde::Serialize;

use super::build::Ready;
use super::spec::PlanSpec;

pub const FILE_NAME: &str = "plan_result.json";
pub const SCHEMA: &str = "inferbench.plan-result/1";

#[derive(Clone, Debug, Serialize)]
pub struct PlanResult {
    pub schema: &'static str,
    pub plan: PlanRef,
    /// The profiles' codes combined (docs/plan.md): 130, else 4, else 3, else 1, else 2,
    /// else 5, else 0.
    pub exit_code: u8,
    pub profiles: Vec<ProfileResult>,
}

#[derive(Clone, Debug, Serialize)]
pub struct PlanRef {
    pub name: String,
    pub file: String,
    pub ledger: String,
    pub output: String,
}

#[derive(Clone, Debug, Serialize)]
pub struct ProfileResult {
    pub name: String,
    pub kind: &'static str,
    pub repeats: usize,
    /// `<output>/<name>`: the run directory, or the root of the repeats.
    pub dir: String,
    /// The command line the profile ran as (credentials redacted, as in the manifest).
    pub command: String,
    /// One per run recorded in the ledger, in order.
    pub runs: Vec<RunEntry>,
    /// The run's own exit code (None: not run, the plan was interrupted before).
    pub run_exit_code: Option<u8>,
    /// None when the profile has no gate (its run's code is its code).
    pub gate: Option<GateResult>,
    pub exit_code: u8,
    pub errors: Vec<String>,
}

#[derive(Clone, Debug, Serialize)]
pub struct RunEntry {
    pub dir: String,
    /// The `run.record` entry: its line and cid.
    pub seq: u64,
    pub cid: String,
    pub packet: String,
    /// The identity's `profile` pin (regression, service-load, trace-replay).
    pub profile: Option<String>,
    pub definition_set: Option<String>,
    pub grade: String,
}

#[derive(Clone, Debug, Serialize)]
pub struct GateResult {
    pub spec: String,
    pub verdict: &'static str,
    pub exit_code: u8,
    pub verdict_digest: String,
    /// The `gate.verdict` entry's cid (None when it could not be appended: see errors).
    pub entry_cid: Option<String>,
}

impl RunEntry {
    pub fn of(a: &Added) -> RunEntry {
        let s = |k: &str| a.entry.body[k].as_str().map(str::to_string);
        RunEntry {
            dir: a.run.display().to_string(),
            seq: a.entry.seq,
            cid: a.entry.cid.clone(),
            packet: a.packet.clone(),
            profile: s("profile"),
            definition_set: s("definition_set"),
            grade: a.overall.as_str().to_string(),
        }
    }
}

impl GateResult {
    pub fn of(spec: &Path, v: &Verdict, entry: Option<&Entry>) -> GateResult {
        GateResult {
            spec: spec.display().to_string(),
            verdict: v.verdict.as_str(),
            exit_code: v.exit_code,
            verdict_digest: v.digest(),
            entry_cid: entry.map(|e| e.cid.clone()),
        }
    }
}

impl ProfileResult {
    pub fn new(r: &Ready) -> ProfileResult {
        ProfileResult {
            name: r.spec.name.clone(),
            kind: r.spec.kind.as_str(),
            repeats: r.spec.repeats,
            dir: r.dir.display().to_string(),
            command: r.sweep.cells[0].plan.cli_command.clone(),
            runs: Vec::new(),
            run_exit_code: None,
            gate: None,
            exit_code: exit::OK,
            errors: Vec::new(),
        }
    }
}

/// How bad a code is, for [`combine`]: the gate's order (INVALID, FAIL, INCONCLUSIVE), with an
/// interrupt above all, a missed schedule beside INVALID (the load was not delivered), and
/// bad input between FAIL and INCONCLUSIVE.
fn severity(code: u8) -> u8 {
    match code {
        exit::OK => 0,
        exit::GATE_INCONCLUSIVE => 1,
        exit::INPUT => 2,
        exit::FAILED => 3,
        exit::MISSED_SCHEDULE => 4,
        exit::GATE_INVALID => 5,
        exit::INTERRUPTED => 7,
        _ => 6,
    }
}

/// The plan's exit code from its profiles'.
pub fn combine(codes: impl IntoIterator<Item = u8>) -> u8 {
    codes
        .into_iter()
        .max_by_key(|c| severity(*c))
        .unwrap_or(exit::OK)
}

impl PlanResult {
    pub fn new(plan: &PlanSpec, ledger: &Ledger, profiles: Vec<ProfileResult>) -> PlanResult {
        PlanResult {
            schema: SCHEMA,
            plan: PlanRef {
                name: plan.name.clone(),
                file: plan.file.clone(),
                ledger: ledger.dir.display().to_string(),
                output: plan.output.display().to_string(),
            },
            exit_code: combine(profiles.iter().map(|p| p.exit_code)),
            profiles,
        }
    }

    pub fn to_json(&self) -> String {
        let mut s = serde_json::to_string_pretty(self).unwrap_or_default();
        s.push('\n');
        s
    }

    /// One row per profile.
    pub fn table(&self) -> String {
        let mut t = comfy_table::Table::new();
        t.load_preset(comfy_table::presets::ASCII_MARKDOWN);
        t.set_header(["profile", "kind", "runs", "grade", "ledger", "gate", "exit"]);
        for p in &self.profiles {
            let grades: Vec<&str> = p.runs.iter().map(|r| r.grade.as_str()).collect();
            let seqs: Vec<String> = p.runs.iter().map(|r| format!("line {}", r.seq)).collect();
            t.add_row([
                p.name.clone(),
                p.kind.to_string(),
                format!("{}/{}", p.runs.len(), p.repeats),
                grades.join(", "),
                seqs.join(", "),
                p.gate.as_ref().map_or(
                    if p.errors.iter().any(|e| e.starts_with("gate:")) {
                        "error".to_string()
                    } else {
                        "-".to_string()
                    },
                    |g| g.verdict.to_string(),
                ),
                p.exit_code.to_string(),
            ]);
        }
        let mut out = format!("plan {}: exit {}\n{t}", self.plan.name, self.exit_code);
        for p in &self.profiles {
            for e in &p.errors {
                out.push_str(&format!("\n{}: {e}", p.name));
            }
        }
        out
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn codes_combine_as_the_gate_rules_do() {
        assert_eq!(combine([]), 0);
        assert_eq!(combine([0, 0, 0]), 0);
        assert_eq!(combine([0, 5, 0]), 5);
        assert_eq!(combine([5, 1, 0]), 1);
        assert_eq!(combine([1, 4, 5]), 4);
        assert_eq!(combine([4, 130]), 130);
        assert_eq!(combine([3, 1]), 3);
    }
}
