//! *Prepare*: a validated plan becomes everything the engine needs — the frozen workload,
//! payloads with their session timing, the phases, the sampler's order, the engine
//! configuration and the goodput SLOs — before any network traffic, so that a bad dataset,
//! tokenizer or value is reported before the server is touched.

use std::sync::Arc;
use std::time::Duration;

use inferbench_client::EngineConfig;
use inferbench_client::engine::{Cancellation, LoadMode, PhaseSpec, PreparedPayload};
use inferbench_core::RunPlan;
use inferbench_core::manifest::DatasetIdentity;
use inferbench_core::plan::{ArrivalKind, ExportLevel};
use inferbench_core::record::Phase;
use inferbench_core::schedule::ArrivalPattern;
use inferbench_core::workload::Workload;
use inferbench_metrics::aiperf::Slo;
use inferbench_workload::{Corpus, SamplingStrategy, Tokenizer};

use crate::Failure;
use crate::sessions::{self, FixedSchedule};

/// One run's plan, prepared. Cloning is cheap enough for repeated runs (bodies are shared).
#[derive(Clone)]
pub struct Prepared {
    pub plan: RunPlan,
    pub tokenizer: Arc<Tokenizer>,
    /// Every request body, rendered and frozen (what `inputs.json` holds).
    pub workload: Arc<Workload>,
    /// `inputs.json` as written.
    pub inputs: Arc<serde_json::Value>,
    pub dataset: DatasetIdentity,
    /// The seed actually used (the plan's, or one drawn from OS entropy).
    pub seed: u64,
    pub payloads: Vec<PreparedPayload>,
    /// Conversations the sampler draws from (the roots); every turn of every conversation.
    pub conversations: usize,
    /// Each root's conversation index (the sampler's k-th conversation is `roots[k]`).
    pub roots: Arc<Vec<usize>>,
    /// Some conversation is a child session (an agentic dataset, docs/load-shapes.md).
    pub trees: bool,
    pub requests: u64,
    pub fixed: Option<FixedSchedule>,
    sampling: SamplingStrategy,
    /// `--goodput`, parsed once.
    pub slos: Vec<Slo>,
    pub engine: EngineConfig,
    /// `--declare` / `--identity`: applied to the manifest's identity.
    pub declared: Vec<inferbench_core::identity::Declaration>,
    /// The dataset's expected answers, frozen into the run directory before it starts.
    pub answers: Option<Arc<crate::correctness::AnswerSet>>,
    /// `--shard-count`: this process's part of the schedule (docs/scale-out.md).
    pub shard: Option<Arc<crate::shard::Setup>>,
}

impl Prepared {
    /// A fresh draw order for one run: the sampler picks conversations, and the order
    /// depends only on the seed (session k always gets the k-th draw), not on timing.
    pub fn order(&self) -> Result<Box<dyn FnMut() -> usize + Send>, Failure> {
        let mut sampler =
            inferbench_workload::Sampler::new(self.sampling, self.conversations, self.seed)
                .map_err(|e| Failure::input(e.to_string()))?;
        // The sampler draws roots; child sessions start from their parents.
        let roots = self.roots.clone();
        let order: Box<dyn FnMut() -> usize + Send> = Box::new(move || {
            let k = sampler.next();
            roots.get(k).copied().unwrap_or(k)
        });
        Ok(match &self.shard {
            Some(s) => s.order(order),
            None => order,
        })
    }

    /// Points the run at `url` (the simulated server, once it listens).
    pub fn retarget(&mut self, url: &str) -> Result<(), Failure> {
        self.plan.url = url.to_string();
        self.engine.uri = uri_of(&self.plan)?;
        Ok(())
    }

    /// The same prepared run writing into `run_dir`, optionally without its warmup (the
    /// repeated runs after the first, `--profile-run-disable-warmup-after-first`).
    pub fn for_run(&self, run_dir: &std::path::Path, without_warmup: bool) -> Prepared {
        let mut p = self.clone();
        p.plan.artifacts.run_dir = run_dir.to_string_lossy().into_owned();
        if without_warmup {
            p.plan.load.warmup_request_count = 0;
            p.plan.load.warmup_duration_s = None;
            p.plan.load.warmup_sessions = None;
            p.engine.phases = phases_of(&p.plan, p.fixed.as_ref(), p.default_requests());
            tree_default(
                &mut p.engine.phases,
                &p.plan,
                p.trees,
                p.roots.len(),
                p.fixed.as_ref(),
            );
        }
        p
    }

    /// Without `--request-count`, a trace (or any dataset read from a file) is sent once,
    /// every row, as AIPerf does.
    fn default_requests(&self) -> Option<u64> {
        default_requests(&self.plan, self.fixed.as_ref(), self.requests)
    }

    pub fn has_warmup(&self) -> bool {
        has_warmup(&self.plan)
    }

    /// The sampler's strategy (the identity's request order).
    pub fn sampling(&self) -> SamplingStrategy {
        self.sampling
    }
}

fn default_requests(plan: &RunPlan, fixed: Option<&FixedSchedule>, requests: u64) -> Option<u64> {
    match (fixed, plan.load.request_count_given) {
        (_, true) => None,
        (Some(f), false) => Some(f.requests),
        (None, false) if plan.dataset.input_file.is_some() => Some(requests),
        _ => None,
    }
}

/// A dataset of child sessions without `--request-count` or `--benchmark-duration` runs
/// each root session once with all its children (AIPerf's rule for `dag_jsonl`: the root
/// count as the session limit); a request count would cut trees short, since children
/// claim their requests after later roots started. A fixed schedule ends with its roots.
fn tree_default(
    phases: &mut [PhaseSpec],
    plan: &RunPlan,
    trees: bool,
    roots: usize,
    fixed: Option<&FixedSchedule>,
) {
    let l = &plan.load;
    if !trees
        || l.request_count_given
        || l.benchmark_duration_s.is_some()
        || l.profiling_sessions.is_some()
    {
        return;
    }
    if let Some(p) = phases.iter_mut().find(|p| p.phase == Phase::Profiling) {
        p.request_count = None;
        p.session_count = Some(fixed.map_or(roots, |f| f.conversations.len()) as u64);
    }
}

/// The plan's `--goodput` under the live run's set (`aiperf-0.13`), parsed once.
pub fn live_slos(plan: &RunPlan) -> Result<Vec<Slo>, Failure> {
    let Some(g) = &plan.goodput else {
        return Ok(Vec::new());
    };
    let set = inferbench_metrics::find(inferbench_metrics::aiperf::NAME)
        .map_err(|e| Failure::run(e.to_string()))?;
    set.parse_goodput(g)
        .and_then(|g| g.aiperf_slos())
        .map_err(|e| Failure::input(e.to_string()))
}

/// Prepares `plan` with the run's tokenizer. Nothing is sent; `plan.url` may still be a
/// placeholder for the simulated server (see [`Prepared::retarget`]).
pub fn prepare(plan: &RunPlan, tokenizer: Arc<Tokenizer>) -> Result<Prepared, Failure> {
    let decoder = decoder_of(plan)?;
    let slos = live_slos(plan)?;
    let built =
        inferbench_workload::dataset::build_workload(plan, &tokenizer, Corpus::shakespeare())
            .map_err(|e| Failure::input(e.to_string()))?;
    let seed = built.seed_used;
    let sessions = sessions::prepare_with(plan, &built.workload, built.has_timestamps)
        .map_err(Failure::input)?;
    check_wrap(plan, built.sampling, sessions.requests)?;
    // Fails here, not at the first request, when the dataset has no conversation.
    inferbench_workload::Sampler::new(built.sampling, sessions.conversations, seed)
        .map_err(|e| Failure::input(e.to_string()))?;
    let mut phases = phases_of(
        plan,
        sessions.fixed.as_ref(),
        default_requests(plan, sessions.fixed.as_ref(), sessions.requests),
    );
    tree_default(
        &mut phases,
        plan,
        sessions.trees,
        sessions.roots.len(),
        sessions.fixed.as_ref(),
    );
    let engine = engine_config(
        plan,
        phases,
        plan.artifacts.export_level == ExportLevel::Raw,
        seed,
        decoder,
    )?;
    let dataset = DatasetIdentity {
        kind: built.kind.as_str().into(),
        entries: built.workload.payloads.len(),
        workload_sha256: built.workload.sha256(),
        corpus_sha256: Some(built.corpus_sha256.clone()),
        answers_sha256: None,
    };
    let answers = crate::correctness::AnswerSet::from_workload(&built.workload, &built.answers);
    let mut dataset = dataset;
    dataset.answers_sha256 = answers.as_ref().map(|a| a.digest().to_string());
    let inputs = inferbench_workload::inputs_json(&built.workload);
    let mut prepared = Prepared {
        plan: plan.clone(),
        tokenizer,
        workload: Arc::new(built.workload),
        inputs: Arc::new(inputs),
        dataset,
        seed,
        payloads: sessions.payloads,
        conversations: sessions.conversations,
        roots: Arc::new(sessions.roots),
        trees: sessions.trees,
        requests: sessions.requests,
        fixed: sessions.fixed,
        sampling: built.sampling,
        slos,
        engine,
        declared: Vec::new(),
        answers: answers.map(Arc::new),
        shard: None,
    };
    crate::shard::apply(&mut prepared)?;
    Ok(prepared)
}

fn uri_of(plan: &RunPlan) -> Result<http::Uri, Failure> {
    inferbench_core::endpoint_url::join(&plan.url, &plan.endpoint_path)
        .parse()
        .map_err(|e| Failure::input(format!("--url/--custom-endpoint: invalid URL: {e}")))
}

/// A duration flag as a `Duration` (the CLI has checked its range; this never panics).
fn secs(flag: &str, s: f64) -> Result<Duration, Failure> {
    Duration::try_from_secs_f64(s)
        .map_err(|_| Failure::input(format!("{flag} {s}: not a duration")))
}

/// The response decoder of a plan: the one place it is built. An invalid response path is a
/// flag error, reported before the dataset is read or anything is sent.
pub fn decoder_of(plan: &RunPlan) -> Result<inferbench_client::decode::Decoder, Failure> {
    let e = &plan.endpoint;
    inferbench_client::decode::Decoder::new(plan.endpoint_type, e).map_err(|err| {
        Failure::input(
            if e.reasoning_tags.is_some() && e.response_field.is_none() {
                format!("--reasoning-tags: {err}")
            } else {
                format!("--extra-inputs response_field / --reasoning-tags: {err}")
            },
        )
    })
}

/// The plan's configured headers (the API key, each `--header`) and `--session-header`, as
/// the engine sends them and the raw export lists them.
pub fn plan_headers(plan: &RunPlan) -> Result<Vec<inferbench_client::ConfiguredHeader>, Failure> {
    let mut headers =
        inferbench_client::headers::configured_headers(plan.api_key.as_ref(), &plan.headers)
            .map_err(Failure::input)?;
    // A form endpoint's body is multipart (made in `sessions`): its Content-Type replaces
    // the engine's `application/json`, in place, and the raw export lists it.
    if plan.endpoint_type.multipart() {
        let ct = inferbench_client::multipart::content_type();
        headers.push(
            inferbench_client::ConfiguredHeader::new("Content-Type", &ct, false)
                .map_err(|_| Failure::input("the multipart Content-Type is not a valid header"))?,
        );
    }
    if let Some(name) = &plan.controls.session_header {
        headers.push(
            inferbench_client::ConfiguredHeader::session(name).map_err(|_| {
                Failure::input(format!(
                    "--session-header {name:?}: not a valid header name"
                ))
            })?,
        );
    }
    Ok(headers)
}

/// The engine's configuration for a plan: the full URI (the streaming path where the API has
/// its own), the headers (API key included), timeouts, cancellation and response decoding.
pub fn engine_config(
    plan: &RunPlan,
    phases: Vec<PhaseSpec>,
    keep_raw: bool,
    seed: u64,
    decoder: inferbench_client::decode::Decoder,
) -> Result<EngineConfig, Failure> {
    let uri = uri_of(plan)?;
    let headers = plan_headers(plan)?;
    Ok(EngineConfig {
        uri,
        endpoint_type: plan.endpoint_type,
        streaming: plan.streaming,
        headers,
        timeout: secs("--request-timeout-seconds", plan.request_timeout_seconds)?,
        phases,
        cancellation: match plan.load.cancellation {
            Some(c) => Some(Cancellation {
                rate_pct: c.rate_pct,
                delay: secs("--request-cancellation-delay", c.delay_s)?,
            }),
            None => None,
        },
        keep_raw,
        seed,
        decoder,
    })
}

/// A sequential dataset without `--allow-dataset-wrap` cannot be asked for more requests
/// than it holds.
fn check_wrap(plan: &RunPlan, sampling: SamplingStrategy, requests: u64) -> Result<(), Failure> {
    let wanted = plan.load.request_count + plan.load.warmup_request_count;
    if sampling == SamplingStrategy::Sequential
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

pub fn has_warmup(plan: &RunPlan) -> bool {
    let l = &plan.load;
    l.warmup_request_count > 0 || l.warmup_duration_s.is_some() || l.warmup_sessions.is_some()
}

/// Seconds from the plan as a `Duration`; the CLI bounds every duration flag, so an
/// out-of-range value here saturates instead of panicking.
fn dur(s: Option<f64>) -> Option<Duration> {
    s.map(|s| Duration::try_from_secs_f64(s).unwrap_or(Duration::MAX))
}

/// The engine's phases from the plan. Warmup settings fall back to the profiling ones, as in
/// AIPerf.
pub fn phases_of(
    plan: &RunPlan,
    fixed: Option<&FixedSchedule>,
    default_requests: Option<u64>,
) -> Vec<PhaseSpec> {
    let l = &plan.load;
    let profiling_pattern = match l.request_rate.as_ref().map(|r| r.pattern) {
        Some(ArrivalKind::Constant) => ArrivalPattern::Constant,
        Some(ArrivalKind::Gamma) => ArrivalPattern::Gamma {
            smoothness: l
                .request_rate
                .as_ref()
                .and_then(|r| r.smoothness)
                .unwrap_or(1.0),
        },
        _ => ArrivalPattern::Poisson,
    };
    let mode = |rate: Option<f64>,
                pattern: ArrivalPattern,
                concurrency: usize,
                ceiling: Option<usize>,
                conc_ramp: Option<Duration>,
                rate_ramp: Option<Duration>| match rate {
        Some(rate) => LoadMode::Rate {
            pattern,
            rate,
            ramp: rate_ramp,
            // The warmup does not follow the series (only the profiling phase has one).
            series: None,
            ceiling,
            ceiling_ramp: conc_ramp,
        },
        None => LoadMode::Burst {
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
        let pattern = match l.warmup_arrival {
            None => profiling_pattern,
            Some(ArrivalKind::Constant) => ArrivalPattern::Constant,
            Some(ArrivalKind::Poisson) => ArrivalPattern::Poisson,
            Some(ArrivalKind::Gamma) => ArrivalPattern::Gamma {
                smoothness: l.warmup_arrival_smoothness.unwrap_or(1.0),
            },
        };
        // Warmup settings fall back to the profiling ones, ramps included; a user-centric
        // warmup is its own (the profiling phase's user-centric load is not inherited, as
        // AIPerf's warmup defaults to a concurrency).
        let warmup_mode = match l.warmup_user_centric {
            Some(u) => LoadMode::UserCentric {
                users: u.users,
                rate: u.rate,
            },
            None => mode(
                rate,
                pattern,
                concurrency,
                ceiling,
                dur(l.warmup_concurrency_ramp_s.or(l.concurrency_ramp_s)),
                dur(l
                    .warmup_request_rate_ramp_s
                    .or(l.request_rate.as_ref().and_then(|r| r.ramp_s))),
            ),
        };
        phases.push(PhaseSpec {
            phase: Phase::Warmup,
            mode: warmup_mode,
            request_count: (l.warmup_request_count > 0).then_some(l.warmup_request_count),
            // Every limit given holds; the first reached ends the issuing (AIPerf).
            session_count: l.warmup_sessions,
            duration: dur(l.warmup_duration_s),
            grace: l.warmup_duration_s.and(dur(l.warmup_grace_period_s)),
            prefill_concurrency: l.warmup_prefill_concurrency.or(l.prefill_concurrency),
            prefill_ramp: dur(l
                .warmup_prefill_concurrency_ramp_s
                .or(l.prefill_concurrency_ramp_s)),
            // Only profiling requests count toward the threshold, as in AIPerf.
            failed_request_threshold: None,
        });
    }
    phases.push(PhaseSpec {
        phase: Phase::Profiling,
        mode: match (fixed, l.user_centric) {
            (Some(f), _) => LoadMode::Fixed {
                offsets_ns: Arc::new(f.offsets_ns.clone()),
                conversations: Arc::new(f.conversations.clone()),
                ceiling: l.fixed_schedule.ceiling,
            },
            (None, Some(u)) => LoadMode::UserCentric {
                users: u.users,
                rate: u.rate,
            },
            (None, None) => {
                let mut m = mode(
                    l.request_rate.as_ref().map(|r| r.rate),
                    profiling_pattern,
                    l.concurrency,
                    l.request_rate.as_ref().and_then(|r| r.ceiling),
                    dur(l.concurrency_ramp_s),
                    dur(l.request_rate.as_ref().and_then(|r| r.ramp_s)),
                );
                if let LoadMode::Rate { series, .. } = &mut m {
                    *series = l
                        .request_rate
                        .as_ref()
                        .and_then(|r| r.series.clone())
                        .map(Arc::new);
                }
                m
            }
        },
        // With a duration, the request count is not the stop rule (as in AIPerf). A fixed
        // schedule ends with the trace unless a count was given.
        request_count: match (l.benchmark_duration_s, fixed, l.request_count_given) {
            (Some(_), _, _) => None,
            (None, Some(_), false) => None,
            // A session count alone is the stop rule (AIPerf's `profiling.sessions`).
            (None, _, false) if l.profiling_sessions.is_some() => None,
            (None, _, _) => Some(default_requests.unwrap_or(l.request_count)),
        },
        session_count: l.profiling_sessions,
        duration: dur(l.benchmark_duration_s),
        grace: l.benchmark_duration_s.and(dur(l.benchmark_grace_period_s)),
        prefill_concurrency: l.prefill_concurrency,
        prefill_ramp: dur(l.prefill_concurrency_ramp_s),
        failed_request_threshold: l
            .failed_request_threshold
            .map(|t| (t, (l.concurrency as u64).max(10))),
    });
    phases
}

/// The tokenizer as the engine's token counter (counting happens on the writer thread).
pub struct Counter(pub Arc<Tokenizer>);

impl inferbench_client::TokenCounter for Counter {
    fn count(&self, text: &str) -> u64 {
        self.0.count(text) as u64
    }
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

#[cfg(test)]
mod tests {
    use super::*;

    fn tok() -> Arc<Tokenizer> {
        Arc::new(Tokenizer::builtin().unwrap())
    }

    #[test]
    fn a_plain_plan_prepares_its_count_and_one_phase() {
        let p = prepare(&crate::test_plan::plan(), tok()).unwrap();
        assert_eq!(p.payloads.len(), 4);
        assert_eq!(p.engine.phases.len(), 1);
        assert_eq!(p.engine.phases[0].request_count, Some(10));
        assert_eq!(p.dataset.entries, 4);
        assert_eq!(p.seed, 7);
    }

    #[test]
    fn a_bad_goodput_fails_before_anything_runs() {
        let mut plan = crate::test_plan::plan();
        plan.goodput = Some("time_to_first_token".into());
        let e = prepare(&plan, tok()).err().unwrap();
        assert_eq!(e.code, 2);
        assert!(e.message.contains("--goodput"), "{}", e.message);
    }

    #[test]
    fn warmup_falls_back_to_profiling_settings_and_can_be_dropped_for_later_runs() {
        let mut plan = crate::test_plan::plan();
        plan.load.warmup_request_count = 3;
        let p = prepare(&plan, tok()).unwrap();
        assert_eq!(p.engine.phases.len(), 2);
        assert_eq!(p.engine.phases[0].phase, Phase::Warmup);
        assert!(matches!(
            p.engine.phases[0].mode,
            LoadMode::Burst { concurrency: 2, .. }
        ));
        let later = p.for_run(std::path::Path::new("x/run_0002"), true);
        assert_eq!(later.engine.phases.len(), 1);
        assert_eq!(later.plan.artifacts.run_dir, "x/run_0002");
    }
}
