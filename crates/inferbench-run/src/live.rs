//! One live run: probe the server, write the frozen workload and a manifest that says
//! "unfinished", run the engine with the record sink on its own thread, then finish every
//! file. What is printed about it is the observer's business.

use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::Duration;

use inferbench_client::resources::{ResourceSample, ResourceSummary};
use inferbench_client::{Clock, Engine, EngineEvent, StopSignal};
use inferbench_core::evidence::{EvidenceEnd, EvidenceHeader, StopReason};
use inferbench_core::manifest::{Manifest, ServerIdentity, TokenizerIdentity};
use inferbench_core::plan::{RunPlan, Target, TokenizerSpec};
use inferbench_core::record::EVIDENCE_SCHEMA_VERSION;
use inferbench_telemetry::scrape::Trigger;

use crate::fold::Scores;
use crate::observer::{Event, Observer};
use crate::prepare::{Counter, Prepared, isl_counter};
use crate::side_files::{CLIENT_RESOURCES, SCRAPES, SIDE_FILES};
use crate::sink::{RecordSink, SinkSpec};
use crate::{Failure, exit};

/// How one run ended, and what it wrote.
#[derive(Clone, Debug)]
pub struct RunReport {
    pub dir: PathBuf,
    pub console: String,
    /// The "By endpoint" table (several URLs or models), printed after the console's.
    pub breakdown_console: Option<String>,
    /// The tokenizer that counted, and whether the server's usage was used instead.
    pub tokenizer: String,
    pub use_server_token_count: bool,
    pub resources: ResourceSummary,
    pub scores: Scores,
    pub stop_reason: StopReason,
    /// The exit code of this run alone (0, 1, 3 or 130).
    pub code: u8,
    /// What to report when the run did not hold: every request failed, the failed-request
    /// threshold, a missed schedule with `--fail-on-missed-schedule`.
    pub failure: Option<Failure>,
}

impl RunReport {
    pub fn interrupted(&self) -> bool {
        self.code == exit::INTERRUPTED
    }
}

/// `{summary, samples}` of the client's resources (the side file's content).
#[derive(serde::Serialize, serde::Deserialize, Clone, Debug, Default, PartialEq)]
pub struct ClientResources {
    pub summary: ResourceSummary,
    pub samples: Vec<ResourceSample>,
}

/// Runs one prepared plan (its `plan.url` is where requests go); its payloads move into the
/// engine.
pub async fn run_one(mut p: Prepared, observer: &Arc<dyn Observer>) -> Result<RunReport, Failure> {
    // An https run's TLS configuration (SSL_CERT_FILE read here, docs/tls.md), for the
    // probe's and the engine's connections; the manifest's plan says what was used.
    if p.plan.url.starts_with("https://") {
        let env = std::env::var("SSL_CERT_FILE").ok();
        p.plan.tls =
            inferbench_client::tls::with_env_ca(&p.plan.tls, env).map_err(Failure::input)?;
        inferbench_client::tls::install_plan(&p.plan.tls).map_err(Failure::input)?;
    }
    let plan = &p.plan;
    let clock = crate::shard::gate::run_clock(&p.plan);
    let started_at = inferbench_core::time::iso_utc_seconds(clock.anchor_unix_ns());
    if !plan.tls.verifies() {
        observer.event(Event::Warning {
            message: "--insecure: TLS certificates are NOT verified (any server can answer for this URL); the manifest says tls.verification \"disabled\"",
        });
    }
    // `--reset-kv-cache`: once before each run, so that no run inherits the cache of the
    // one before it (AIPerf: fatal on failure, before anything is written).
    let kv_cache_reset = crate::wait_model::reset_kv_cache(&p).await?;
    // Reach the server before writing anything, so that a wrong --url fails in one line.
    let models_response = inferbench_client::probe::fetch_models_with(
        clock,
        &plan.url,
        &p.engine.headers,
        Duration::from_secs(10),
    )
    .await
    .map_err(|e| Failure::run(format!("--url: {e}")))?;
    crate::routing::check_reachable(plan, &p.engine.headers, clock).await?;

    let run_dir = PathBuf::from(&plan.artifacts.run_dir);
    let names = inferbench_artifacts::file_names(&plan.artifacts.prefix);
    let header = EvidenceHeader {
        schema_version: EVIDENCE_SCHEMA_VERSION,
        tool: inferbench_core::TOOL_NAME.into(),
        tool_version: inferbench_core::TOOL_VERSION.into(),
        anchor_unix_ns: clock.anchor_unix_ns(),
        benchmark_id: new_benchmark_id(clock.anchor_unix_ns()),
        endpoint_type: plan.endpoint_type.as_str().into(),
        streaming: plan.streaming,
        tokenizer: p.tokenizer.name().to_string(),
        use_server_token_count: plan.use_server_token_count,
        per_chunk_usage: plan.endpoint.per_chunk_usage,
    };
    // Built before anything is written: a declaration that contradicts a measured pin is a
    // one-line error that leaves an earlier run's files alone.
    let mut manifest = first_manifest(&p, &header, started_at, models_response, kv_cache_reset)?;
    clear_run_dir(&run_dir, &names)?;
    inferbench_artifacts::write_inputs_json(&run_dir, &p.inputs)?;
    crate::correctness::freeze(&run_dir, p.answers.as_deref())?;
    let mut evidence = inferbench_artifacts::EvidenceWriter::create_with(
        &run_dir,
        &header,
        plan.artifacts.evidence_compression,
    )?;
    // Written now and replaced at the end: a run that is killed leaves a manifest that says
    // it did not finish (and `inferbench metrics DIR --write` can still score its evidence).
    inferbench_artifacts::write_manifest(&run_dir, &manifest)?;
    // A shard: its clock measured and `--start-at` made a deadline (a late shard stops here).
    let gate = crate::shard::gate::open(&p, &run_dir, &mut manifest)?;

    // Server metrics and GPU telemetry, on their own thread; the start scrapes happen now,
    // before the first request.
    let scraper = start_scraper(plan, &run_dir, clock)?;
    let stop = StopSignal::new();
    let route_uris = crate::routing::uris(plan)?;
    let route_models = crate::routing::payload_models(plan, &p.payloads);
    let mut engine = Engine::new(
        p.engine.clone(),
        clock,
        std::mem::take(&mut p.payloads),
        p.order()?,
        None,
        stop.clone(),
    );
    crate::routing::apply(&mut engine, &route_uris, route_models);
    engine.set_reuse_strategy(plan.connection.reuse_strategy);
    // `--server-profiler`: started right before the profiling phase, stopped right after.
    let profiler = crate::server_profiler::gate(plan, &p.engine.headers, clock)?;
    if let Some(sp) = &profiler {
        engine.set_phase_gate(sp.gate.clone());
    }
    let progress = engine.progress();
    if let Some(s) = &scraper {
        let h = s.handle();
        engine.set_phase_hook(std::sync::Arc::new(move |phase, start| {
            let trigger = if start {
                Trigger::PhaseStart
            } else {
                Trigger::PhaseEnd
            };
            let name = match phase {
                inferbench_core::Phase::Warmup => "warmup",
                inferbench_core::Phase::Profiling => "profiling",
            };
            h.bracket(trigger, Some(name), BRACKET_WAIT);
        }));
    }
    let probes = engine.probes();
    let queues = probes.queues.clone();

    // Records go to disk on their own thread, as they complete: the evidence line, then the
    // sink (the fold and the per-record exports). Then the record is dropped, so memory does
    // not grow with the run.
    let mut sink = RecordSink::open(SinkSpec {
        dir: &run_dir,
        plan,
        header: &header,
        workload: p.workload.clone(),
        slos: &p.slos,
        has_warmup: p.has_warmup(),
    })?;
    // Tokens are counted on the writer thread, not on the client's, where it would delay
    // the stamping of other streams' frames.
    let counter = (!plan.use_server_token_count).then(|| Counter(p.tokenizer.clone()));
    let isl = isl_counter(plan, p.tokenizer.clone());
    let (tx, mut rx) = tokio::sync::mpsc::unbounded_channel::<EngineEvent>();
    let live = Arc::new(crate::live_stats::LiveStats::default());
    let live_w = live.clone();
    /// Records waiting below which the writer yields between records (a batch of one 2 ms
    /// poll at concurrency 1 is ~14).
    const WRITER_YIELD_BELOW: usize = 64;
    let writer_thread = std::thread::Builder::new()
        .name("evidence-writer".into())
        .spawn(move || -> Result<_, Failure> {
            let mut text = String::new();
            // Poll instead of blocking: a parked receiver would be woken (a futex call on the
            // client's thread) for every record; polling every 2 ms costs nothing there.
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
                        if let Some(c) = &counter {
                            inferbench_client::engine::count_tokens(c, &mut r, &mut text);
                            if let Some(b) = &sent_body {
                                r.tokens.input = isl(b);
                            }
                        }
                        evidence.write_record(&r)?;
                        sink.record(&r)?;
                        live_w.observe(&r);
                        queues.record_written();
                        // Its events vector goes back to the client's thread for reuse.
                        inferbench_client::engine::recycle(std::mem::take(&mut r.events));
                        // Give the CPU back between records. After its 2 ms sleep the writer
                        // holds a batch (about 14 records at concurrency 1, ~25 µs each); the
                        // client's thread, woken by a frame meanwhile, is a sleeper too, so
                        // the scheduler would let it wait out the whole batch: every 14th
                        // request gained ~0.35 ms of TTFT (p99 0.43-0.56 ms at concurrency 1).
                        // Yielding bounds that wait to one record (p99 0.12-0.13 ms).
                        // Only while the writer is keeping up: with a backlog (the client
                        // saturated, records arriving faster than a yielding writer writes
                        // them) every yield left the queue to grow without bound, 1.2 GB
                        // after 300,000 requests at concurrency 64; then it writes on.
                        if rx.len() < WRITER_YIELD_BELOW {
                            std::thread::yield_now();
                        }
                    }
                    EngineEvent::Phase(w) => {
                        evidence.write_phase(&w)?;
                        sink.phase(w);
                    }
                }
            }
            Ok((evidence, sink))
        })
        .map_err(|e| Failure::run(format!("cannot start the evidence writer: {e}")))?;

    let signals = watch_signals(stop, observer.clone());
    observer.event(Event::EngineStarted {
        ui: plan.ui,
        progress,
        live,
    });
    // The client's own CPU, cgroup, threads, sockets and queues and the machine's pressure,
    // about once a second, on the sampler's own thread (off the client's runtime).
    let sampler =
        inferbench_client::resources::Sampler::start(clock, Duration::from_secs(1), probes);
    if let Some(g) = &gate {
        g.wait().await;
    }
    let outcome = engine.run(tx).await;
    observer.event(Event::EngineStopped);
    let scraped = scraper.map(|s| s.stop());
    for s in signals {
        s.abort();
    }
    let samples = sampler.stop();
    let resources = ClientResources {
        summary: inferbench_client::resources::summarize(&samples),
        samples,
    };

    let (evidence, mut sink) = writer_thread
        .join()
        .map_err(|_| Failure::run("the evidence writer panicked"))?
        .map_err(|e| Failure::run(format!("writing the evidence: {e}")))?;
    if let Some(out) = &scraped {
        for w in out.warnings.iter().chain(&out.write_error) {
            observer.event(Event::Warning { message: w });
        }
        if out.targets.is_empty() {
            // Only AIPerf's absent defaults were asked for: no scrape file at all.
            let _ = std::fs::remove_file(run_dir.join(SCRAPES));
        }
    }
    let resources_json =
        serde_json::to_vec_pretty(&resources).map_err(|e| Failure::run(e.to_string()))?;
    sink.side_file(CLIENT_RESOURCES, &resources_json)?;
    let end = EvidenceEnd {
        stop_reason: outcome.stop_reason,
        end_ns: outcome.end_ns,
        records: outcome.records,
    };
    evidence.finish(end.clone())?;

    if let Some(sp) = &profiler {
        for w in sp.warnings.lock().map(|w| w.clone()).unwrap_or_default() {
            observer.event(Event::Warning { message: &w });
        }
        manifest.server.server_profiler = sp.record.lock().ok().map(|r| r.clone());
    }
    let partial = outcome.stop_reason != StopReason::Completed;
    manifest.stop_reason = outcome.stop_reason;
    manifest.partial = partial;
    manifest.ended_at = Some(inferbench_core::time::iso_utc_seconds(
        clock.anchor_unix_ns() + outcome.end_ns,
    ));
    let late = gate.and_then(|g| g.finish(&mut manifest, &outcome.windows, clock));
    let finished = sink.finish(Some(&end), &manifest, &p.inputs)?;

    let schedule_missed = finished.scores.schedule.as_ref().is_some_and(|v| !v.kept);
    let failure = if let Some(reason) = &outcome.abort_reason {
        Some(Failure::run(format!(
            "{reason} (artifacts are marked partial)"
        )))
    } else if partial {
        None
    } else {
        judge(
            &finished.scores,
            schedule_missed && plan.load.schedule_rule.fail_on_miss,
        )
    };
    let failure = late.or(failure);
    let code = match (&failure, partial) {
        (Some(f), _) => f.code,
        (None, true) => exit::INTERRUPTED,
        (None, false) => exit::OK,
    };
    Ok(RunReport {
        dir: run_dir,
        console: finished.console,
        breakdown_console: finished.breakdown_console,
        tokenizer: p.tokenizer.name().to_string(),
        use_server_token_count: plan.use_server_token_count,
        resources: resources.summary,
        scores: finished.scores,
        stop_reason: outcome.stop_reason,
        code,
        failure,
    })
}

/// How long a phase edge waits for its bracketing scrapes (a slow target delays the phase
/// by at most this; its scrape still completes and is kept).
const BRACKET_WAIT: Duration = Duration::from_secs(1);

fn start_scraper(
    plan: &RunPlan,
    run_dir: &Path,
    clock: Clock,
) -> Result<Option<inferbench_client::scrape::Scraper>, Failure> {
    let targets = crate::telemetry::targets(plan, &plan.url);
    if targets.is_empty() {
        return Ok(None);
    }
    inferbench_client::scrape::Scraper::start(targets, run_dir.join(SCRAPES), clock)
        .map(Some)
        .map_err(Failure::run)
}

/// A finished run that did not hold: every request failed, or the schedule was missed
/// under `--fail-on-missed-schedule`.
fn judge(scores: &Scores, missed_and_fatal: bool) -> Option<Failure> {
    let count = |tag: &str| {
        scores
            .profiling
            .get(tag)
            .and_then(|m| m.avg())
            .unwrap_or(0.0)
    };
    if count("request_count") == 0.0 && count("error_request_count") > 0.0 {
        let first = scores
            .profiling
            .error_summary
            .first()
            .map(|e| e.message.clone())
            .unwrap_or_default();
        return Some(Failure::run(format!(
            "every request failed ({} of {}); the most common error: {first}",
            count("error_request_count"),
            count("completed_request_count")
        )));
    }
    missed_and_fatal.then(|| Failure {
        code: exit::MISSED_SCHEDULE,
        message: "the schedule was not kept (--fail-on-missed-schedule)".into(),
    })
}

/// Ctrl-C escalates (stop issuing, then cancel); SIGTERM (a supervisor stopping us)
/// cancels at once. Either way the artifacts are still written.
fn watch_signals(
    stop: StopSignal,
    observer: Arc<dyn Observer>,
) -> Vec<tokio::task::JoinHandle<()>> {
    let ctrl_c = {
        let stop = stop.clone();
        let observer = observer.clone();
        tokio::spawn(async move {
            while tokio::signal::ctrl_c().await.is_ok() {
                let escalation = stop.escalate();
                observer.event(Event::Interrupt { escalation });
            }
        })
    };
    let sigterm = tokio::spawn(async move {
        use tokio::signal::unix::{SignalKind, signal};
        if let Ok(mut term) = signal(SignalKind::terminate())
            && term.recv().await.is_some()
        {
            observer.event(Event::Terminate);
            stop.escalate();
            stop.escalate();
        }
    });
    vec![ctrl_c, sigterm]
}

fn first_manifest(
    p: &Prepared,
    header: &EvidenceHeader,
    started_at: String,
    models_response: Option<serde_json::Value>,
    kv_cache_resets: Vec<inferbench_core::controls_plan::KvCacheReset>,
) -> Result<Manifest, Failure> {
    let plan: &RunPlan = &p.plan;
    let mut m = Manifest {
        schema_version: inferbench_core::manifest::MANIFEST_SCHEMA_VERSION,
        benchmark_id: header.benchmark_id.clone(),
        tool: crate::identity::tool_identity(),
        host: crate::identity::host_identity(),
        plan: plan.clone(),
        tokenizer: TokenizerIdentity {
            name: p.tokenizer.name().to_string(),
            sha256: p.tokenizer.sha256().to_string(),
            chat_template: crate::identity::chat_template_identity(&p.tokenizer),
            // Checked when the plan was built; checked again here so that the manifest
            // records what the files are at run time.
            revision: match (&plan.tokenizer_revision, &plan.tokenizer) {
                (Some(r), TokenizerSpec::HuggingFace { path }) => Some(
                    inferbench_workload::tokenizer_revision::check_revision(path, r)
                        .map_err(Failure::input)?,
                ),
                _ => None,
            },
        },
        dataset: p.dataset.clone(),
        random_seed: Some(p.seed),
        arrival: crate::describe::arrival(plan, p.fixed.as_ref()),
        warmup: crate::describe::warmup(plan),
        stop_rule: crate::describe::stop_rule(plan),
        stop_reason: StopReason::Unfinished,
        partial: true,
        started_at,
        ended_at: None,
        anchor_unix_ns: header.anchor_unix_ns,
        server: ServerIdentity {
            models_response,
            kind: match plan.target {
                Target::Simulated { .. } => "simulated".into(),
                _ => "remote".into(),
            },
            kv_cache_reset: kv_cache_resets.first().cloned(),
            // The list only when there were several origins: one run, one reset, as before.
            kv_cache_resets: if kv_cache_resets.len() > 1 {
                kv_cache_resets
            } else {
                Vec::new()
            },
            server_profiler: None,
        },
        files: Vec::new(),
        identity: None,
        shard: None,
        merge: None,
    };
    let mut id = crate::run_identity::measured(&crate::run_identity::Facts {
        manifest: &m,
        workload: &p.workload,
        sampling: Some(p.sampling()),
        profiling_requests: p.engine.phases.last().and_then(|ph| ph.request_count),
        read_template: true,
    });
    crate::run_identity::declare(&mut id, &p.declared, &m)
        .map_err(|e| Failure::input(e.to_string()))?;
    id.finish(crate::run_identity::NOT_MEASURED);
    m.identity = Some(id);
    Ok(m)
}

/// Creates the run directory and removes the files an earlier run left there, so that no
/// stale file can pass for part of this run. The results-ready marker goes first, so that a
/// crash in between never leaves a directory that claims to be complete.
fn clear_run_dir(dir: &Path, names: &inferbench_artifacts::FileNames) -> Result<(), Failure> {
    std::fs::create_dir_all(dir)
        .map_err(|e| Failure::run(format!("{}: cannot create: {e}", dir.display())))?;
    let ours = [
        &names.results_ready,
        &names.records_jsonl,
        &names.raw_jsonl,
        &names.summary_json,
        &names.summary_csv,
        &names.console_txt,
        &names.inputs_json,
        &names.manifest,
        &names.evidence,
        // The other form of the evidence: a plain run after a compressed one (or the
        // reverse) must not leave the earlier run's records beside its own.
        &inferbench_core::evidence::EVIDENCE_FILE_ZST.to_string(),
    ];
    let mut side = SIDE_FILES.iter().map(|s| s.to_string()).collect::<Vec<_>>();
    let (ts_json, ts_csv) = inferbench_artifacts::timeslices::timeslice_names(names);
    side.extend([ts_json, ts_csv]);
    // The per-phase summaries of an earlier run with a warmup, and their index.
    use inferbench_artifacts::phases::{PHASE_MANIFEST, PHASES_DIR};
    side.push(PHASE_MANIFEST.to_string());
    for phase in ["warmup", "profiling"] {
        for f in [&names.summary_json, &names.summary_csv] {
            side.push(format!("{PHASES_DIR}/{phase}/{f}"));
        }
    }
    for f in ours.into_iter().chain(side.iter()) {
        let p = dir.join(f);
        if p.exists() {
            std::fs::remove_file(&p)
                .map_err(|e| Failure::run(format!("{}: cannot remove: {e}", p.display())))?;
        }
    }
    // Their directories go too when nothing else is in them.
    for d in ["warmup", "profiling"] {
        let _ = std::fs::remove_dir(dir.join(PHASES_DIR).join(d));
    }
    let _ = std::fs::remove_dir(dir.join(PHASES_DIR));
    Ok(())
}

fn new_benchmark_id(anchor_unix_ns: u64) -> String {
    let h = inferbench_core::seed::sha256_hex(
        format!("{anchor_unix_ns}:{}", std::process::id()).as_bytes(),
    );
    h[..12].to_string()
}
