//! `inferbench profile`: flags → plans → the run library → lines on the terminal.

use std::sync::{Arc, Mutex};

use inferbench_run::{CellPlan, Event, Failure, Observer, RunReport, SweepPlan};

use crate::cli::ProfileArgs;

pub fn run(a: &ProfileArgs, argv: &[String]) -> Result<u8, Failure> {
    let mut variants = crate::cli::variant_cells(a, argv).map_err(Failure::input)?;
    // A config's scenarios sweep without --scenario: every scenario is a cell, as in AIPerf.
    if variants.is_empty() {
        variants = crate::cli::scenario_cells(a).map_err(Failure::input)?;
    }
    let cells = crate::cli::cells(a).map_err(Failure::input)?;
    let declared = crate::cli::declarations(a).map_err(Failure::input)?;
    let n = if variants.is_empty() {
        cells.len()
    } else {
        variants.len()
    };
    let several = n > 1 || a.num_profile_runs > 1;
    let is_sweep = n > 1;
    let base = base_seed(a, several);
    for w in sweep_flag_notes(a, is_sweep)
        .iter()
        .filter(|_| crate::log_level::warnings())
    {
        eprintln!("inferbench: warning: {w}");
    }
    let per_cell = is_sweep && !a.aiperf.parameter_sweep_same_seed;
    let mut plans = Vec::with_capacity(n);
    if variants.is_empty() {
        for (i, c) in cells.into_iter().enumerate() {
            let mut plan = crate::cli::build_plan(a, argv, &c.values).map_err(Failure::input)?;
            plan.random_seed = cell_seed(base, i, per_cell);
            plans.push(CellPlan {
                plan,
                parameters: c.parameters,
                dir_name: c.dir_name,
                seed_label: None,
            });
        }
    }
    // `--variant`: each cell is the command line with the variant's flags last; named by the
    // variant (AIPerf's scenario), which also labels its trials' derived seeds.
    for (i, v) in variants.into_iter().enumerate() {
        for w in v.warnings.iter().filter(|_| crate::log_level::warnings()) {
            eprintln!("inferbench: warning: {w}");
        }
        let one = crate::cli::cells(&v.args)
            .map_err(|e| Failure::input(format!("--variant {}: {e}", v.name)))?
            .into_iter()
            .next()
            .ok_or_else(|| Failure::input(format!("--variant {}: no cell", v.name)))?;
        let cell_argv = v.argv.as_deref().unwrap_or(argv);
        let mut plan = crate::cli::build_plan(&v.args, cell_argv, &one.values)
            .map_err(|e| Failure::input(format!("--variant {}: {e}", v.name)))?;
        plan.random_seed = cell_seed(base, i, per_cell);
        plans.push(CellPlan {
            plan,
            parameters: vec![("variant".into(), serde_json::Value::String(v.name.clone()))],
            dir_name: Some(v.dir_name),
            seed_label: Some(v.name),
        });
    }
    let sweep = sweep_plan(a, plans, a.artifact_dir.is_some());
    let streaming_given = argv.iter().any(|s| s == "--streaming");
    use std::io::IsTerminal;
    let table = crate::sweep_table::wanted(
        a.aiperf.no_sweep_table,
        std::io::stdout().is_terminal(),
        sweep.cells.len(),
    )
    .then(|| {
        crate::sweep_table::SweepTable::new(sweep.cells.iter().map(|c| c.parameters.as_slice()))
    });
    let printer = Arc::new(Printer {
        several,
        tables: true,
        streaming_given,
        progress: Mutex::new(None),
        sweep_table: Mutex::new(table),
        trace_timing: a.service.show_trace_timing,
    });
    // `--config`'s user files and auto-plot, after each run (config_hooks.rs).
    let (observer, hooked) = crate::config_hooks::wrap(a, printer)?;
    let outcome = inferbench_run::run_sweep_declared(&sweep, &declared, observer)?;
    match outcome.failure.or_else(|| hooked.and_then(|h| h.failure())) {
        Some(f) => Err(f),
        None => Ok(outcome.code),
    }
}

/// The seed of a sweep or of repeated runs: `--random-seed`, else 42 with
/// `--set-consistent-seed` (AIPerf's default) so that runs differ only in what is swept.
pub fn base_seed(a: &ProfileArgs, several: bool) -> Option<u64> {
    a.random_seed
        .or((several && a.aiperf.set_consistent_seed).then_some(42))
}

/// The sweep and trial flags given where they change nothing (AIPerf ignores them there
/// without a word; inferbench says so).
pub fn sweep_flag_notes(a: &ProfileArgs, is_sweep: bool) -> Vec<String> {
    let mut notes = Vec::new();
    if a.aiperf.parameter_sweep_same_seed && !is_sweep {
        notes.push(
            "--parameter-sweep-same-seed has no effect without a sweep (a comma list)".into(),
        );
    }
    if a.aiperf.parameter_sweep_mode == crate::cli::SweepModeArg::Independent
        && !(is_sweep && a.num_profile_runs > 1)
    {
        notes.push("--parameter-sweep-mode independent has no effect without a sweep run several times (--num-profile-runs > 1)".into());
    }
    if a.aiperf.vary_seed_per_trial && a.num_profile_runs < 2 {
        notes
            .push("--vary-seed-per-trial has no effect with one run (--num-profile-runs 1)".into());
    }
    notes
}

/// Cell `i`'s seed: the base plus `i` when cells get their own seeds (AIPerf's default for
/// a sweep; `--parameter-sweep-same-seed` gives every cell the base).
pub fn cell_seed(base: Option<u64>, i: usize, per_cell: bool) -> Option<u64> {
    base.map(|b| {
        if per_cell {
            b.wrapping_add(i as u64)
        } else {
            b
        }
    })
}

/// The sweep of `cells` with the repeat and cool-down flags of `a`.
pub fn sweep_plan(a: &ProfileArgs, cells: Vec<CellPlan>, artifact_dir_given: bool) -> SweepPlan {
    SweepPlan {
        cells,
        runs: a.num_profile_runs,
        confidence_level: a.confidence_level,
        profile_run_cooldown_s: a.profile_run_cooldown_seconds,
        parameter_sweep_cooldown_s: a.parameter_sweep_cooldown_seconds,
        disable_warmup_after_first: a.profile_run_disable_warmup_after_first,
        artifact_dir_given,
        sweep_mode: match a.aiperf.parameter_sweep_mode {
            crate::cli::SweepModeArg::Repeated => inferbench_run::SweepMode::Repeated,
            crate::cli::SweepModeArg::Independent => inferbench_run::SweepMode::Independent,
        },
        vary_seed_per_trial: a.aiperf.vary_seed_per_trial,
        // Checked by `build_plan` already.
        convergence: a.aiperf.convergence(a.num_profile_runs).ok().flatten(),
    }
}

/// Prints what the run library reports.
pub struct Printer {
    /// Several runs (a sweep or repeats): each failure is named as it happens.
    pub several: bool,
    /// Print each run's console table (`qualify` prints only its verdict).
    pub tables: bool,
    pub streaming_given: bool,
    /// The progress thread and its stop channel while the engine runs.
    pub progress: Mutex<Option<(std::sync::mpsc::Sender<()>, std::thread::JoinHandle<()>)>>,
    /// The sweep table, printed again as each cell finishes (None: not printed).
    pub sweep_table: Mutex<Option<crate::sweep_table::SweepTable>>,
    /// `--show-trace-timing`: print the HTTP trace timing table after each run's tables.
    pub trace_timing: bool,
}

impl Observer for Printer {
    fn event(&self, event: Event<'_>) {
        let info = crate::log_level::info();
        match event {
            Event::SimulatedServer { .. }
            | Event::Cell { .. }
            | Event::Repeat { .. }
            | Event::SweepWritten { .. }
                if !info => {}
            Event::Warning { .. } if !crate::log_level::warnings() => {}
            Event::SimulatedServer {
                url,
                ttft_ms,
                itl_ms,
                streaming,
            } => eprintln!(
                "inferbench: no --url given: benchmarking the built-in simulated server at {url} (ttft {ttft_ms} ms, itl {itl_ms} ms){}",
                match (streaming, self.streaming_given) {
                    (true, false) => ", streaming (the demo's default)",
                    (true, true) => ", streaming",
                    (false, _) => ", not streaming",
                }
            ),
            Event::Cell { index, of, name } => {
                eprintln!("inferbench: sweep cell {index}/{of}: {name}")
            }
            Event::CellDone {
                parameters,
                trials,
                summaries,
                ..
            } => {
                if let Ok(mut t) = self.sweep_table.lock()
                    && let Some(t) = t.as_mut()
                {
                    println!("\n{}\n", t.add(parameters, trials, summaries));
                }
            }
            Event::Repeat { index, of } => eprintln!("inferbench: profile run {index}/{of}"),
            Event::EngineStarted { ui, progress, live } => {
                let (tx, rx) = std::sync::mpsc::channel();
                let h = std::thread::spawn(move || crate::progress::show(ui, progress, live, rx));
                if let Ok(mut p) = self.progress.lock() {
                    *p = Some((tx, h));
                }
            }
            Event::EngineStopped => {
                let taken = self.progress.lock().ok().and_then(|mut p| p.take());
                if let Some((tx, h)) = taken {
                    drop(tx);
                    let _ = h.join();
                }
            }
            Event::Interrupt { escalation: 1 } => eprintln!(
                "\ninferbench: Ctrl-C: no new requests; waiting for those in flight (Ctrl-C again cancels them)"
            ),
            Event::Interrupt { .. } => {
                eprintln!("\ninferbench: Ctrl-C: cancelling the requests in flight")
            }
            Event::Terminate => {
                eprintln!("\ninferbench: SIGTERM: cancelling the requests in flight")
            }
            Event::Warning { message } => eprintln!("inferbench: warning: {message}"),
            Event::RunDone(r) => self.run_done(r),
            Event::SweepWritten { dir } => {
                eprintln!("inferbench: sweep summary in {}", dir.display())
            }
        }
    }
}

impl Printer {
    fn run_done(&self, r: &RunReport) {
        // The file keeps AIPerf's tables; the terminal is spared the all-zero ones.
        if self.tables {
            println!(
                "{}",
                inferbench_artifacts::console::render_console_for_terminal(&r.scores.profiling)
            );
            if let Some(t) = &r.breakdown_console {
                println!("{t}");
            }
        }
        if self.trace_timing {
            match inferbench_artifacts::console::render_http_trace_timing(&r.scores.profiling) {
                Some(t) => println!("{t}"),
                None if crate::log_level::warnings() => eprintln!(
                    "inferbench: warning: --show-trace-timing: no request of the profiling phase has HTTP trace timing"
                ),
                None => {}
            }
        }
        let info = crate::log_level::info();
        if info {
            eprintln!(
                "inferbench: tokens counted with {}{}",
                r.tokenizer,
                if r.use_server_token_count {
                    " (token metrics from the server's usage: --use-server-token-count)"
                } else {
                    ""
                }
            );
            eprintln!("inferbench: artifacts in {}", r.dir.display());
            eprintln!("{}", describe_resources(&r.resources));
        }
        if let Some(w) = r.scores.schedule.as_ref().and_then(schedule_warning)
            && crate::log_level::warnings()
        {
            eprintln!("{w}");
        }
        if r.interrupted() {
            eprintln!("inferbench: the run was interrupted: artifacts are marked partial");
        }
        // A plain run reports its failure once, as the command's error.
        if let (true, Some(f)) = (self.several, &r.failure) {
            eprintln!("inferbench: error: {}", f.message);
        }
    }
}

/// One loud paragraph when the client did not keep its schedule.
pub fn schedule_warning(v: &inferbench_metrics::schedule::ScheduleVerdict) -> Option<String> {
    if v.kept {
        return None;
    }
    Some(format!(
        "inferbench: WARNING: the client did not keep its schedule: schedule lag p99 {:.3} ms (limit {} ms), achieved rate {} of scheduled (limit {} %). The load delivered was not the load planned; latencies from the planned send time are in the summary (request_latency_from_planned).",
        v.lag_p99_ms,
        v.rule.max_lag_p99_ms,
        v.achieved_pct
            .map_or("n/a".to_string(), |p| format!("{p:.2} %")),
        v.rule.min_achieved_pct
    ))
}

/// One line about the client's own load, and a warning when it may have distorted the run:
/// the client loop is one thread, so near one core of CPU it is saturated; CPU pressure means
/// runnable tasks waited for a core.
fn describe_resources(r: &inferbench_client::resources::ResourceSummary) -> String {
    let cpu_some = r
        .pressure
        .cpu
        .as_ref()
        .and_then(|f| f.some.as_ref())
        .and_then(|l| l.stall_pct);
    let mut line = format!(
        "inferbench: client: {:.2} s CPU ({} cores on average, {} at most), RSS max {:.1} MiB, {} threads; machine CPU pressure (some) {}",
        r.cpu_seconds,
        r.cpu_utilization_avg
            .map_or("n/a".to_string(), |u| format!("{u:.2}")),
        r.cpu_utilization_max
            .map_or("n/a".to_string(), |u| format!("{u:.2}")),
        r.rss_max_bytes as f64 / (1024.0 * 1024.0),
        r.threads_max,
        cpu_some.map_or("n/a".to_string(), |p| format!("{p:.1} %")),
    );
    if r.cpu_utilization_max.is_some_and(|u| u >= 1.9) || cpu_some.is_some_and(|p| p >= 10.0) {
        line.push_str(
            "\ninferbench: WARNING: the client machine was busy (client CPU or CPU pressure high): latencies may include client delay; see inferbench_client_resources.json",
        );
    }
    if let Some(q) = r.queues.as_ref().filter(|q| q.writer_backlog_growing) {
        line.push_str(&format!(
            "\ninferbench: WARNING: the evidence writer fell behind (up to {} records waiting): the client's disk or CPU limited this run, and every waiting record is held in memory; see queues in inferbench_client_resources.json",
            q.writer_backlog_max
        ));
    }
    line
}

#[cfg(test)]
mod tests {
    use super::*;
    use inferbench_client::resources::{QueueSummary, ResourceSummary};

    #[test]
    fn a_writer_that_fell_behind_is_warned_about() {
        let mut r = ResourceSummary::default();
        assert!(!describe_resources(&r).contains("WARNING"));
        r.queues = Some(QueueSummary {
            writer_backlog_growing: true,
            writer_backlog_max: 5_000,
            ..QueueSummary::default()
        });
        let s = describe_resources(&r);
        assert!(
            s.contains("WARNING: the evidence writer fell behind (up to 5000 records waiting)"),
            "{s}"
        );
    }
}
