//! Every run of a `profile` command: the cells of a sweep, each `--num-profile-runs` times,
//! with the per-cell confidence aggregates and the sweep files. Every cell is prepared
//! before anything is sent; what happens is told to the observer.

use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::Duration;

use inferbench_core::plan::{RunPlan, Target};
use inferbench_core::summary::Summary;
use inferbench_workload::Tokenizer;

use crate::live::run_one;
use crate::observer::{Event, Observer};
use crate::prepare::{Prepared, prepare};
use crate::sim::Simulated;
use crate::trials::{self, SweepMode};
use crate::{Failure, exit};

/// One cell of a sweep (the only cell of a plain run).
#[derive(Clone, Debug)]
pub struct CellPlan {
    pub plan: RunPlan,
    /// Its parameters as (name, value) in flag order (empty for a plain run).
    pub parameters: Vec<(String, serde_json::Value)>,
    /// Its directory under the sweep root (`concurrency_4`, …); None for a plain run.
    pub dir_name: Option<String>,
    /// Its label in `--vary-seed-per-trial`'s derivation when that is not its parameters'
    /// `name=value, …` (a `--variant`'s name, as AIPerf labels a scenario).
    pub seed_label: Option<String>,
}

/// Everything one `profile` command runs.
#[derive(Clone, Debug)]
pub struct SweepPlan {
    pub cells: Vec<CellPlan>,
    /// `--num-profile-runs` (1 to 10).
    pub runs: usize,
    pub confidence_level: f64,
    pub profile_run_cooldown_s: f64,
    pub parameter_sweep_cooldown_s: f64,
    pub disable_warmup_after_first: bool,
    /// `--artifact-dir` was given: a sweep writes directly into it.
    pub artifact_dir_given: bool,
    /// `--parameter-sweep-mode`: trials outer (repeated) or cells outer (independent).
    pub sweep_mode: SweepMode,
    /// `--vary-seed-per-trial`: each trial of a cell gets its own seed, derived from the
    /// cell's (see [`crate::trials::trial_seed`]); otherwise every trial shares it.
    pub vary_seed_per_trial: bool,
    /// `--convergence-metric`: a cell's trials stop once the rule holds (at most `runs`).
    pub convergence: Option<crate::convergence::Convergence>,
}

/// How the whole command ended.
#[derive(Clone, Debug)]
pub struct SweepOutcome {
    pub code: u8,
    /// The command's one error line when it failed (a plain run's own failure, or a count).
    pub failure: Option<Failure>,
    /// Each run's failure, labelled, when there were several runs (already told to the
    /// observer through [`Event::RunDone`]).
    pub failed_runs: Vec<String>,
}

/// Runs a whole `profile` command.
pub fn run_sweep(sweep: &SweepPlan, observer: Arc<dyn Observer>) -> Result<SweepOutcome, Failure> {
    run_sweep_declared(sweep, &[], observer)
}

/// [`run_sweep`] with the user's identity declarations, recorded in every run's manifest.
pub fn run_sweep_declared(
    sweep: &SweepPlan,
    declared: &[inferbench_core::identity::Declaration],
    observer: Arc<dyn Observer>,
) -> Result<SweepOutcome, Failure> {
    if sweep.convergence.is_some()
        && sweep.cells.len() > 1
        && sweep.sweep_mode == SweepMode::Repeated
    {
        return Err(Failure::input(
            "--convergence-metric with a sweep needs --parameter-sweep-mode independent (a cell's trials must run one after another to stop early), as in AIPerf",
        ));
    }
    if sweep.convergence.as_ref().map(|c| c.mode)
        == Some(crate::convergence::ConvergenceMode::Distribution)
        && sweep
            .cells
            .iter()
            .any(|c| c.plan.artifacts.export_level == inferbench_core::plan::ExportLevel::Summary)
    {
        return Err(Failure::input(
            "--convergence-mode distribution needs the per-request records (profile_export.jsonl): --export-level records or raw, not summary, as in AIPerf",
        ));
    }
    if !(1..=10).contains(&sweep.runs) {
        return Err(Failure::input(format!(
            "--num-profile-runs {}: must be 1 to 10",
            sweep.runs
        )));
    }
    inferbench_metrics::confidence::check_confidence_level(sweep.confidence_level)
        .map_err(|e| Failure::input(format!("--confidence-level: {e}")))?;
    let Some(first) = sweep.cells.first() else {
        return Err(Failure::input("nothing to run"));
    };
    let tok = Arc::new(
        Tokenizer::load_for(
            &first.plan.tokenizer,
            first.plan.dataset.apply_chat_template,
        )
        .map_err(|e| Failure::input(format!("--tokenizer: {e}")))?,
    );
    // Every cell prepared before anything is sent or started.
    // With --vary-seed-per-trial each trial is its own workload (its seed draws the prompts),
    // so each is prepared; otherwise a cell's trials share one preparation.
    let mut prepared = Vec::with_capacity(sweep.cells.len());
    for c in &sweep.cells {
        let per_trial = match c.plan.random_seed {
            Some(base) if sweep.vary_seed_per_trial && sweep.runs > 1 => {
                let label = c
                    .seed_label
                    .clone()
                    .unwrap_or_else(|| trials::cell_label(&c.parameters));
                (0..sweep.runs)
                    .map(|k| Some(trials::trial_seed(base, &label, k)))
                    .collect()
            }
            _ => vec![c.plan.random_seed],
        };
        let mut ps = Vec::with_capacity(per_trial.len());
        for seed in per_trial {
            let mut plan = c.plan.clone();
            plan.random_seed = seed;
            let mut p = prepare(&plan, tok.clone())?;
            p.declared = declared.to_vec();
            ps.push(p);
        }
        prepared.push(ps);
    }
    let sim = match first.plan.target {
        Target::Simulated {
            ttft_ms, itl_ms, ..
        } => {
            let s = Simulated::start_answering(
                &first.plan.target,
                &first.plan.models[0],
                &tok,
                &prepared.iter().flatten().cloned().collect::<Vec<_>>(),
            )?;
            observer.event(Event::SimulatedServer {
                url: &s.url,
                ttft_ms,
                itl_ms,
                streaming: first.plan.streaming,
            });
            for p in prepared.iter_mut().flatten() {
                p.retarget(&s.url)?;
            }
            Some(s)
        }
        _ => None,
    };
    // `--wait-for-model-timeout`: once, after the simulated server is up and before any run.
    let waited = match prepared.first().and_then(|c| c.first()) {
        Some(p) if p.plan.controls.wait_for_model_timeout_s > 0.0 => {
            tokio::runtime::Builder::new_current_thread()
                .enable_all()
                .build()
                .map_err(|e| Failure::run(format!("cannot start the runtime: {e}")))
                .and_then(|rt| rt.block_on(crate::wait_model::wait_for_model(p)))
        }
        _ => Ok(()),
    };
    let result = waited.and_then(|()| run_cells(sweep, &prepared, &observer));
    if let Some(s) = sim {
        s.shutdown();
    }
    result
}

/// The root of a command's files: the plan's run directory for a plain run or repeated
/// runs; for a sweep, `--artifact-dir` itself or `<dir>/<model>-openai-<endpoint>-sweep`.
pub fn root_of(sweep: &SweepPlan) -> PathBuf {
    let first = &sweep.cells[0].plan;
    if sweep.cells.len() > 1 && !sweep.artifact_dir_given {
        PathBuf::from(&first.artifacts.dir).join(inferbench_core::plan::artifact_dir_name(
            &first.models[0],
            first.endpoint_type,
            "sweep",
        ))
    } else if sweep.cells.len() > 1 {
        PathBuf::from(&first.artifacts.dir)
    } else {
        PathBuf::from(&first.artifacts.run_dir)
    }
}

fn cooldown(s: f64) {
    if let Ok(d) = Duration::try_from_secs_f64(s)
        && !d.is_zero()
    {
        std::thread::sleep(d);
    }
}

fn run_cells(
    sweep: &SweepPlan,
    prepared: &[Vec<Prepared>],
    observer: &Arc<dyn Observer>,
) -> Result<SweepOutcome, Failure> {
    let runs = sweep.runs;
    let n = sweep.cells.len();
    let is_sweep = n > 1;
    let mode = sweep.sweep_mode;
    let root = root_of(sweep);
    // Per cell: the summaries and labels of its good runs, and the labels of its failed ones.
    let mut summaries: Vec<Vec<Summary>> = vec![Vec::new(); n];
    let mut labels: Vec<Vec<String>> = vec![Vec::new(); n];
    let mut failed: Vec<Vec<String>> = vec![Vec::new(); n];
    let mut attempted = 0usize;
    let mut failed_all: Vec<String> = Vec::new();
    let mut failures: Vec<Failure> = Vec::new();
    let mut interrupted = false;
    let mut previous: Option<(usize, usize)> = None;
    // Convergence: each cell's values of the rule's metric, and whether it has converged.
    let mut values: Vec<Vec<f64>> = vec![Vec::new(); n];
    // With `distribution`: each cell's good runs' per-request values of the metric.
    let mut samples: Vec<Vec<Vec<f64>>> = vec![Vec::new(); n];
    let mut converged = vec![false; n];
    let mut missing_told = false;
    for (ci, k) in trials::run_order(n, runs, mode) {
        if converged[ci] {
            continue;
        }
        let cell = &sweep.cells[ci];
        // AIPerf's cool-downs: the repeats' between trials, the sweep's between cells within
        // a trial (repeated) or between cells (independent).
        if let Some((pc, pk)) = previous {
            let next_trial = match mode {
                SweepMode::Repeated => pk != k,
                SweepMode::Independent => pc == ci,
            };
            cooldown(if next_trial {
                sweep.profile_run_cooldown_s
            } else {
                sweep.parameter_sweep_cooldown_s
            });
        }
        if is_sweep && (k == 0 || mode == SweepMode::Repeated) {
            observer.event(Event::Cell {
                index: ci + 1,
                of: n,
                name: cell.dir_name.as_deref().unwrap_or(""),
            });
        }
        if runs > 1 && (ci == 0 || mode == SweepMode::Independent) {
            observer.event(Event::Repeat {
                index: k + 1,
                of: runs,
            });
        }
        previous = Some((ci, k));
        let label = trials::run_label(is_sweep, k);
        let cell_name = cell.dir_name.as_deref().filter(|_| is_sweep);
        let dir = trials::run_dir(&root, cell_name, runs, mode, k);
        let prep = &prepared[ci][k.min(prepared[ci].len() - 1)];
        // Warmup only before a cell's first trial, as AIPerf (its warmup runs once per cell).
        let p = prep.for_run(&dir, k > 0 && sweep.disable_warmup_after_first);
        // Each run on a runtime of its own: one client thread by default, `--workers-max N`
        // threads otherwise (why: `ClientRuntime::new`), so that the cells of `qualify`
        // differ in it. Records are written by their own thread. `enter` tells the sampler
        // which threads are the client's workers.
        let rt = inferbench_client::resources::ClientRuntime::new(p.plan.workers_max)
            .map_err(|e| Failure::run(format!("cannot start the runtime: {e}")))?;
        let report = {
            let _workers = rt.enter();
            rt.runtime().block_on(run_one(p, observer))?
        };
        attempted += 1;
        observer.event(Event::RunDone(&report));
        if let Some(f) = &report.failure {
            failed_all.push(match &cell.dir_name {
                Some(d) => format!("{d}/{label}"),
                None => label.clone(),
            });
            failed[ci].push(label.clone());
            failures.push(f.clone());
        } else {
            if let Some(rule) = &sweep.convergence
                && rule.mode == crate::convergence::ConvergenceMode::Distribution
            {
                let names = inferbench_artifacts::file_names(&cell.plan.artifacts.prefix);
                let v = crate::convergence::request_values(
                    &report.dir.join(&names.records_jsonl),
                    &rule.metric,
                );
                if v.is_empty() && !missing_told {
                    missing_told = true;
                    observer.event(Event::Warning {
                        message: &format!(
                            "--convergence-metric {}: no per-request values in the run's {}; the runs will not stop early",
                            rule.metric, names.records_jsonl
                        ),
                    });
                }
                samples[ci].push(v);
                converged[ci] = crate::convergence::distribution_converged(rule, &samples[ci]);
            } else if let Some(rule) = &sweep.convergence {
                match crate::convergence::value_of(
                    &report.scores.profiling,
                    &rule.metric,
                    &rule.stat,
                ) {
                    Some(v) => values[ci].push(v),
                    None if !missing_told => {
                        missing_told = true;
                        observer.event(Event::Warning {
                            message: &format!(
                                "--convergence-metric {} (--convergence-stat {}): not in the run's summary; the runs will not stop early",
                                rule.metric, rule.stat
                            ),
                        });
                    }
                    None => {}
                }
                converged[ci] =
                    crate::convergence::converged(rule, &values[ci], sweep.confidence_level);
            }
            summaries[ci].push(crate::correctness::without_console_rows(
                report.scores.profiling.clone(),
            ));
            labels[ci].push(label);
        }
        // The cell's last trial: all of them, or fewer once its rule held.
        if is_sweep && (converged[ci] || k + 1 == runs) {
            observer.event(Event::CellDone {
                index: ci + 1,
                of: n,
                name: cell.dir_name.as_deref().unwrap_or(""),
                parameters: &cell.parameters,
                trials: summaries[ci].len() + failed[ci].len(),
                summaries: &summaries[ci],
            });
        }
        if report.interrupted() {
            interrupted = true;
            break;
        }
    }
    // Each cell's aggregate is computed once: its confidence files and the sweep's share it.
    // After an interrupt, only the cells that ran at least once are summarised.
    let mut sweep_cells = Vec::new();
    for (ci, cell) in sweep.cells.iter().enumerate() {
        if summaries[ci].is_empty() && failed[ci].is_empty() {
            continue;
        }
        let mut entries = None;
        if (runs > 1 || is_sweep) && !summaries[ci].is_empty() {
            let name = cell.dir_name.as_deref().filter(|_| is_sweep);
            let dir = trials::aggregate_dir(&root, name, mode);
            entries = Some(write_confidence(
                &dir,
                &summaries[ci],
                &labels[ci],
                &failed[ci],
                sweep,
                cell,
            )?);
        }
        sweep_cells.push(inferbench_artifacts::aggregate::SweepCell {
            parameters: cell.parameters.clone(),
            runs: std::mem::take(&mut summaries[ci]),
            entries,
        });
    }
    if is_sweep {
        let dir = trials::sweep_aggregate_dir(&root, runs, mode);
        write_sweep(
            &dir,
            &sweep_cells,
            attempted,
            &failed_all,
            sweep.confidence_level,
            mode,
        )?;
        observer.event(Event::SweepWritten { dir: &dir });
    }
    let several = runs > 1 || is_sweep;
    let failure = match failures.len() {
        _ if interrupted => None,
        0 => None,
        1 if !several => failures.pop(),
        n => Some(Failure {
            code: failures
                .iter()
                .map(|f| f.code)
                .max()
                .unwrap_or(exit::FAILED),
            message: format!("{n} of the runs failed (see above)"),
        }),
    };
    Ok(SweepOutcome {
        code: if interrupted {
            exit::INTERRUPTED
        } else {
            failure.as_ref().map_or(exit::OK, |f| f.code)
        },
        failure,
        failed_runs: failed_all,
    })
}

fn write_confidence(
    dir: &Path,
    summaries: &[Summary],
    labels: &[String],
    failed: &[String],
    sweep: &SweepPlan,
    cell: &CellPlan,
) -> Result<Vec<inferbench_metrics::confidence::AggregateEntry>, Failure> {
    let entries = inferbench_metrics::confidence::aggregate(summaries, sweep.confidence_level)
        .map_err(|e| Failure::input(format!("--confidence-level: {e}")))?;
    let mut extra = serde_json::Map::new();
    if summaries.len() == 1 {
        extra.insert("single_run".into(), serde_json::json!(true));
    }
    if !cell.parameters.is_empty() {
        extra.insert(
            "variation_values".into(),
            serde_json::Value::Object(cell.parameters.iter().cloned().collect()),
        );
    }
    let meta = inferbench_artifacts::aggregate::ConfidenceMeta {
        num_profile_runs: sweep.runs,
        num_successful_runs: summaries.len(),
        failed_runs: failed.to_vec(),
        confidence_level: sweep.confidence_level,
        run_labels: labels.to_vec(),
        cooldown_seconds: sweep.profile_run_cooldown_s,
        extra,
    };
    std::fs::create_dir_all(dir)
        .map_err(|e| Failure::run(format!("{}: cannot create: {e}", dir.display())))?;
    inferbench_artifacts::aggregate::write_confidence(dir, &entries, &meta)?;
    Ok(entries)
}

fn write_sweep(
    dir: &Path,
    cells: &[inferbench_artifacts::aggregate::SweepCell],
    attempted: usize,
    failed_runs: &[String],
    level: f64,
    mode: SweepMode,
) -> Result<(), Failure> {
    let meta = inferbench_artifacts::aggregate::SweepMeta {
        sweep_mode: mode.as_str().into(),
        num_profile_runs: attempted,
        num_successful_runs: cells.iter().map(|c| c.runs.len()).sum(),
        failed_runs: failed_runs.to_vec(),
        extra: serde_json::Map::new(),
    };
    std::fs::create_dir_all(dir)
        .map_err(|e| Failure::run(format!("{}: cannot create: {e}", dir.display())))?;
    inferbench_artifacts::aggregate::write_sweep(dir, cells, &meta, level)?;
    Ok(())
}
