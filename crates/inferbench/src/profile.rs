//! `inferbench profile`: plan → (simulated server) → workload → engine → evidence on disk →
//! metrics computed from the disk → artifacts.

use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::Duration;

use inferbench_client::engine::{Cancellation, LoadMode, PhaseSpec, PreparedPayload};
use inferbench_client::{Clock, Engine, EngineConfig, EngineEvent, StopSignal, TokenCounter};
use inferbench_core::evidence::{EvidenceEnd, EvidenceHeader, StopReason};
use inferbench_core::manifest::{DatasetIdentity, Manifest, ServerIdentity, TokenizerIdentity};
use inferbench_core::plan::ArrivalKind;
use inferbench_core::plan::{ExportLevel, RunPlan, Target};
use inferbench_core::record::{EVIDENCE_SCHEMA_VERSION, Phase};
use inferbench_core::schedule::ArrivalPattern;
use inferbench_sim::{SimConfig, SimServer};
use inferbench_workload::{Corpus, Tokenizer};

use crate::Failure;
use crate::cli::ProfileArgs;

pub struct Counter(pub Arc<Tokenizer>);

/// What the evidence-writer thread hands back once the engine is done.
struct WriterOutput {
    writer: inferbench_artifacts::EvidenceWriter,
    exports: inferbench_artifacts::RecordExportStream,
    profiling: inferbench_metrics::Accumulator,
    schedule: inferbench_metrics::schedule::ScheduleAccumulator,
    warmup: Option<inferbench_metrics::Accumulator>,
    phases: Vec<inferbench_core::PhaseWindow>,
}

impl TokenCounter for Counter {
    fn count(&self, text: &str) -> u64 {
        self.0.count(text) as u64
    }
}

/// Exit code of a run stopped by Ctrl-C (its artifacts are written and marked partial).
pub const EXIT_INTERRUPTED: u8 = 130;

/// Exit code with `--fail-on-missed-schedule` when the client did not keep its schedule.
pub const EXIT_MISSED_SCHEDULE: u8 = 3;

pub fn run(a: &ProfileArgs, argv: &[String]) -> Result<u8, Failure> {
    let runs = a.num_profile_runs;
    if !(1..=10).contains(&runs) {
        return Err(Failure::input(format!(
            "--num-profile-runs {runs}: must be 1 to 10"
        )));
    }
    let level = inferbench_metrics::confidence::check_confidence_level(a.confidence_level)
        .map_err(|e| Failure::input(format!("--confidence-level: {e}")))?;
    for (name, v) in [
        (
            "--profile-run-cooldown-seconds",
            a.profile_run_cooldown_seconds,
        ),
        (
            "--parameter-sweep-cooldown-seconds",
            a.parameter_sweep_cooldown_seconds,
        ),
    ] {
        if !(v.is_finite() && v >= 0.0) {
            return Err(Failure::input(format!("{name} {v}: must be seconds ≥ 0")));
        }
    }
    let cells = crate::cli::cells(a).map_err(Failure::input)?;
    let sweep = cells.len() > 1;
    // Every cell's plan is validated before anything runs.
    let mut plans = Vec::with_capacity(cells.len());
    for c in &cells {
        let mut p = crate::cli::build_plan(a, argv, &c.values).map_err(Failure::input)?;
        // Repeated runs and sweeps use one seed for all (AIPerf's --set-consistent-seed:
        // 42 when none is given), so that cells differ only in the swept value.
        if (runs > 1 || sweep) && p.random_seed.is_none() {
            p.random_seed = Some(42);
        }
        plans.push(p);
    }
    let first = &plans[0];
    let tok = Arc::new(
        Tokenizer::load(&first.tokenizer)
            .map_err(|e| Failure::input(format!("--tokenizer: {e}")))?,
    );
    let sim = start_sim(&mut plans, &tok)?;
    // The client runs on one thread: no cross-thread wake-ups per response frame, which is
    // most of what a multi-threaded runtime would cost here. Records are written by their own
    // thread.
    let rt = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .map_err(|e| Failure::run(format!("cannot start the runtime: {e}")))?;
    let result = run_cells(&rt, a, &cells, &plans, tok, sim.is_some(), level);
    if let Some((sim_rt, server)) = sim {
        sim_rt.block_on(server.shutdown());
    }
    result
}

/// The built-in simulated server, when no --url was given, on its own runtime and threads
/// (so that it never shares the client's event loop); the plans get its URL.
pub fn start_sim(
    plans: &mut [RunPlan],
    tok: &Tokenizer,
) -> Result<Option<(tokio::runtime::Runtime, SimServer)>, Failure> {
    let Some(first) = plans.first() else {
        return Ok(None);
    };
    let Target::Simulated { ttft_ms, itl_ms } = first.target else {
        return Ok(None);
    };
    let rt = tokio::runtime::Builder::new_multi_thread()
        .thread_name("sim")
        .enable_all()
        .build()
        .map_err(|e| Failure::run(format!("cannot start the simulated server: {e}")))?;
    let cfg = SimConfig {
        ttft: Duration::from_secs_f64(ttft_ms / 1000.0),
        itl: Duration::from_secs_f64(itl_ms / 1000.0),
        model: first.models[0].clone(),
        words: Arc::new(crate::mock::sim_words(tok)),
        ..SimConfig::default()
    };
    let server = rt
        .block_on(SimServer::start(
            cfg,
            "127.0.0.1:0".parse().expect("literal address"),
        ))
        .map_err(|e| Failure::run(format!("cannot start the simulated server: {e}")))?;
    let url = format!("http://{}", server.local_addr());
    eprintln!(
        "inferbench: no --url given: benchmarking the built-in simulated server at {url} (ttft {ttft_ms} ms, itl {itl_ms} ms)"
    );
    for p in plans.iter_mut() {
        p.url = url.clone();
    }
    Ok(Some((rt, server)))
}

/// Run every cell of the sweep, each `--num-profile-runs` times, and write the aggregates.
fn run_cells(
    rt: &tokio::runtime::Runtime,
    a: &ProfileArgs,
    cells: &[crate::cli::Cell],
    plans: &[RunPlan],
    tok: Arc<Tokenizer>,
    simulated: bool,
    level: f64,
) -> Result<u8, Failure> {
    let runs = a.num_profile_runs;
    let sweep = cells.len() > 1;
    let first = &plans[0];
    // The root: the plan's run directory for a plain run; for a sweep without an explicit
    // --artifact-dir, `<dir>/<model>-openai-<endpoint>-sweep`.
    let root = if sweep && a.artifact_dir.is_none() {
        PathBuf::from(&first.artifacts.dir).join(format!(
            "{}-openai-{}-sweep",
            first.models[0].replace(['/', '\\', ':'], "_"),
            first.endpoint_type.as_str()
        ))
    } else if sweep {
        PathBuf::from(&first.artifacts.dir)
    } else {
        PathBuf::from(&first.artifacts.run_dir)
    };
    let mut sweep_cells = Vec::new();
    let mut attempted = 0usize;
    let mut failed_all: Vec<String> = Vec::new();
    let mut failures: Vec<Failure> = Vec::new();
    let mut interrupted = false;
    for (ci, (cell, plan)) in cells.iter().zip(plans).enumerate() {
        if ci > 0 && a.parameter_sweep_cooldown_seconds > 0.0 {
            std::thread::sleep(Duration::from_secs_f64(a.parameter_sweep_cooldown_seconds));
        }
        let cell_dir = match &cell.dir_name {
            Some(d) => root.join(d),
            None => root.clone(),
        };
        if sweep {
            eprintln!(
                "inferbench: sweep cell {}/{}: {}",
                ci + 1,
                cells.len(),
                cell.dir_name.as_deref().unwrap_or("")
            );
        }
        let mut summaries = Vec::new();
        let mut labels = Vec::new();
        let mut failed = Vec::new();
        for k in 0..runs {
            if k > 0 && a.profile_run_cooldown_seconds > 0.0 {
                std::thread::sleep(Duration::from_secs_f64(a.profile_run_cooldown_seconds));
            }
            let label = format!("run_{:04}", k + 1);
            let mut p = plan.clone();
            p.artifacts.run_dir = if runs > 1 {
                cell_dir.join("profile_runs").join(&label)
            } else {
                cell_dir.clone()
            }
            .to_string_lossy()
            .into_owned();
            if k > 0 && a.profile_run_disable_warmup_after_first {
                p.load.warmup_request_count = 0;
                p.load.warmup_duration_s = None;
            }
            if runs > 1 {
                eprintln!("inferbench: profile run {}/{runs}", k + 1);
            }
            let r = rt.block_on(run_against(&p, tok.clone(), simulated))?;
            attempted += 1;
            if let Some(f) = r.failure {
                // A plain run reports its failure once, as the command's error; a sweep or
                // repeated runs name each failed run as it happens.
                if runs > 1 || sweep {
                    eprintln!("inferbench: error: {}", f.message);
                }
                failed_all.push(match &cell.dir_name {
                    Some(d) => format!("{d}/{label}"),
                    None => label.clone(),
                });
                failed.push(label.clone());
                failures.push(f);
            } else {
                summaries.push(r.summary);
                labels.push(label);
            }
            if r.code == EXIT_INTERRUPTED {
                interrupted = true;
                break;
            }
        }
        if (runs > 1 || sweep) && !summaries.is_empty() {
            let dir = match &cell.dir_name {
                Some(d) if sweep => root.join("aggregate").join(d),
                _ => cell_dir.join("aggregate"),
            };
            write_confidence(&dir, &summaries, &labels, &failed, runs, level, a, cell)?;
        }
        sweep_cells.push(inferbench_artifacts::aggregate::SweepCell {
            parameters: cell.parameters.clone(),
            runs: summaries,
        });
        if interrupted {
            break;
        }
    }
    if sweep {
        write_sweep(
            &root.join("sweep_aggregate"),
            &sweep_cells,
            attempted,
            &failed_all,
            level,
        )?;
        eprintln!(
            "inferbench: sweep summary in {}",
            root.join("sweep_aggregate").display()
        );
    }
    if interrupted {
        return Ok(EXIT_INTERRUPTED);
    }
    match failures.len() {
        0 => Ok(0),
        1 if runs == 1 && !sweep => Err(failures.pop().expect("one failure")),
        n => Err(Failure {
            code: failures.iter().map(|f| f.code).max().unwrap_or(1),
            message: format!("{n} of the runs failed (see above)"),
        }),
    }
}

#[allow(clippy::too_many_arguments)]
fn write_confidence(
    dir: &Path,
    summaries: &[inferbench_core::Summary],
    labels: &[String],
    failed: &[String],
    runs: usize,
    level: f64,
    a: &ProfileArgs,
    cell: &crate::cli::Cell,
) -> Result<(), Failure> {
    let entries = inferbench_metrics::confidence::aggregate(summaries, level)
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
        num_profile_runs: runs,
        num_successful_runs: summaries.len(),
        failed_runs: failed.to_vec(),
        confidence_level: level,
        run_labels: labels.to_vec(),
        cooldown_seconds: a.profile_run_cooldown_seconds,
        extra,
    };
    std::fs::create_dir_all(dir)
        .map_err(|e| Failure::run(format!("{}: cannot create: {e}", dir.display())))?;
    inferbench_artifacts::aggregate::write_confidence(dir, &entries, &meta)
        .map_err(|e| Failure::run(e.to_string()))?;
    Ok(())
}

fn write_sweep(
    dir: &Path,
    sweep_cells: &[inferbench_artifacts::aggregate::SweepCell],
    attempted: usize,
    failed_runs: &[String],
    level: f64,
) -> Result<(), Failure> {
    let meta = inferbench_artifacts::aggregate::SweepMeta {
        sweep_mode: "repeated".into(),
        num_profile_runs: attempted,
        num_successful_runs: sweep_cells.iter().map(|c| c.runs.len()).sum(),
        failed_runs: failed_runs.to_vec(),
        extra: serde_json::Map::new(),
    };
    std::fs::create_dir_all(dir)
        .map_err(|e| Failure::run(format!("{}: cannot create: {e}", dir.display())))?;
    inferbench_artifacts::aggregate::write_sweep(dir, sweep_cells, &meta, level)
        .map_err(|e| Failure::run(e.to_string()))?;
    Ok(())
}

/// How one run ended: its exit code (0, interrupted, missed schedule), its profiling
/// summary, and the failure to report, if any (every request failed, missed schedule).
struct RunResult {
    code: u8,
    summary: inferbench_core::Summary,
    failure: Option<Failure>,
}

async fn run_against(
    plan: &RunPlan,
    tok: Arc<Tokenizer>,
    simulated: bool,
) -> Result<RunResult, Failure> {
    let clock = Clock::start();
    let started_at = inferbench_core::time::iso_utc_seconds(clock.anchor_unix_ns());

    // Reach the server before anything else, so that a wrong --url fails in one line.
    let models_response =
        inferbench_client::transport::fetch_models(clock, &plan.url, Duration::from_secs(10))
            .await
            .map_err(|e| Failure::run(format!("--url: {e}")))?;

    let rendered = workload_of(plan, &tok)?;
    let seed = rendered.seed_used;
    let prepared = crate::sessions::prepare(plan, &rendered.workload).map_err(Failure::input)?;
    // The sampler draws conversations (AIPerf's defaults: shuffle for synthetic data,
    // sequential for files); a conversation's turns go in order. The order depends only on
    // the seed, not on timing: session k always gets the k-th draw.
    check_wrap(plan, &rendered, prepared.requests)?;
    let mut sampler =
        inferbench_workload::Sampler::new(rendered.sampling, prepared.conversations, seed)
            .map_err(|e| Failure::input(e.to_string()))?;
    let order: Box<dyn FnMut() -> usize + Send> = Box::new(move || sampler.next());

    let run_dir = PathBuf::from(&plan.artifacts.run_dir);
    let names = inferbench_artifacts::file_names(&plan.artifacts.prefix);
    prepare_run_dir(&run_dir, &names)?;
    inferbench_artifacts::write_inputs_json(
        &run_dir,
        &inferbench_workload::inputs_json(&rendered.workload),
    )
    .map_err(|e| Failure::run(e.to_string()))?;

    let benchmark_id = new_benchmark_id(clock.anchor_unix_ns());
    let header = EvidenceHeader {
        schema_version: EVIDENCE_SCHEMA_VERSION,
        tool: inferbench_core::TOOL_NAME.into(),
        tool_version: inferbench_core::TOOL_VERSION.into(),
        anchor_unix_ns: clock.anchor_unix_ns(),
        benchmark_id: benchmark_id.clone(),
        endpoint_type: plan.endpoint_type.as_str().into(),
        streaming: plan.streaming,
        tokenizer: tok.name().to_string(),
        use_server_token_count: plan.use_server_token_count,
    };
    let mut writer = inferbench_artifacts::EvidenceWriter::create(&run_dir, &header)
        .map_err(|e| Failure::run(e.to_string()))?;

    // Written now and replaced at the end: a run that is killed leaves a manifest that says
    // it did not finish (and `inferbench metrics DIR` can still score its evidence).
    let manifest = Manifest {
        schema_version: inferbench_core::manifest::MANIFEST_SCHEMA_VERSION,
        benchmark_id: benchmark_id.clone(),
        tool: crate::host::tool_identity(),
        host: crate::host::host_identity(),
        plan: plan.clone(),
        tokenizer: TokenizerIdentity {
            name: tok.name().to_string(),
            sha256: tok.sha256().to_string(),
        },
        dataset: DatasetIdentity {
            kind: rendered.kind.as_str().into(),
            entries: rendered.workload.payloads.len(),
            workload_sha256: rendered.workload.sha256(),
            corpus_sha256: Some(rendered.corpus_sha256.clone()),
        },
        random_seed: Some(seed),
        arrival: describe_arrival(plan, prepared.fixed.as_ref()),
        warmup: describe_warmup(plan),
        stop_rule: match plan.load.benchmark_duration_s {
            Some(d) => format!(
                "duration {d} s, then a grace period of {}",
                plan.load
                    .benchmark_grace_period_s
                    .map_or("inf".to_string(), |g| format!("{g} s"))
            ),
            None => format!("request count {}", plan.load.request_count),
        },
        stop_reason: StopReason::Unfinished,
        partial: true,
        started_at,
        ended_at: None,
        anchor_unix_ns: clock.anchor_unix_ns(),
        server: ServerIdentity {
            models_response,
            kind: if simulated {
                "simulated".into()
            } else {
                "remote".into()
            },
        },
        files: Vec::new(),
    };
    inferbench_artifacts::write_manifest(&run_dir, &manifest)
        .map_err(|e| Failure::run(e.to_string()))?;

    let fixed = prepared.fixed.clone();
    // Without --request-count, a trace (or any dataset read from a file) is sent once,
    // every row, as AIPerf does.
    let default_requests = match (&fixed, plan.load.request_count_given) {
        (_, true) => None,
        (Some(f), false) => Some(f.requests),
        (None, false) if plan.dataset.input_file.is_some() => Some(prepared.requests),
        _ => None,
    };
    let payloads: Vec<PreparedPayload> = prepared.payloads;
    let cfg = engine_config(
        plan,
        phases_of(plan, fixed.as_ref(), default_requests),
        plan.artifacts.export_level == ExportLevel::Raw,
        seed,
    )?;
    // Tokens are counted on the writer thread, not in the engine (see below).
    let counter: Option<Counter> = if plan.use_server_token_count {
        None
    } else {
        Some(Counter(tok.clone()))
    };
    let stop = StopSignal::new();
    let engine = Engine::new(cfg, clock, payloads, order, None, stop.clone());
    let isl = isl_counter(plan, tok.clone());
    let progress = engine.progress();

    // Records go to disk on their own thread, as they complete: the evidence line, the
    // per-record exports, and a fold into the metric accumulators. Then the record is dropped,
    // so memory does not grow with the run. The accumulators are the same code that
    // `inferbench metrics DIR` folds the evidence file through, so the live summary and the
    // offline one agree exactly (checked in the tests).
    let workload = Arc::new(rendered.workload);
    let mut exports = inferbench_artifacts::RecordExportStream::create(
        &run_dir,
        &names,
        plan.artifacts.export_level,
        clock.anchor_unix_ns(),
        has_warmup(plan),
    )
    .map_err(|e| Failure::run(e.to_string()))?;
    let definitions = inferbench_metrics::definition_sets()[0];
    let slos = crate::metrics_cmd::slos_of(plan)?;
    let new_acc = || {
        inferbench_metrics::Accumulator::new(definitions, &header)
            .map(|a| a.with_slos(slos.clone(), plan.confidence_level))
            .map_err(|e| Failure::run(e.to_string()))
    };
    let mut profiling_acc = new_acc()?;
    let mut warmup_acc = new_acc()?;
    let mut schedule_acc = inferbench_metrics::schedule::ScheduleAccumulator::default();
    let (tx, mut rx) = tokio::sync::mpsc::unbounded_channel::<EngineEvent>();
    let writer_thread = {
        let plan = plan.clone();
        let workload = workload.clone();
        std::thread::Builder::new()
            .name("evidence-writer".into())
            .spawn(move || -> Result<WriterOutput, String> {
                let headers_of = crate::metrics_cmd::sent_headers(&plan);
                let mut text = String::new();
                let mut phases = Vec::new();
                let mut warmup_records = 0u64;
                // Poll instead of blocking: a parked receiver would be woken (a futex call
                // on the client's thread) for every record; polling every 2 ms costs nothing
                // there.
                loop {
                    let ev = match rx.try_recv() {
                        Ok(ev) => ev,
                        Err(tokio::sync::mpsc::error::TryRecvError::Empty) => {
                            std::thread::sleep(Duration::from_millis(2));
                            continue;
                        }
                        Err(tokio::sync::mpsc::error::TryRecvError::Disconnected) => break,
                    };
                    match ev {
                        EngineEvent::Record(mut r, sent_body) => {
                            // Counting here keeps tokenization off the client's thread, where
                            // it would delay the stamping of other streams' frames.
                            if let Some(c) = &counter {
                                inferbench_client::engine::count_tokens(c, &mut r, &mut text);
                                if let Some(b) = &sent_body {
                                    r.tokens.input = isl(b);
                                }
                            }
                            writer.write_record(&r).map_err(|e| e.to_string())?;
                            if r.phase() == Phase::Warmup {
                                warmup_records += 1;
                                warmup_acc.push(&r);
                                continue;
                            }
                            let metrics = profiling_acc.push(&r);
                            schedule_acc.push(&r);
                            let (headers, body) = if exports.wants_raw() {
                                // The body as sent: with its history when it had one.
                                let body = r.sent_body.as_deref().or_else(|| {
                                    usize::try_from(r.payload_index)
                                        .ok()
                                        .and_then(|i| workload.payloads.get(i))
                                        .map(|p| p.body.as_str())
                                });
                                (headers_of(&r), body)
                            } else {
                                (Vec::new(), None)
                            };
                            exports
                                .push(&r, &metrics, &headers, body)
                                .map_err(|e| e.to_string())?;
                        }
                        EngineEvent::Phase(w) => {
                            writer.write_phase(&w).map_err(|e| e.to_string())?;
                            phases.push(w);
                        }
                    }
                }
                Ok(WriterOutput {
                    writer,
                    exports,
                    profiling: profiling_acc,
                    schedule: schedule_acc,
                    warmup: (warmup_records > 0).then_some(warmup_acc),
                    phases,
                })
            })
            .map_err(|e| Failure::run(format!("cannot start the evidence writer: {e}")))?
    };

    let ctrl_c = {
        let stop = stop.clone();
        tokio::spawn(async move {
            while tokio::signal::ctrl_c().await.is_ok() {
                match stop.escalate() {
                    1 => eprintln!(
                        "\ninferbench: Ctrl-C: no new requests; waiting for those in flight (Ctrl-C again cancels them)"
                    ),
                    _ => eprintln!("\ninferbench: Ctrl-C: cancelling the requests in flight"),
                }
            }
        })
    };
    // SIGTERM (a supervisor stopping us) cancels at once, but still writes the artifacts.
    let sigterm = {
        let stop = stop.clone();
        tokio::spawn(async move {
            use tokio::signal::unix::{SignalKind, signal};
            if let Ok(mut term) = signal(SignalKind::terminate())
                && term.recv().await.is_some()
            {
                eprintln!("\ninferbench: SIGTERM: cancelling the requests in flight");
                stop.escalate();
                stop.escalate();
            }
        })
    };
    let (done_tx, done_rx) = tokio::sync::oneshot::channel();
    let progress_task = tokio::spawn(crate::progress::show(plan.ui, progress, done_rx));

    // The client's own CPU, memory, threads and the machine's pressure, about once a second.
    let (sampler_stop, sampler_rx) = tokio::sync::watch::channel(false);
    let sampler = tokio::spawn(inferbench_client::resources::run_sampler(
        clock,
        Duration::from_secs(1),
        sampler_rx,
    ));

    let outcome = engine.run(tx).await;
    let _ = done_tx.send(());
    let _ = progress_task.await;
    ctrl_c.abort();
    sigterm.abort();
    let _ = sampler_stop.send(true);
    let samples = sampler.await.unwrap_or_default();
    let resources = inferbench_client::resources::summarize(&samples);
    write_resources(&run_dir, &resources, &samples)?;

    let written = writer_thread
        .join()
        .map_err(|_| Failure::run("the evidence writer panicked"))?
        .map_err(|e| Failure::run(format!("writing the evidence: {e}")))?;
    let end = EvidenceEnd {
        stop_reason: outcome.stop_reason,
        end_ns: outcome.end_ns,
        records: outcome.records,
    };
    written
        .writer
        .finish(end)
        .map_err(|e| Failure::run(e.to_string()))?;
    let window_of = |phase: Phase| written.phases.iter().find(|w| w.phase == phase).copied();
    let mut profiling_summary = written.profiling.finish(window_of(Phase::Profiling));
    let verdict =
        crate::metrics_cmd::add_schedule_metrics(&mut profiling_summary, written.schedule, plan);
    let warmup_summary = written.warmup.map(|a| a.finish(window_of(Phase::Warmup)));
    let mut record_files = written
        .exports
        .commit()
        .map_err(|e| Failure::run(e.to_string()))?;
    record_files.push(RESOURCES_FILE.to_string());

    let partial = outcome.stop_reason != StopReason::Completed;
    let mut manifest = manifest;
    manifest.stop_reason = outcome.stop_reason;
    manifest.partial = partial;
    manifest.ended_at = Some(inferbench_core::time::iso_utc_seconds(
        clock.anchor_unix_ns() + outcome.end_ns,
    ));
    let inputs = inferbench_workload::inputs_json(&workload);
    let status = inferbench_artifacts::ExportStatus {
        was_cancelled: partial,
        partial,
    };
    let console =
        inferbench_artifacts::write_summary_artifacts(&inferbench_artifacts::SummaryArtifacts {
            dir: &run_dir,
            names: &names,
            benchmark_id: &header.benchmark_id,
            anchor_unix_ns: clock.anchor_unix_ns(),
            profiling_window: window_of(Phase::Profiling),
            status,
            plan,
            profiling: &profiling_summary,
            warmup: warmup_summary.as_ref(),
            inputs: &inputs,
            manifest: &manifest,
            record_files,
        })
        .map_err(|e| Failure::run(e.to_string()))?
        .console;
    println!("{console}");
    eprintln!(
        "inferbench: tokens counted with {}{}",
        tok.name(),
        if plan.use_server_token_count {
            " (token metrics from the server's usage: --use-server-token-count)"
        } else {
            ""
        }
    );
    eprintln!("inferbench: artifacts in {}", run_dir.display());
    eprintln!("{}", describe_resources(&resources));
    let warning = verdict
        .as_ref()
        .and_then(crate::metrics_cmd::schedule_warning);
    if let Some(w) = &warning {
        eprintln!("{w}");
    }
    if let Some(reason) = &outcome.abort_reason {
        return Ok(RunResult {
            code: 1,
            summary: profiling_summary,
            failure: Some(Failure::run(format!(
                "{reason} (artifacts are marked partial)"
            ))),
        });
    }
    if partial {
        eprintln!("inferbench: the run was interrupted: artifacts are marked partial");
        return Ok(RunResult {
            code: EXIT_INTERRUPTED,
            summary: profiling_summary,
            failure: None,
        });
    }
    let count = |tag: &str| {
        profiling_summary
            .get(tag)
            .and_then(|m| m.avg())
            .unwrap_or(0.0)
    };
    let failure = if count("request_count") == 0.0 && count("error_request_count") > 0.0 {
        let first = profiling_summary
            .error_summary
            .first()
            .map(|e| e.message.clone())
            .unwrap_or_default();
        Some(Failure::run(format!(
            "every request failed ({} of {}); the most common error: {first}",
            count("error_request_count"),
            count("completed_request_count")
        )))
    } else if warning.is_some() && plan.load.schedule_rule.fail_on_miss {
        Some(Failure {
            code: EXIT_MISSED_SCHEDULE,
            message: "the schedule was not kept (--fail-on-missed-schedule)".into(),
        })
    } else {
        None
    };
    Ok(RunResult {
        code: failure.as_ref().map_or(0, |f| f.code),
        summary: profiling_summary,
        failure,
    })
}

/// Create the run directory and remove artifacts a previous run left there, so that no stale
/// file can pass for part of this run.
fn prepare_run_dir(dir: &Path, names: &inferbench_artifacts::FileNames) -> Result<(), Failure> {
    std::fs::create_dir_all(dir)
        .map_err(|e| Failure::run(format!("{}: cannot create: {e}", dir.display())))?;
    // The results-ready marker goes first, so that a crash in between never leaves a
    // directory that claims to be complete.
    for f in [
        &names.results_ready,
        &names.records_jsonl,
        &names.raw_jsonl,
        &names.summary_json,
        &names.summary_csv,
        &names.console_txt,
        &names.inputs_json,
        &names.manifest,
        &names.evidence,
        &RESOURCES_FILE.to_string(),
    ] {
        let p = dir.join(f);
        if p.exists() {
            std::fs::remove_file(&p)
                .map_err(|e| Failure::run(format!("{}: cannot remove: {e}", p.display())))?;
        }
    }
    Ok(())
}

pub const RESOURCES_FILE: &str = "inferbench_client_resources.json";

/// `{summary, samples}` of the client's resources, next to the other artifacts.
fn write_resources(
    dir: &Path,
    summary: &inferbench_client::resources::ResourceSummary,
    samples: &[inferbench_client::resources::ResourceSample],
) -> Result<(), Failure> {
    let v = serde_json::json!({ "summary": summary, "samples": samples });
    let text = serde_json::to_string_pretty(&v).unwrap_or_default();
    let p = dir.join(RESOURCES_FILE);
    std::fs::write(&p, text).map_err(|e| Failure::run(format!("{}: {e}", p.display())))
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
    line
}

/// The engine's configuration for a plan: the full URI (the streaming path where the API has
/// its own), the headers (API key included), timeouts, cancellation and `<think>` splitting.
pub fn engine_config(
    plan: &RunPlan,
    phases: Vec<PhaseSpec>,
    keep_raw: bool,
    seed: u64,
) -> Result<EngineConfig, Failure> {
    let uri: http::Uri = format!("{}{}", plan.url, plan.endpoint_path)
        .parse()
        .map_err(|e| Failure::input(format!("--url/--custom-endpoint: invalid URL: {e}")))?;
    let headers = inferbench_client::configured_headers(plan.api_key.as_ref(), &plan.headers)
        .map_err(Failure::input)?;
    let decoder = inferbench_client::decode::Decoder::new(plan.endpoint_type, &plan.endpoint)
        .map_err(|e| Failure::input(e.to_string()))?;
    Ok(EngineConfig {
        uri,
        endpoint_type: plan.endpoint_type,
        streaming: plan.streaming,
        headers,
        timeout: Duration::from_secs_f64(plan.request_timeout_seconds),
        phases,
        cancellation: plan.load.cancellation.map(|c| Cancellation {
            rate_pct: c.rate_pct,
            delay: Duration::from_secs_f64(c.delay_s),
        }),
        keep_raw,
        seed,
        decoder,
    })
}

/// The frozen workload of a plan: every request body, rendered before the run (a dataset
/// file is read and checked whole before anything is sent).
pub fn workload_of(
    plan: &RunPlan,
    tok: &Tokenizer,
) -> Result<inferbench_workload::dataset::BuiltWorkload, Failure> {
    inferbench_workload::dataset::build_workload(plan, tok, Corpus::shakespeare())
        .map_err(|e| Failure::input(e.to_string()))
}

/// ISL of a body built at send time (a turn with its history), counted as the workload
/// counts: the input texts joined by a space.
pub fn isl_counter(
    plan: &RunPlan,
    tok: Arc<Tokenizer>,
) -> impl Fn(&[u8]) -> Option<u64> + Send + 'static {
    let endpoint = plan.endpoint_type;
    move |body: &[u8]| {
        let v: serde_json::Value = serde_json::from_slice(body).ok()?;
        Some(inferbench_workload::render::count_input_tokens(
            &tok,
            endpoint,
            v.as_object()?,
        ))
    }
}

/// A sequential dataset without `--allow-dataset-wrap` cannot be asked for more requests
/// than it holds.
fn check_wrap(
    plan: &RunPlan,
    w: &inferbench_workload::dataset::BuiltWorkload,
    requests: u64,
) -> Result<(), Failure> {
    let wanted = plan.load.request_count + plan.load.warmup_request_count;
    if w.sampling == inferbench_workload::SamplingStrategy::Sequential
        && !plan.dataset.allow_dataset_wrap
        && plan.load.request_count_given
        && plan.load.benchmark_duration_s.is_none()
        && wanted > requests
    {
        return Err(Failure::input(format!(
            "--request-count {} (with {} warmup): the dataset holds {requests} requests; add --allow-dataset-wrap to start over from its beginning",
            plan.load.request_count, plan.load.warmup_request_count
        )));
    }
    Ok(())
}

fn has_warmup(plan: &RunPlan) -> bool {
    plan.load.warmup_request_count > 0 || plan.load.warmup_duration_s.is_some()
}

/// The engine's phases from the plan. Warmup settings fall back to the profiling ones, as in
/// AIPerf.
fn phases_of(
    plan: &RunPlan,
    fixed: Option<&crate::sessions::FixedSchedule>,
    default_requests: Option<u64>,
) -> Vec<PhaseSpec> {
    let l = &plan.load;
    let secs = |s: Option<f64>| s.map(Duration::from_secs_f64);
    let mode = |rate: Option<f64>,
                concurrency: usize,
                ceiling: Option<usize>,
                conc_ramp: Option<Duration>,
                rate_ramp: Option<Duration>| match (rate, &l.request_rate) {
        (Some(rate), r) => LoadMode::Rate {
            pattern: match r.as_ref().map(|r| r.pattern) {
                Some(ArrivalKind::Constant) => ArrivalPattern::Constant,
                Some(ArrivalKind::Gamma) => ArrivalPattern::Gamma {
                    smoothness: r.as_ref().and_then(|r| r.smoothness).unwrap_or(1.0),
                },
                _ => ArrivalPattern::Poisson,
            },
            rate,
            ramp: rate_ramp,
            ceiling,
            ceiling_ramp: conc_ramp,
        },
        (None, _) => LoadMode::Burst {
            concurrency,
            ramp: conc_ramp,
        },
    };
    let mut phases = Vec::new();
    if has_warmup(plan) {
        let rate = l
            .warmup_request_rate
            .or(l.request_rate.as_ref().map(|r| r.rate));
        let concurrency = l.warmup_concurrency.unwrap_or(l.concurrency);
        let ceiling = l
            .warmup_concurrency
            .or(l.request_rate.as_ref().and_then(|r| r.ceiling));
        phases.push(PhaseSpec {
            phase: Phase::Warmup,
            // Warmup settings fall back to the profiling ones, ramps included.
            mode: mode(
                rate,
                concurrency,
                ceiling,
                secs(l.warmup_concurrency_ramp_s.or(l.concurrency_ramp_s)),
                secs(
                    l.warmup_request_rate_ramp_s
                        .or(l.request_rate.as_ref().and_then(|r| r.ramp_s)),
                ),
            ),
            request_count: (l.warmup_request_count > 0).then_some(l.warmup_request_count),
            duration: l.warmup_duration_s.map(Duration::from_secs_f64),
            grace: None,
            prefill_concurrency: l.warmup_prefill_concurrency.or(l.prefill_concurrency),
            // Only profiling requests count toward the threshold, as in AIPerf.
            failed_request_threshold: None,
        });
    }
    phases.push(PhaseSpec {
        phase: Phase::Profiling,
        mode: match (fixed, l.user_centric) {
            (Some(f), _) => LoadMode::Fixed {
                offsets_ns: std::sync::Arc::new(f.offsets_ns.clone()),
                conversations: std::sync::Arc::new(f.conversations.clone()),
                ceiling: l.fixed_schedule.ceiling,
            },
            (None, Some(u)) => LoadMode::UserCentric {
                users: u.users,
                rate: u.rate,
            },
            (None, None) => mode(
                l.request_rate.as_ref().map(|r| r.rate),
                l.concurrency,
                l.request_rate.as_ref().and_then(|r| r.ceiling),
                secs(l.concurrency_ramp_s),
                secs(l.request_rate.as_ref().and_then(|r| r.ramp_s)),
            ),
        },
        // With a duration, the request count is not the stop rule (as in AIPerf). A fixed
        // schedule ends with the trace unless a count was given.
        request_count: match (l.benchmark_duration_s, fixed, l.request_count_given) {
            (Some(_), _, _) => None,
            (None, Some(_), false) => None,
            (None, _, _) => Some(default_requests.unwrap_or(l.request_count)),
        },
        duration: l.benchmark_duration_s.map(Duration::from_secs_f64),
        grace: l
            .benchmark_duration_s
            .and(l.benchmark_grace_period_s.map(Duration::from_secs_f64)),
        prefill_concurrency: l.prefill_concurrency,
        failed_request_threshold: l
            .failed_request_threshold
            .map(|t| (t, (l.concurrency as u64).max(10))),
    });
    phases
}

fn describe_arrival(plan: &RunPlan, fixed: Option<&crate::sessions::FixedSchedule>) -> String {
    if let Some(f) = fixed {
        let fs = plan.load.fixed_schedule;
        return format!(
            "fixed schedule: {} sessions at their trace times (trace time {} ms is offset 0{}{}){}",
            f.offsets_ns.len(),
            f.zero_ms,
            fs.start_offset_ms
                .map_or(String::new(), |s| format!(", from {s} ms")),
            fs.end_offset_ms
                .map_or(String::new(), |e| format!(", to {e} ms")),
            fs.ceiling
                .map_or(String::new(), |c| format!(", at most {c} sessions at once")),
        );
    }
    if let Some(u) = plan.load.user_centric {
        return format!(
            "user-centric: {} users, {} requests/s together (each user {:.3} s apart, waiting for its previous request)",
            u.users,
            u.rate,
            u.users as f64 / u.rate
        );
    }
    match &plan.load.request_rate {
        Some(r) => format!(
            "request rate {} /s, {}{}{}{}",
            r.rate,
            match r.pattern {
                ArrivalKind::Constant => "constant".to_string(),
                ArrivalKind::Poisson => "poisson".to_string(),
                ArrivalKind::Gamma => format!("gamma (smoothness {})", r.smoothness.unwrap_or(1.0)),
            },
            r.ramp_s.map_or(String::new(), |d| format!(", ramp {d} s")),
            r.ceiling
                .map_or(String::new(), |c| format!(", at most {c} in flight")),
            plan.load.cancellation.map_or(String::new(), |c| format!(
                ", {}% cancelled {} s after sending",
                c.rate_pct, c.delay_s
            )),
        ),
        None => format!(
            "concurrency {} (burst: a new request as soon as a slot frees){}",
            plan.load.concurrency,
            plan.load.cancellation.map_or(String::new(), |c| format!(
                ", {}% cancelled {} s after sending",
                c.rate_pct, c.delay_s
            )),
        ),
    }
}

fn describe_warmup(plan: &RunPlan) -> String {
    let l = &plan.load;
    match (l.warmup_request_count, l.warmup_duration_s) {
        (0, None) => "none".into(),
        (n, None) => format!("{n} requests"),
        (0, Some(d)) => format!("{d} s"),
        (n, Some(d)) => format!("{n} requests or {d} s, whichever first"),
    }
}

fn new_benchmark_id(anchor_unix_ns: u64) -> String {
    let h = inferbench_core::seed::sha256_hex(
        format!("{anchor_unix_ns}:{}", std::process::id()).as_bytes(),
    );
    h[..12].to_string()
}
