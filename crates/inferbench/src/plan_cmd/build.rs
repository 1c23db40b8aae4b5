//! A profile of the plan → the argv of `inferbench profile`, parsed by the same clap schema
//! and built by the same `cli::cells` / `cli::build_plan`, then checked against its kind.
//! Everything here runs before the first request of the plan is sent.

use std::path::{Path, PathBuf};
use std::sync::Arc;

use clap::FromArgMatches;
use inferbench_core::identity::Declaration;
use inferbench_core::plan::{ArrivalKind, RunPlan};
use inferbench_run::gate::GateSpec;
use inferbench_run::{CellPlan, SweepPlan};
use inferbench_workload::Tokenizer;

use super::spec::{At, Kind, Load, PlanSpec, ProfileSpec, located};
use crate::cli::ProfileArgs;

/// Flags whose value is a file: relative values are read against the plan file's directory.
const PATH_FLAGS: &[&str] = &[
    "--input-file",
    "--prompt-corpus",
    "--system-prompt-file",
    "--public-dataset-path",
    "--identity",
];

/// Flags the plan sets itself, from its own fields.
const PLAN_FLAGS: &[(&str, &str)] = &[
    ("--artifact-dir", "the plan's output directory"),
    ("--output-artifact-dir", "the plan's output directory"),
    ("--num-profile-runs", "the profile's repeats"),
    ("--declare", "the profile's declare list"),
];

/// A profile ready to run.
pub struct Ready {
    pub spec: ProfileSpec,
    pub sweep: SweepPlan,
    pub declared: Vec<Declaration>,
    pub declares: Vec<String>,
    pub gate: Option<(PathBuf, GateSpec)>,
    /// `<output>/<name>`: the run directory (or the root of its repeats).
    pub dir: PathBuf,
    pub streaming_given: bool,
    pub warnings: Vec<String>,
}

/// Every profile of `plan`, ready; the first error stops the check.
pub fn build_all(plan: &PlanSpec) -> Result<Vec<Ready>, String> {
    plan.profiles.iter().map(|p| build(plan, p)).collect()
}

fn build(plan: &PlanSpec, p: &ProfileSpec) -> Result<Ready, String> {
    let file = plan.file.as_str();
    let base = Path::new(file)
        .parent()
        .unwrap_or(Path::new(""))
        .to_path_buf();
    let dir = plan.output.join(&p.name);
    let mut argv: Vec<String> = vec!["inferbench".into(), "profile".into()];
    argv.extend(flags(file, "defaults.args", &plan.defaults, &base)?);
    let load_field = match &p.load {
        Load::Args(args) => {
            argv.extend(flags(file, &p.field("args"), args, &base)?);
            p.field("args")
        }
        Load::AiperfConfig {
            path,
            scenario,
            simulated,
        } => {
            let f = p.field("aiperf_config");
            let opts = crate::aiperf_config::Options {
                scenario: scenario.clone(),
                simulated: *simulated,
                ..Default::default()
            };
            let mapped = crate::aiperf_config::profile_flags(path, &opts)
                .map_err(|e| located(file, p.load_line, &f, e))?;
            argv.extend(mapped);
            f
        }
    };
    let at_load = |m: String| located(file, p.load_line, &load_field, m);
    argv.extend([
        "--artifact-dir".to_string(),
        dir.display().to_string(),
        "--num-profile-runs".to_string(),
        p.repeats.to_string(),
    ]);
    for d in &p.declare {
        if !d.value.contains('=') {
            return Err(located(
                file,
                d.line,
                &p.field("declare"),
                format!("\"{}\": KEY=VALUE", d.value),
            ));
        }
        argv.extend(["--declare".to_string(), d.value.clone()]);
    }
    let (a, warnings) = parse_profile_argv(&argv)
        .map_err(|e| {
            if e.contains("cannot be used multiple times") && !plan.defaults.is_empty() {
                format!("{e} (a flag of defaults.args may not be given again by a profile)")
            } else {
                e
            }
        })
        .map_err(at_load)?;
    if !a.aiperf.variants.is_empty() {
        return Err(at_load(
            "--variant makes a sweep: a plan profile is one workload (declare one profile per variant)".into(),
        ));
    }
    let cells = crate::cli::cells(&a).map_err(at_load)?;
    if cells.len() > 1 {
        return Err(at_load(format!(
            "the flags make a sweep of {} cells: a plan profile is one workload (declare one profile per cell)",
            cells.len()
        )));
    }
    let declared =
        crate::cli::declarations(&a).map_err(|m| located(file, p.line, &p.field("declare"), m))?;
    let mut plans = Vec::new();
    for c in cells {
        let mut rp = crate::cli::build_plan(&a, &argv, &c.values).map_err(at_load)?;
        // As `profile`: repeated runs share one seed (AIPerf's --set-consistent-seed).
        rp.random_seed = crate::profile::base_seed(&a, a.num_profile_runs > 1);
        check_kind(p.kind, &a, &rp).map_err(|m| {
            located(
                file,
                p.load_line,
                &load_field,
                format!("kind = \"{}\": {m}", p.kind.as_str()),
            )
        })?;
        // The dataset and the tokenizer are read now, so that a bad file fails the check.
        let tok = Tokenizer::load_for(&rp.tokenizer, rp.dataset.apply_chat_template)
            .map_err(|e| at_load(format!("--tokenizer: {e}")))?;
        inferbench_run::prepare(&rp, Arc::new(tok)).map_err(|f| at_load(f.message))?;
        plans.push(CellPlan {
            plan: rp,
            parameters: c.parameters,
            dir_name: c.dir_name,
            seed_label: None,
        });
    }
    let gate = match &p.gate {
        None => None,
        Some(g) => {
            let spec = inferbench_run::gate::parse_file(&g.value)
                .map_err(|f| located(file, g.line, &p.field("gate"), f.message))?;
            Some((g.value.clone(), spec))
        }
    };
    let sweep = crate::profile::sweep_plan(&a, plans, true);
    Ok(Ready {
        spec: p.clone(),
        streaming_given: argv.iter().any(|s| s == "--streaming"),
        sweep,
        declared,
        declares: p.declare.iter().map(|d| d.value.clone()).collect(),
        gate,
        dir,
        warnings,
    })
}

/// The plan's flag strings, with file values resolved and the plan's own flags refused.
fn flags(file: &str, field: &str, args: &[At<String>], base: &Path) -> Result<Vec<String>, String> {
    let mut out = Vec::with_capacity(args.len());
    let mut i = 0;
    while i < args.len() {
        let s = &args[i];
        let (flag, inline) = match s.value.split_once('=') {
            Some((f, v)) if f.starts_with("--") => (f, Some(v)),
            _ => (s.value.as_str(), None),
        };
        if let Some((_, why)) = PLAN_FLAGS.iter().find(|(f, _)| *f == flag) {
            return Err(located(
                file,
                s.line,
                field,
                format!("{flag}: set by {why}, not in args"),
            ));
        }
        if PATH_FLAGS.contains(&flag) || flag == "--tokenizer" {
            let (value, line) = match inline {
                Some(v) => (v.to_string(), s.line),
                None => match args.get(i + 1) {
                    Some(v) => {
                        i += 1;
                        (v.value.clone(), v.line)
                    }
                    None => {
                        out.push(s.value.clone());
                        break;
                    }
                },
            };
            let resolved = super::spec::resolve_in(base, &value);
            let value = if flag == "--tokenizer" {
                // A tokenizer is a name or a local path: only a path that exists is rebased.
                if resolved.exists() {
                    resolved.display().to_string()
                } else {
                    value
                }
            } else if resolved.exists() {
                resolved.display().to_string()
            } else {
                return Err(located(
                    file,
                    line,
                    field,
                    format!("{flag} {value}: no such file ({})", resolved.display()),
                ));
            };
            out.push(flag.to_string());
            out.push(value);
        } else {
            out.push(s.value.clone());
        }
        i += 1;
    }
    Ok(out)
}

/// The argv through `profile`'s own parsing: clap, the unbuilt flags, the given-without
/// checks. Returns the flags and the warnings.
fn parse_profile_argv(argv: &[String]) -> Result<(ProfileArgs, Vec<String>), String> {
    let m = crate::cli::command_with_unbuilt()
        .try_get_matches_from(argv)
        .map_err(|e| {
            let text = e.render().to_string();
            let first = text.lines().next().unwrap_or_default();
            first.trim_start_matches("error: ").to_string()
        })?;
    crate::cli::check_unbuilt(&m)?;
    let warnings = crate::cli::check_given(&m)?;
    match crate::cli::Cli::from_arg_matches(&m)
        .map_err(|e| e.to_string())?
        .command
    {
        crate::cli::Command::Profile(a) => Ok((*a, warnings)),
        _ => Err("not a profile command".into()),
    }
}

/// What the flags make of the profile, against the kind it says it is. The identity's
/// `profile` pin follows from the arrival mode (`run_identity.rs`): this is the same rule,
/// applied before the run.
fn check_kind(kind: Kind, a: &ProfileArgs, p: &RunPlan) -> Result<(), String> {
    let l = &p.load;
    if l.user_centric.is_some() {
        return Err(
            "--user-centric-rate is user-centric load, not one of the plan's three kinds".into(),
        );
    }
    let says = if l.fixed_schedule.enabled == Some(true) {
        Kind::TraceReplay
    } else if l.request_rate.is_some() {
        Kind::ServiceLoad
    } else {
        Kind::Regression
    };
    if says != kind {
        let how = match says {
            Kind::TraceReplay => "--fixed-schedule",
            Kind::ServiceLoad => "--request-rate",
            Kind::Regression => "no --request-rate and no --fixed-schedule: fixed concurrency",
        };
        return Err(format!("the flags make a {} ({how})", says.as_str()));
    }
    let stop_given = l.request_count_given || l.benchmark_duration_s.is_some();
    match kind {
        Kind::Regression => {
            if a.input_file.is_some() || a.public_dataset.is_some() {
                return Err("a regression is fixed-length synthetic prompts: no --input-file or --public-dataset".into());
            }
            if p.isl.stddev != 0.0 {
                return Err(format!(
                    "--synthetic-input-tokens-stddev {}: a regression's lengths are fixed (0)",
                    p.isl.stddev
                ));
            }
            let Some(osl) = p.osl else {
                return Err("--output-tokens-mean: a regression fixes the output length".into());
            };
            if osl.stddev != 0.0 {
                return Err(format!(
                    "--output-tokens-stddev {}: a regression's lengths are fixed (0)",
                    osl.stddev
                ));
            }
            if p.extra_inputs.get("ignore_eos") != Some(&serde_json::Value::Bool(true)) {
                return Err("--extra-inputs ignore_eos:true is required: without it the server stops at EOS and the output length is not fixed".into());
            }
            match p.extra_inputs.get("min_tokens").and_then(|v| v.as_u64()) {
                Some(m) if m as f64 == osl.mean => {}
                Some(m) => {
                    return Err(format!(
                        "--extra-inputs min_tokens:{m} differs from --output-tokens-mean {}: the output length is not fixed",
                        osl.mean
                    ));
                }
                None => {
                    return Err(format!(
                        "--extra-inputs min_tokens:{} is required (the output length, with ignore_eos)",
                        osl.mean
                    ));
                }
            }
            if !stop_given {
                return Err(
                    "the stop rule is not stated: give --request-count or --benchmark-duration"
                        .into(),
                );
            }
        }
        Kind::ServiceLoad => {
            let Some(r) = &l.request_rate else {
                return Err("--request-rate is required".into());
            };
            match r.pattern {
                ArrivalKind::Poisson => {}
                ArrivalKind::Gamma if a.arrival_smoothness.is_none() => {
                    return Err("--arrival-pattern gamma: give its --arrival-smoothness".into());
                }
                ArrivalKind::Gamma => {}
                ArrivalKind::Constant => {
                    return Err(
                        "--arrival-pattern constant: a service load is arrival-driven (poisson, or gamma with --arrival-smoothness)"
                            .into(),
                    );
                }
            }
            if !stop_given {
                return Err(
                    "the stop rule is not stated: give --request-count or --benchmark-duration"
                        .into(),
                );
            }
        }
        Kind::TraceReplay => {
            if a.input_file.is_none() {
                return Err("--input-file: a trace replay needs its trace file".into());
            }
        }
    }
    Ok(())
}
