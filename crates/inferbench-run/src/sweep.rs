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
use crate::{Failure, exit};

/// One cell of a sweep (the only cell of a plain run).
#[derive(Clone, Debug)]
pub struct CellPlan {
    pub plan: RunPlan,
    /// Its parameters as (name, value) in flag order (empty for a plain run).
    pub parameters: Vec<(String, serde_json::Value)>,
    /// Its directory under the sweep root (`concurrency_4`, …); None for a plain run.
    pub dir_name: Option<String>,
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
    let mut prepared = Vec::with_capacity(sweep.cells.len());
    for c in &sweep.cells {
        let mut p = prepare(&c.plan, tok.clone())?;
        p.declared = declared.to_vec();
        prepared.push(p);
    }
    let sim = match first.plan.target {
        Target::Simulated {
            ttft_ms, itl_ms, ..
        } => {
            let s = Simulated::start_answering(
                &first.plan.target,
                &first.plan.models[0],
                &tok,
                &prepared,
            )?;
            observer.event(Event::SimulatedServer {
                url: &s.url,
                ttft_ms,
                itl_ms,
                streaming: first.plan.streaming,
            });
            for p in &mut prepared {
                p.retarget(&s.url)?;
            }
            Some(s)
        }
        _ => None,
    };
    // `--wait-for-model-timeout`: once, after the simulated server is up and before any run.
    let waited = match prepared.first() {
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
    prepared: &[Prepared],
    observer: &Arc<dyn Observer>,
) -> Result<SweepOutcome, Failure> {
    let runs = sweep.runs;
    let is_sweep = sweep.cells.len() > 1;
    let root = root_of(sweep);
    let mut sweep_cells = Vec::new();
    let mut attempted = 0usize;
    let mut failed_all: Vec<String> = Vec::new();
    let mut failures: Vec<Failure> = Vec::new();
    let mut interrupted = false;
    for (ci, (cell, prep)) in sweep.cells.iter().zip(prepared).enumerate() {
        if ci > 0 {
            cooldown(sweep.parameter_sweep_cooldown_s);
        }
        let cell_dir = match &cell.dir_name {
            Some(d) => root.join(d),
            None => root.clone(),
        };
        if is_sweep {
            observer.event(Event::Cell {
                index: ci + 1,
                of: sweep.cells.len(),
                name: cell.dir_name.as_deref().unwrap_or(""),
            });
        }
        let mut summaries = Vec::new();
        let mut labels = Vec::new();
        let mut failed = Vec::new();
        for k in 0..runs {
            if k > 0 {
                cooldown(sweep.profile_run_cooldown_s);
            }
            let label = format!("run_{:04}", k + 1);
            let dir = if runs > 1 {
                cell_dir.join("profile_runs").join(&label)
            } else {
                cell_dir.clone()
            };
            if runs > 1 {
                observer.event(Event::Repeat {
                    index: k + 1,
                    of: runs,
                });
            }
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
                failed.push(label.clone());
                failures.push(f.clone());
            } else {
                summaries.push(crate::correctness::without_console_rows(
                    report.scores.profiling.clone(),
                ));
                labels.push(label);
            }
            if report.interrupted() {
                interrupted = true;
                break;
            }
        }
        // The cell's aggregate is computed once: its confidence files and the sweep's share it.
        let mut entries = None;
        if (runs > 1 || is_sweep) && !summaries.is_empty() {
            let dir = match &cell.dir_name {
                Some(d) if is_sweep => root.join("aggregate").join(d),
                _ => cell_dir.join("aggregate"),
            };
            entries = Some(write_confidence(
                &dir, &summaries, &labels, &failed, sweep, cell,
            )?);
        }
        sweep_cells.push(inferbench_artifacts::aggregate::SweepCell {
            parameters: cell.parameters.clone(),
            runs: summaries,
            entries,
        });
        if interrupted {
            break;
        }
    }
    if is_sweep {
        let dir = root.join("sweep_aggregate");
        write_sweep(
            &dir,
            &sweep_cells,
            attempted,
            &failed_all,
            sweep.confidence_level,
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
) -> Result<(), Failure> {
    let meta = inferbench_artifacts::aggregate::SweepMeta {
        sweep_mode: "repeated".into(),
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
