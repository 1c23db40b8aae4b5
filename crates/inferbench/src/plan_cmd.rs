//! `inferbench plan run|check PLAN.toml` (docs/plan.md): the seed's traffic matrix. Every
//! profile is built and checked before the first one runs (`check` stops there); then each
//! runs as `inferbench profile` would, is recorded in the ledger and gated on its own.

mod build;
mod result;
mod spec;

use std::path::Path;
use std::sync::{Arc, Mutex};

use inferbench_ledger::{Ledger, Stamp, gates, runs};
use inferbench_run::gate::GateInput;
use inferbench_run::{Failure, exit};

use crate::cli::{PlanArgs, PlanCommand};
use build::Ready;
pub use result::{GateResult, PlanResult, ProfileResult, RunEntry};

pub fn run(a: &PlanArgs) -> Result<u8, Failure> {
    match &a.command {
        PlanCommand::Check { plan } => {
            let (spec, ready) = validate(plan)?;
            for r in &ready {
                println!(
                    "{}: {}, {} run{}{} -> {}\n  {}",
                    r.spec.name,
                    r.spec.kind.as_str(),
                    r.spec.repeats,
                    if r.spec.repeats == 1 { "" } else { "s" },
                    r.gate
                        .as_ref()
                        .map_or(String::new(), |(g, _)| format!(", gate {}", g.display())),
                    r.dir.display(),
                    r.sweep.cells[0].plan.cli_command,
                );
            }
            println!(
                "plan {}: {} profiles checked; nothing was run",
                spec.name,
                ready.len()
            );
            Ok(exit::OK)
        }
        PlanCommand::Run { plan } => run_plan(plan),
    }
}

/// `plan check`'s work: the plan file, every profile built, the ledger readable, no profile
/// directory already holding files.
fn validate(path: &Path) -> Result<(spec::PlanSpec, Vec<Ready>), Failure> {
    let plan = spec::read(path).map_err(Failure::input)?;
    let ready = build::build_all(&plan).map_err(Failure::input)?;
    for r in &ready {
        for w in &r.warnings {
            eprintln!("inferbench: warning: {}: {w}", r.spec.field("args"));
        }
        let busy = std::fs::read_dir(&r.dir).is_ok_and(|mut d| d.next().is_some());
        if busy {
            return Err(Failure::input(spec::located(
                &plan.file,
                r.spec.line,
                &r.spec.field("name"),
                format!(
                    "{} already holds files: a plan writes each profile afresh (move it, or change plan.output)",
                    r.dir.display()
                ),
            )));
        }
    }
    // An existing ledger must open; a directory without one must be empty (init refuses
    // anything else, and that would come after the check).
    let at_ledger = |m: String| {
        Failure::input(spec::located(
            &plan.file,
            plan.ledger_line,
            "plan.ledger",
            m,
        ))
    };
    if has_ledger(&plan.ledger) {
        Ledger::open(&plan.ledger).map_err(|f| at_ledger(f.message))?;
    } else if std::fs::read_dir(&plan.ledger).is_ok_and(|mut d| d.next().is_some()) {
        return Err(at_ledger(format!(
            "{} holds files but no ledger.jsonl: not a ledger",
            plan.ledger.display()
        )));
    }
    Ok((plan, ready))
}

fn has_ledger(dir: &Path) -> bool {
    dir.join("ledger.jsonl").exists()
}

fn stamp() -> Stamp {
    let by = std::env::var("USER")
        .ok()
        .filter(|s| !s.is_empty())
        .unwrap_or_else(|| "unknown".into());
    Stamp::now(&by)
}

fn run_plan(path: &Path) -> Result<u8, Failure> {
    let (plan, ready) = validate(path)?;
    let ledger = if has_ledger(&plan.ledger) {
        Ledger::open(&plan.ledger)?
    } else {
        Ledger::init(&plan.ledger, &stamp())?
    };
    let mut profiles = Vec::with_capacity(ready.len());
    for (i, r) in ready.iter().enumerate() {
        eprintln!(
            "inferbench: plan {}: profile {}/{}: {} ({})",
            plan.name,
            i + 1,
            ready.len(),
            r.spec.name,
            r.spec.kind.as_str()
        );
        let res = run_profile(&ledger, r);
        let stop = res.exit_code == exit::INTERRUPTED;
        profiles.push(res);
        if stop {
            break;
        }
    }
    let result = PlanResult::new(&plan, &ledger, profiles);
    std::fs::create_dir_all(&plan.output)
        .map_err(|e| Failure::run(format!("{}: {e}", plan.output.display())))?;
    let out = plan.output.join(result::FILE_NAME);
    std::fs::write(&out, result.to_json())
        .map_err(|e| Failure::run(format!("{}: {e}", out.display())))?;
    println!("{}", result.table());
    eprintln!("inferbench: plan result in {}", out.display());
    Ok(result.exit_code)
}

/// One profile: run, record each run, gate. A failure is kept in the result, not raised, so
/// the other profiles still run.
fn run_profile(ledger: &Ledger, r: &Ready) -> ProfileResult {
    let mut res = ProfileResult::new(r);
    let printer = Arc::new(crate::profile::Printer {
        several: r.spec.repeats > 1,
        tables: true,
        streaming_given: r.streaming_given,
        progress: Mutex::new(None),
        sweep_table: Mutex::new(None),
        trace_timing: false,
    });
    let run_code = match inferbench_run::run_sweep_declared(&r.sweep, &r.declared, printer) {
        Ok(o) => {
            if let Some(f) = o.failure {
                res.errors.push(f.message);
            }
            o.code
        }
        Err(f) => {
            res.errors.push(f.message);
            f.code
        }
    };
    res.run_exit_code = Some(run_code);
    res.exit_code = run_code;
    if run_code == exit::INTERRUPTED {
        return res;
    }
    let root = inferbench_run::sweep::root_of(&r.sweep);
    if !root.exists() {
        return res;
    }
    match runs::add(ledger, &root, &r.declares, &stamp()) {
        Ok(added) => {
            for a in &added {
                let pin = a.entry.body["profile"].as_str().map(str::to_string);
                if pin.as_deref() != Some(r.spec.kind.as_str()) {
                    res.errors.push(format!(
                        "{}: the run's identity says profile {:?}, the plan says {}",
                        a.run.display(),
                        pin,
                        r.spec.kind.as_str()
                    ));
                    res.exit_code = res.exit_code.max(exit::FAILED);
                }
                res.runs.push(RunEntry::of(a));
            }
        }
        Err(f) => {
            res.errors.push(format!("ledger: {}", f.message));
            res.exit_code = res.exit_code.max(exit::FAILED);
            return res;
        }
    }
    if let Some((gate_path, spec)) = &r.gate {
        let input = GateInput {
            // Ids left to the evaluator: the evidence digests, as `gate` reports them for the
            // same runs named by directory or by cid.
            candidate: vec![root.clone()],
            ..GateInput::default()
        };
        let verdict = inferbench_run::gate::evaluate(spec, &input);
        res.exit_code = match verdict {
            Ok(v) => {
                let entry = gates::record_verdict(ledger, &v, &stamp());
                let g = GateResult::of(gate_path, &v, entry.as_ref().ok());
                if let Err(f) = entry {
                    res.errors.push(format!("ledger: {}", f.message));
                }
                res.gate = Some(g);
                v.exit_code
            }
            Err(f) => {
                res.errors.push(format!("gate: {}", f.message));
                // A gate that could not judge shows nothing: its failure's own code.
                f.code
            }
        };
    }
    res
}
