//! `inferbench qualify`: flags → the ladder → the run library → the verdict on the terminal.

use std::path::PathBuf;
use std::sync::{Arc, Mutex};

use inferbench_run::qualify::QualifySpec;
use inferbench_run::qualify_run::{LadderPlan, ladder_up_to, run_ladder};
use inferbench_run::{CellPlan, Failure};

use crate::cli::QualifyArgs;

/// The default thresholds with a TOML file's `[gates]` keys over them; an unknown key or a
/// value of the wrong type is a one-line error naming the file and the key.
fn thresholds(
    path: &std::path::Path,
    defaults: &inferbench_run::qualify::GateThresholds,
) -> Result<inferbench_run::qualify::GateThresholds, Failure> {
    let at = path.display();
    let text = std::fs::read_to_string(path).map_err(|e| Failure::input(format!("{at}: {e}")))?;
    let v: serde_json::Value =
        toml::from_str(&text).map_err(|e| Failure::input(format!("{at}: {e}")))?;
    let mut base = serde_json::to_value(defaults).map_err(|e| Failure::run(e.to_string()))?;
    let top = v.as_object().cloned().unwrap_or_default();
    for k in top.keys() {
        if k != "gates" {
            return Err(Failure::input(format!(
                "{at}: unknown key {k:?} (thresholds go in a [gates] table)"
            )));
        }
    }
    if let Some(g) = top.get("gates") {
        let g = g
            .as_object()
            .ok_or_else(|| Failure::input(format!("{at}: gates: not a table")))?;
        for (k, x) in g {
            let slot = base
                .get_mut(k)
                .ok_or_else(|| Failure::input(format!("{at}: gates.{k}: not a gate threshold")))?;
            *slot = x.clone();
        }
    }
    serde_json::from_value(base).map_err(|e| Failure::input(format!("{at}: gates: {e}")))
}

pub fn run(q: &QualifyArgs, argv: &[String]) -> Result<u8, Failure> {
    let a = &q.profile;
    let cells = crate::cli::cells(a).map_err(Failure::input)?;
    if cells.len() != 1 {
        return Err(Failure::input(
            "qualify runs one workload: give single values, not sweep lists",
        ));
    }
    if a.num_profile_runs != 1 {
        return Err(Failure::input(
            "qualify: --num-profile-runs does not apply (use --repeats)",
        ));
    }
    let declared = crate::cli::declarations(a).map_err(Failure::input)?;
    let c = cells.into_iter().next().expect("one cell");
    let mut plan = crate::cli::build_plan(a, argv, &c.values).map_err(Failure::input)?;
    // Every run of the ladder sends the same frozen workload.
    if plan.random_seed.is_none() {
        plan.random_seed = Some(42);
    }
    let ladder = if q.workers_ladder.is_empty() {
        let max = plan
            .workers_max
            .unwrap_or_else(|| std::thread::available_parallelism().map_or(2, |n| n.get()));
        ladder_up_to(max)
    } else {
        let mut l = q.workers_ladder.clone();
        if l.contains(&0) {
            return Err(Failure::input("--workers-ladder: worker counts start at 1"));
        }
        if l.windows(2).any(|w| w[0] >= w[1]) {
            return Err(Failure::input(
                "--workers-ladder: worker counts must be strictly ascending",
            ));
        }
        l.dedup();
        l
    };
    if !(q.tolerance_pct.is_finite() && q.tolerance_pct > 0.0 && q.tolerance_pct < 100.0) {
        return Err(Failure::input(format!(
            "--tolerance-pct {}: a percentage above 0 and below 100",
            q.tolerance_pct
        )));
    }
    let root = PathBuf::from(a.artifact_dir.clone().unwrap_or_else(|| {
        format!(
            "{}/{}",
            plan.artifacts.dir,
            inferbench_core::plan::artifact_dir_name(
                &plan.models[0],
                plan.endpoint_type,
                "qualify"
            )
        )
    }));
    let mut spec = QualifySpec {
        tolerance_pct: q.tolerance_pct,
        prefer_headroom: q.prefer_headroom,
        ..QualifySpec::default()
    };
    if let Some(path) = &q.thresholds {
        spec.gates = thresholds(path, &spec.gates)?;
    }
    let printer = Arc::new(crate::profile::Printer {
        several: true,
        tables: false,
        streaming_given: argv.iter().any(|s| s == "--streaming"),
        progress: Mutex::new(None),
        sweep_table: Mutex::new(None),
        trace_timing: false,
    });
    let l = LadderPlan {
        base: CellPlan {
            plan,
            parameters: Vec::new(),
            dir_name: None,
            seed_label: None,
        },
        ladder,
        repeats: q.repeats,
        spec,
        root,
        cooldown_s: a.parameter_sweep_cooldown_seconds,
    };
    let out = run_ladder(&l, &declared, printer)?;
    println!("{}", out.console);
    eprintln!(
        "inferbench: qualification in {}",
        out.root
            .join(inferbench_run::qualify_run::QUALIFICATION_JSON)
            .display()
    );
    Ok(out.code)
}
