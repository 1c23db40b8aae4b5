//! Validation of the profile flags into a [`RunPlan`], one sweep cell at a time.

use clap::ValueEnum;
use inferbench_core::plan::{
    ArtifactPlan, EndpointType, ExportLevel, LengthDist, LoadPlan, RunPlan, Secret, Target,
    TokenizerSpec, UiKind, artifact_dir_name,
};

use super::limits::{millis, positive_seconds, rate_fits, seconds, whole_millis};
use super::{
    ArrivalArg, EndpointArg, EvidenceCompressionArg, ExportLevelArg, ProfileArgs, UiArg,
    normalize_url, parse_extra_inputs, parse_headers, recorded_command_line, url_and_credentials,
};

pub use super::cells::{CellValues, cells};

pub const DEFAULT_ARTIFACT_DIR: &str = "artifacts";

pub const SIM_MODEL: &str = "mock-model";

/// `--per-chunk-usage`: AIPerf 0.13 refuses it without each of the three things it needs
/// (the first-chunk count is a server count, read from a chat stream's chunks).
fn per_chunk_usage(
    a: &ProfileArgs,
    endpoint_type: EndpointType,
    streaming: bool,
) -> Result<bool, String> {
    if !a.per_chunk_usage {
        return Ok(false);
    }
    if !a.use_server_token_count {
        return Err("--per-chunk-usage requires --use-server-token-count (the first chunk's token count is the server's)".into());
    }
    if endpoint_type != EndpointType::Chat {
        return Err(format!(
            "--per-chunk-usage requires --endpoint-type chat (got {})",
            endpoint_type.as_str()
        ));
    }
    if !streaming {
        return Err("--per-chunk-usage requires --streaming".into());
    }
    Ok(true)
}

/// Endpoint options: `--reasoning-tags`, and for `raw`/`template` the `payload_template` and
/// `response_field` of `--extra-inputs` (taken out, so that they are not sent in bodies).
fn endpoint_plan(
    a: &ProfileArgs,
    endpoint_type: EndpointType,
    extra_inputs: &mut serde_json::Map<String, serde_json::Value>,
) -> Result<inferbench_core::endpoint_plan::EndpointPlan, String> {
    let mut plan = inferbench_core::endpoint_plan::EndpointPlan {
        reasoning_tags: a.reasoning_tags.clone(),
        ..Default::default()
    };
    if matches!(endpoint_type, EndpointType::Template | EndpointType::Raw) {
        if let Some(v) = extra_inputs.remove("response_field") {
            let Some(path) = v.as_str() else {
                return Err(format!(
                    "--extra-inputs response_field: expected a string path, got {v}"
                ));
            };
            plan.response_field = Some(path.to_string());
        }
        if let Some(v) = extra_inputs.remove("payload_template") {
            let Some(t) = v.as_str() else {
                return Err(format!(
                    "--extra-inputs payload_template: expected a template (a name, a file or the text), got {v}"
                ));
            };
            plan.template = Some(
                inferbench_workload::render::load_template_source(t)
                    .map_err(|e| format!("--extra-inputs payload_template: {e}"))?,
            );
        }
    }
    if endpoint_type == EndpointType::Template && plan.template.is_none() {
        return Err(
            "--endpoint-type template needs --extra-inputs payload_template:<name, file or template text>"
                .into(),
        );
    }
    // The decoder itself is built (and `response_field` / `--reasoning-tags` checked) once,
    // by the run's prepare step.
    Ok(plan)
}

/// The dataset flags, checked.
fn dataset_plan(
    a: &ProfileArgs,
    cell: &CellValues,
) -> Result<inferbench_core::dataset_plan::DatasetPlan, String> {
    let mut input_file = a.input_file.clone();
    let mut public_dataset_path = a.public_dataset_path.clone();
    if a.public_dataset.is_some() && public_dataset_path.is_none() {
        // `--public-dataset sharegpt --input-file FILE`: the file is the public dataset's.
        public_dataset_path = input_file.take();
    }
    if a.public_dataset.is_some() && public_dataset_path.is_none() {
        return Err(format!(
            "--public-dataset {}: inferbench does not download datasets; give the local file with --public-dataset-path (or --input-file)",
            a.public_dataset.as_deref().unwrap_or_default()
        ));
    }
    if a.custom_dataset_type.is_some() && input_file.is_none() {
        return Err("--custom-dataset-type needs --input-file".into());
    }
    let finite = |name: &str, v: f64| -> Result<f64, String> {
        if v.is_finite() && v >= 0.0 {
            Ok(v)
        } else {
            Err(format!("{name} {v}: must be a number ≥ 0"))
        }
    };
    let delay_ms = |name: &str, v: f64| millis(name, v).map(|_| v);
    if a.batch_size == 0 {
        return Err("--batch-size 0: must be ≥ 1".into());
    }
    if cell.conversation_turn_mean < 1.0 || !cell.conversation_turn_mean.is_finite() {
        return Err(format!(
            "--conversation-turn-mean {}: must be ≥ 1",
            cell.conversation_turn_mean
        ));
    }
    if a.conversation_num == Some(0) {
        return Err("--conversation-num 0: must be ≥ 1".into());
    }
    let system_prompt = match (&a.system_prompt, &a.system_prompt_file) {
        (Some(_), Some(_)) => {
            return Err("--system-prompt and --system-prompt-file: give one".into());
        }
        (Some(s), None) => Some(s.clone()),
        (None, Some(f)) => {
            Some(std::fs::read_to_string(f).map_err(|e| format!("--system-prompt-file {f}: {e}"))?)
        }
        (None, None) => None,
    };
    // `--seq-dist` and `--random-range-ratio` are parsed once, by the run's prepare step;
    // a length distribution is checked here too, so its error comes before any set-up.
    for (flag, t) in [("--isl-dist", &a.isl_dist), ("--osl-dist", &a.osl_dist)] {
        if let Some(t) = t {
            inferbench_workload::dataset::LengthShape::parse(flag, t)?;
        }
    }
    Ok(inferbench_core::dataset_plan::DatasetPlan {
        input_file,
        // Named as AIPerf names them: any case, `-` for `_`.
        custom_dataset_type: a
            .custom_dataset_type
            .as_deref()
            .map(inferbench_core::py::enum_name),
        sampling_strategy: a.dataset_sampling_strategy.clone(),
        allow_dataset_wrap: a.allow_dataset_wrap,
        ignore_trace_delays: a.ignore_trace_delays,
        use_think_time_only: a.use_think_time_only,
        max_context_length: a.max_context_length,
        public_dataset: a
            .public_dataset
            .as_deref()
            .map(inferbench_core::py::enum_name),
        public_dataset_path,
        isl_block_size: a.isl_block_size,
        seq_dist: a.seq_dist.clone(),
        random_range_ratio: a.random_range_ratio.clone(),
        isl_dist: a.isl_dist.clone(),
        osl_dist: a.osl_dist.clone(),
        random_corpus_style: a.random_corpus_style.clone(),
        prompt_corpus: a.prompt_corpus.clone(),
        num_prefix_prompts: a.num_prefix_prompts,
        prefix_prompt_length: a.prefix_prompt_length,
        shared_system_prompt_length: a.shared_system_prompt_length,
        user_context_prompt_length: a.user_context_prompt_length,
        system_prompt,
        num_conversations: a.conversation_num,
        conversation_turn_mean: cell.conversation_turn_mean,
        conversation_turn_stddev: finite("--conversation-turn-stddev", a.conversation_turn_stddev)?,
        turn_delay_mean_ms: delay_ms(
            "--conversation-turn-delay-mean",
            a.conversation_turn_delay_mean,
        )?,
        turn_delay_stddev_ms: delay_ms(
            "--conversation-turn-delay-stddev",
            a.conversation_turn_delay_stddev,
        )?,
        turn_delay_ratio: finite(
            "--conversation-turn-delay-ratio",
            a.conversation_turn_delay_ratio,
        )?,
        batch_size: a.batch_size,
        rankings_passages_mean: finite("--rankings-passages-mean", a.rankings_passages_mean)?,
        rankings_passages_stddev: finite("--rankings-passages-stddev", a.rankings_passages_stddev)?,
        rankings_passages_token_mean: finite(
            "--rankings-passages-prompt-token-mean",
            a.rankings_passages_prompt_token_mean,
        )?,
        rankings_passages_token_stddev: finite(
            "--rankings-passages-prompt-token-stddev",
            a.rankings_passages_prompt_token_stddev,
        )?,
        rankings_query_token_mean: finite(
            "--rankings-query-prompt-token-mean",
            a.rankings_query_prompt_token_mean,
        )?,
        rankings_query_token_stddev: finite(
            "--rankings-query-prompt-token-stddev",
            a.rankings_query_prompt_token_stddev,
        )?,
        apply_chat_template: a.apply_chat_template,
        media: super::media_args::media_plan(&a.media)?,
        replay: super::replay_args::replay_plan(&a.replay)?,
    })
}

/// `--endpoint-type`, or the error for the AIPerf types inferbench does not build.
pub fn endpoint_type(arg: EndpointArg) -> Result<EndpointType, String> {
    Ok(match arg {
        EndpointArg::Chat => EndpointType::Chat,
        EndpointArg::Completions => EndpointType::Completions,
        EndpointArg::Responses => EndpointType::Responses,
        EndpointArg::Messages => EndpointType::Messages,
        EndpointArg::Embeddings => EndpointType::Embeddings,
        EndpointArg::NimEmbeddings => EndpointType::NimEmbeddings,
        EndpointArg::NimRankings => EndpointType::NimRankings,
        EndpointArg::HfTeiRankings => EndpointType::HfTeiRankings,
        EndpointArg::CohereRankings => EndpointType::CohereRankings,
        EndpointArg::HuggingfaceGenerate => EndpointType::HuggingfaceGenerate,
        EndpointArg::Template => EndpointType::Template,
        EndpointArg::Raw => EndpointType::Raw,
        EndpointArg::ChatEmbeddings => EndpointType::ChatEmbeddings,
        EndpointArg::ImageRetrieval => EndpointType::ImageRetrieval,
        EndpointArg::AudioTranscription => EndpointType::AudioTranscription,
        EndpointArg::ImageGeneration => EndpointType::ImageGeneration,
        EndpointArg::ImageEdit => {
            return Err(
                "--endpoint-type image_edit: not built (a multipart upload of an image and a mask with a prompt, answered with images); see \"Refused endpoint types\" in docs/endpoints.md"
                    .into(),
            );
        }
        EndpointArg::VideoGeneration => {
            return Err(
                "--endpoint-type video_generation: not built (a job submitted to /v1/videos, then polled until done: a polling protocol the engine does not run); see \"Refused endpoint types\" in docs/endpoints.md"
                    .into(),
            );
        }
        other => {
            let name = other
                .to_possible_value()
                .map(|v| v.get_name().to_string())
                .unwrap_or_default();
            return Err(format!(
                "--endpoint-type {name}: not implemented in inferbench (a single vendor's RAG service); see \"Refused endpoint types\" in docs/endpoints.md"
            ));
        }
    })
}

/// Every `--url`, normalized and without credentials, and the credentials (one
/// `Authorization` for all URLs: a URL may carry the first's credentials or none, never
/// others). With one URL the list holds it alone; an error names the entry and its position.
fn several_urls(given: &[String]) -> Result<(Vec<String>, Option<Secret>), String> {
    let mut urls = Vec::with_capacity(given.len());
    let mut auth: Option<Secret> = None;
    for (i, raw) in given.iter().enumerate() {
        let at = |e: String| {
            if given.len() > 1 {
                format!("{e} (--url #{} of {})", i + 1, given.len())
            } else {
                e
            }
        };
        let (n, a) = url_and_credentials(raw).map_err(at)?;
        if let Some(a) = a {
            match &auth {
                Some(first) if first.expose() != a.expose() => {
                    return Err(at(format!(
                        "--url {n}: its user:password@ differs from an earlier URL's (one Authorization is sent to every URL)"
                    )));
                }
                _ => auth = Some(a),
            }
        }
        urls.push(n);
    }
    Ok((urls, auth))
}

/// Validate profile flags into a plan.
pub fn build_plan(a: &ProfileArgs, argv: &[String], cell: &CellValues) -> Result<RunPlan, String> {
    let endpoint_type = endpoint_type(a.endpoint_type)?;
    // Credentials in the URL never stay in it: they become a Basic Authorization header.
    // Every URL is checked here; the first is `RunPlan.url` (docs/routing.md).
    let (all_urls, url_auth) = several_urls(&a.url)?;
    let url_given = all_urls.first().cloned();
    let user_headers = parse_headers(&a.header)?;
    super::values::one_authorization(a.api_key.is_some(), url_auth.is_some(), &user_headers)?;
    let target = match url_given.as_deref() {
        Some(u) => {
            if a.sim_ttft_ms.is_some()
                || a.sim_itl_ms.is_some()
                || a.sim_error_rate.is_some()
                || a.sim_answer_accuracy.is_some()
            {
                return Err(
                    "--sim-ttft-ms/--sim-itl-ms/--sim-error-rate/--sim-answer-accuracy set the built-in simulated server, which is not used with --url".into(),
                );
            }
            Target::Url {
                url: normalize_url(u)?,
            }
        }
        None => {
            let ttft_ms = a.sim_ttft_ms.unwrap_or(20.0);
            let itl_ms = a.sim_itl_ms.unwrap_or(5.0);
            millis("--sim-ttft-ms", ttft_ms)?;
            millis("--sim-itl-ms", itl_ms)?;
            let error_rate = a.sim_error_rate.unwrap_or(0.0);
            if !(0.0..=100.0).contains(&error_rate) {
                return Err(format!(
                    "--sim-error-rate {error_rate}: a percentage between 0 and 100"
                ));
            }
            if let Some(p) = a.sim_answer_accuracy
                && !(0.0..=1.0).contains(&p)
            {
                return Err(format!(
                    "--sim-answer-accuracy {p}: a fraction between 0 and 1"
                ));
            }
            Target::Simulated {
                ttft_ms,
                itl_ms,
                error_rate,
                answer_accuracy: a.sim_answer_accuracy,
                serving: super::connection_args::with_sim_faults(
                    &a.connection,
                    super::telemetry_args::sim_serving(&a.telemetry, true)?,
                    true,
                )?,
            }
        }
    };
    let mut models: Vec<String> = a
        .model
        .iter()
        .map(|m| m.trim().to_string())
        .filter(|m| !m.is_empty())
        .collect();
    if models.is_empty() {
        match target {
            Target::Simulated { .. } => models.push(SIM_MODEL.to_string()),
            Target::Url { .. } => {
                return Err("--model (-m) is required with --url".into());
            }
        }
    }
    let url = match &target {
        Target::Url { url } => url.clone(),
        Target::Simulated { .. } => String::new(),
    };
    // With the built-in simulated server, stream by default, so that a first run shows
    // TTFT and ITL; with --url, AIPerf's default (off) stays.
    let streaming = (a.streaming || (a.url.is_empty() && !a.no_streaming))
        && endpoint_type.supports_streaming();
    let endpoint_path = match &a.custom_endpoint {
        Some(p) => {
            let p = p.trim();
            // As in AIPerf: an empty path appends nothing (the URL is the whole endpoint).
            if p.is_empty() || p.starts_with('/') {
                p.to_string()
            } else {
                format!("/{p}")
            }
        }
        // TGI streams on its own path; raw and template have none (the URL is the endpoint).
        None if streaming => endpoint_type.streaming_path().to_string(),
        None => endpoint_type.default_path().to_string(),
    };
    let mut extra_inputs = parse_extra_inputs(&a.extra_inputs)?;
    let mut endpoint = endpoint_plan(a, endpoint_type, &mut extra_inputs)?;
    endpoint.per_chunk_usage = per_chunk_usage(a, endpoint_type, streaming)?;
    positive_seconds("--request-timeout-seconds", a.request_timeout_seconds)?;
    // profile.rs sleeps these between runs and cells: bounded here, before any run.
    seconds(
        "--profile-run-cooldown-seconds",
        a.profile_run_cooldown_seconds,
    )?;
    seconds(
        "--parameter-sweep-cooldown-seconds",
        a.parameter_sweep_cooldown_seconds,
    )?;
    if cell.isl == 0 {
        return Err("--synthetic-input-tokens-mean 0: must be ≥ 1".into());
    }
    for (name, v) in [
        ("--synthetic-input-tokens-stddev", cell.isl_stddev),
        ("--output-tokens-stddev", cell.osl_stddev),
    ] {
        if !(v.is_finite() && v >= 0.0) {
            return Err(format!("{name} {v}: must be a number ≥ 0"));
        }
    }
    if cell.osl == Some(0) {
        return Err("--output-tokens-mean 0: must be ≥ 1".into());
    }
    if a.num_dataset_entries == 0 {
        return Err("--num-dataset-entries 0: must be ≥ 1".into());
    }
    let concurrency = cell.concurrency.unwrap_or(1);
    if concurrency == 0 {
        return Err("--concurrency 0: must be ≥ 1".into());
    }
    if concurrency > 100_000 {
        return Err(format!("--concurrency {concurrency}: at most 100000"));
    }
    let request_count = cell
        .request_count
        .unwrap_or_else(|| (concurrency as u64 * 2).max(10));
    if request_count == 0 {
        return Err("--request-count 0: must be ≥ 1".into());
    }
    let positive = |name: &str, v: Option<f64>| -> Result<Option<f64>, String> {
        match v {
            Some(x) if !(x.is_finite() && x > 0.0) => {
                Err(format!("{name} {x}: must be a number > 0"))
            }
            other => Ok(other),
        }
    };
    // A time flag: > 0, and within the clock (see `limits`).
    let span = |name: &str, v: Option<f64>| -> Result<Option<f64>, String> {
        v.map(|x| positive_seconds(name, x).map(|_| x)).transpose()
    };
    let series = super::load_shape_args::rate_series(a)?;
    let (prefill_ramp, warmup_prefill_ramp) = super::load_shape_args::prefill_ramps(a)?;
    // A series sets the rate: its first point is where it starts (the ramp's target).
    let rate = match &series {
        Some(s) => Some(s.initial_qps()),
        None => positive("--request-rate", cell.request_rate)?,
    };
    let smoothness = positive("--arrival-smoothness", a.arrival_smoothness)?;
    let ramp_s = span("--request-rate-ramp-duration", a.request_rate_ramp_duration)?;
    let duration = span("--benchmark-duration", cell.benchmark_duration)?;
    let warmup_duration = span("--warmup-duration", a.warmup_duration)?;
    let concurrency_ramp = span("--concurrency-ramp-duration", a.concurrency_ramp_duration)?;
    if let Some(r) = rate {
        let (flag, r) = match &series {
            // The slowest point bounds the run's span.
            Some(s) => ("--request-rate-series", s.min_qps()),
            None => ("--request-rate", r),
        };
        rate_fits(flag, r, request_count, ramp_s.unwrap_or(0.0), duration)?;
    }
    if concurrency_ramp.is_some() && rate.is_some() && cell.concurrency.is_none() {
        return Err(
            "--concurrency-ramp-duration with --request-rate needs --concurrency (the ceiling that ramps)"
                .into(),
        );
    }
    let warmup_rate = positive("--warmup-request-rate", a.warmup_request_rate)?;
    let warmup_conc_ramp = span(
        "--warmup-concurrency-ramp-duration",
        a.warmup_concurrency_ramp_duration,
    )?;
    let warmup_rate_ramp = span(
        "--warmup-request-rate-ramp-duration",
        a.warmup_request_rate_ramp_duration,
    )?;
    let warmup_count = a.warmup_request_count.unwrap_or(0);
    if a.num_warmup_sessions == Some(0) {
        return Err("--num-warmup-sessions 0: must be ≥ 1".into());
    }
    if a.num_profiling_sessions == Some(0) {
        return Err("--num-profiling-sessions 0: must be ≥ 1".into());
    }
    let warmup_sessions = a.num_warmup_sessions.unwrap_or(0);
    if let Some((flag, r)) = warmup_rate
        .map(|r| ("--warmup-request-rate", r))
        .or(rate.map(|r| ("--request-rate", r)))
        && (warmup_count > 0 || warmup_sessions > 0 || warmup_duration.is_some())
    {
        // The rate paces session starts: with only a session count, that many.
        let warmup_count = if warmup_count > 0 {
            warmup_count
        } else {
            warmup_sessions
        };
        let ramp = warmup_rate_ramp.or(ramp_s).unwrap_or(0.0);
        rate_fits(flag, r, warmup_count, ramp, warmup_duration)?;
    }
    a.aiperf.convergence(a.num_profile_runs)?;
    let warmup_gamma = a.aiperf.warmup_arrival_pattern == Some(ArrivalArg::Gamma);
    if smoothness.is_some() && a.arrival_pattern != ArrivalArg::Gamma && !warmup_gamma {
        return Err("--arrival-smoothness applies to --arrival-pattern gamma".into());
    }
    let warmup_grace = match a.aiperf.warmup_grace_period {
        None => None,
        Some(_) if warmup_duration.is_none() => {
            return Err("--warmup-grace-period needs --warmup-duration (it is the time after the warmup's duration)".into());
        }
        // `inf` (AIPerf's spelling of no limit) is the default: wait for them all.
        Some(g) if g.is_infinite() && g > 0.0 => None,
        Some(g) => Some(seconds("--warmup-grace-period", g).map(|_| g)?),
    };
    if a.aiperf.warmup_arrival_pattern.is_some()
        && a.warmup_request_rate.is_none()
        && rate.is_none()
    {
        return Err("--warmup-arrival-pattern needs --warmup-request-rate or --request-rate (a warmup without a rate is paced by concurrency)".into());
    }
    if rate.is_none() {
        for (flag, given) in [
            ("--request-rate-ramp-duration", ramp_s.is_some()),
            ("--arrival-smoothness", smoothness.is_some()),
        ] {
            if given {
                return Err(format!("{flag} needs --request-rate"));
            }
        }
    }
    let user_centric = match (
        positive("--user-centric-rate", a.user_centric_rate)?,
        cell.num_users,
    ) {
        (None, None) => None,
        (Some(_), None) | (None, Some(_)) => {
            return Err("--user-centric-rate and --num-users go together".into());
        }
        (Some(_), Some(0)) => return Err("--num-users 0: must be ≥ 1".into()),
        (Some(q), Some(u)) => {
            if rate.is_some() {
                return Err("--user-centric-rate and --request-rate exclude each other".into());
            }
            rate_fits("--user-centric-rate", q, request_count, 0.0, duration)?;
            Some(inferbench_core::plan::UserCentricPlan { rate: q, users: u })
        }
    };
    let warmup_user_centric = match (
        positive("--warmup-user-centric-rate", a.warmup_user_centric_rate)?,
        a.warmup_num_users,
    ) {
        (None, None) => None,
        (Some(_), None) | (None, Some(_)) => {
            return Err("--warmup-user-centric-rate and --warmup-num-users go together".into());
        }
        (Some(_), Some(0)) => return Err("--warmup-num-users 0: must be ≥ 1".into()),
        (Some(q), Some(u)) => Some(inferbench_core::plan::UserCentricPlan { rate: q, users: u }),
    };
    if a.warmup_prefill_concurrency == Some(0) {
        return Err("--warmup-prefill-concurrency 0: must be ≥ 1".into());
    }
    if let Some(t) = a.failed_request_threshold
        && !(0.0..=1.0).contains(&t)
    {
        return Err(format!(
            "--failed-request-threshold {t}: must be a ratio in [0, 1]"
        ));
    }
    if cell.prefill_concurrency == Some(0) {
        return Err("--prefill-concurrency 0: must be ≥ 1".into());
    }
    if a.warmup_concurrency == Some(0) {
        return Err("--warmup-concurrency 0: must be ≥ 1".into());
    }
    let grace = match a.benchmark_grace_period.trim() {
        "inf" | "infinity" | "Infinity" => None,
        g => match g.parse::<f64>() {
            Ok(x) if x.is_finite() && x >= 0.0 => {
                seconds("--benchmark-grace-period", x)?;
                Some(x)
            }
            _ => {
                return Err(format!(
                    "--benchmark-grace-period {g:?}: expected seconds ≥ 0 or inf"
                ));
            }
        },
    };
    let cancellation = match a.request_cancellation_rate {
        None => None,
        Some(r) if (0.0..=100.0).contains(&r) => {
            let d = a.request_cancellation_delay;
            seconds("--request-cancellation-delay", d)?;
            Some(inferbench_core::plan::CancellationPlan {
                rate_pct: r,
                delay_s: d,
            })
        }
        Some(r) => {
            return Err(format!(
                "--request-cancellation-rate {r}: must be a percentage in [0, 100]"
            ));
        }
    };
    for (name, v) in [
        ("--schedule-lag-p99-ms", a.schedule_lag_p99_ms),
        ("--schedule-min-achieved-pct", a.schedule_min_achieved_pct),
    ] {
        if !(v.is_finite() && v >= 0.0) {
            return Err(format!("{name} {v}: must be a number ≥ 0"));
        }
    }
    let request_rate = rate.map(|rate| inferbench_core::plan::RatePlan {
        rate,
        pattern: match a.arrival_pattern {
            ArrivalArg::Constant => inferbench_core::plan::ArrivalKind::Constant,
            ArrivalArg::Poisson => inferbench_core::plan::ArrivalKind::Poisson,
            ArrivalArg::Gamma => inferbench_core::plan::ArrivalKind::Gamma,
        },
        smoothness,
        ramp_s,
        ceiling: cell.concurrency,
        series: series.clone(),
    });
    let tokenizer = TokenizerSpec::from_flag(a.tokenizer.as_deref());
    let tokenizer_revision = super::tokenizer_flag::tokenizer_revision(a, &tokenizer)?;
    let explicit_dir = a.artifact_dir.is_some();
    let dir = a
        .artifact_dir
        .clone()
        .unwrap_or_else(|| DEFAULT_ARTIFACT_DIR.to_string());
    let run_dir = if explicit_dir {
        dir.clone()
    } else {
        let load = match rate {
            Some(r) => format!("request_rate{r:?}"),
            None => format!("concurrency{concurrency}"),
        };
        format!(
            "{dir}/{}",
            artifact_dir_name(&models[0], endpoint_type, &load)
        )
    };
    if a.export_http_trace && matches!(a.export_level, ExportLevelArg::Summary) {
        return Err(
            "--export-http-trace adds trace_data to profile_export.jsonl, which --export-level summary does not write: use --export-level records or raw".into(),
        );
    }
    let prefix = a
        .profile_export_prefix
        .clone()
        .unwrap_or_else(|| "profile_export".into());
    if prefix.is_empty() || prefix.contains('/') || prefix.contains('\\') {
        return Err(format!(
            "--profile-export-prefix {prefix:?}: must be a plain file name prefix"
        ));
    }
    if matches!(target, Target::Url { .. }) {
        super::telemetry_args::sim_serving(&a.telemetry, false)?;
        super::connection_args::with_sim_faults(&a.connection, Default::default(), false)?;
    }
    let mut headers = Vec::new();
    if let Some(auth) = url_auth {
        headers.push((
            "Authorization".to_string(),
            inferbench_core::plan::HeaderValue::Secret(auth),
        ));
    }
    headers.extend(user_headers);
    // Known only now, parsed: the values the stored command line must not hold.
    let secrets = super::values::secret_values(
        a.api_key.as_deref(),
        &headers,
        &super::values::url_values(a),
    );
    Ok(RunPlan {
        telemetry: super::telemetry_args::telemetry_plan(&a.telemetry)?,
        workers_max: super::telemetry_args::workers_max(&a.telemetry)?,
        tls: super::tls_args::tls_plan(&a.tls)?,
        routing: super::routing_args::routing_plan_for(&a.routing, all_urls, &models)?,
        connection: super::connection_args::connection_plan(&a.connection)?,
        controls: inferbench_core::controls_plan::ControlsPlan {
            server_profiler: super::service_args::server_profiler(&a.service)?,
            ..super::controls_args::controls_plan(&a.controls)?
        },
        shard: super::shard_args::shard_plan(a)?,
        models,
        target,
        url,
        endpoint_type,
        endpoint_path,
        streaming,
        api_key: a.api_key.as_ref().map(Secret::new),
        headers,
        extra_inputs,
        request_timeout_seconds: a.request_timeout_seconds,
        tokenizer_revision,
        tokenizer,
        use_server_token_count: a.use_server_token_count,
        use_legacy_max_tokens: a.use_legacy_max_tokens,
        isl: LengthDist {
            mean: cell.isl as f64,
            stddev: cell.isl_stddev,
        },
        osl: cell.osl.map(|m| LengthDist {
            mean: m as f64,
            stddev: cell.osl_stddev,
        }),
        num_dataset_entries: a.num_dataset_entries,
        random_seed: a.random_seed,
        load: LoadPlan {
            concurrency,
            request_count,
            warmup_request_count: a.warmup_request_count.unwrap_or(0),
            warmup_sessions: a.num_warmup_sessions,
            profiling_sessions: a.num_profiling_sessions,
            request_count_given: cell.request_count.is_some(),
            fixed_schedule: inferbench_core::plan::FixedSchedulePlan {
                enabled: if a.fixed_schedule {
                    Some(true)
                } else if a.no_fixed_schedule {
                    Some(false)
                } else {
                    None
                },
                auto_offset: a.fixed_schedule_auto_offset,
                start_offset_ms: a
                    .fixed_schedule_start_offset
                    .map(|v| whole_millis("--fixed-schedule-start-offset", v))
                    .transpose()?,
                end_offset_ms: a
                    .fixed_schedule_end_offset
                    .map(|v| whole_millis("--fixed-schedule-end-offset", v))
                    .transpose()?,
                ceiling: (!a.concurrency.is_empty()).then_some(concurrency),
            },
            request_rate,
            benchmark_duration_s: duration,
            benchmark_grace_period_s: grace,
            warmup_duration_s: warmup_duration,
            concurrency_ramp_s: concurrency_ramp,
            prefill_concurrency: cell.prefill_concurrency,
            prefill_concurrency_ramp_s: prefill_ramp,
            warmup_prefill_concurrency_ramp_s: warmup_prefill_ramp,
            warmup_concurrency_ramp_s: warmup_conc_ramp,
            warmup_request_rate_ramp_s: warmup_rate_ramp,
            warmup_prefill_concurrency: a.warmup_prefill_concurrency,
            failed_request_threshold: a.failed_request_threshold,
            user_centric,
            warmup_user_centric,
            warmup_concurrency: a.warmup_concurrency,
            warmup_request_rate: warmup_rate,
            warmup_arrival: a.aiperf.warmup_arrival_pattern.map(|p| match p {
                ArrivalArg::Constant => inferbench_core::plan::ArrivalKind::Constant,
                ArrivalArg::Poisson => inferbench_core::plan::ArrivalKind::Poisson,
                ArrivalArg::Gamma => inferbench_core::plan::ArrivalKind::Gamma,
            }),
            warmup_arrival_smoothness: smoothness.filter(|_| warmup_gamma),
            warmup_grace_period_s: warmup_grace,
            cancellation,
            schedule_rule: inferbench_core::plan::ScheduleRulePlan {
                max_lag_p99_ms: a.schedule_lag_p99_ms,
                min_achieved_pct: a.schedule_min_achieved_pct,
                fail_on_miss: a.fail_on_missed_schedule,
            },
        },
        artifacts: ArtifactPlan {
            dir,
            run_dir,
            prefix,
            export_level: match a.export_level {
                ExportLevelArg::Summary => ExportLevel::Summary,
                ExportLevelArg::Records => ExportLevel::Records,
                ExportLevelArg::Raw => ExportLevel::Raw,
            },
            export_http_trace: a.export_http_trace,
            evidence_compression: match a.evidence_compression {
                EvidenceCompressionArg::None => inferbench_core::plan::EvidenceCompression::None,
                EvidenceCompressionArg::Zstd => inferbench_core::plan::EvidenceCompression::Zstd,
            },
            slice_duration_s: slice_duration(a.slice_duration)?,
        },
        ui: match a.ui {
            // AIPerf's -v/-vv switch its dashboard to the simple UI.
            UiArg::Dashboard if super::service_args::verbose(&a.service) => UiKind::Simple,
            UiArg::Dashboard => UiKind::Dashboard,
            UiArg::Simple => UiKind::Simple,
            UiArg::None => UiKind::None,
        },
        cli_command: recorded_command_line(argv, &secrets),
        // Parsed once, by the run's prepare step (before any network probe).
        goodput: a.goodput.clone(),
        confidence_level: a.confidence_level,
        dataset: dataset_plan(a, cell)?,
        endpoint,
    })
}

/// `--slice-duration`: seconds, positive and finite.
fn slice_duration(s: Option<f64>) -> Result<Option<f64>, String> {
    match s {
        Some(x) if !(x.is_finite() && x > 0.0) => Err(format!(
            "--slice-duration: must be a positive number of seconds, got {x}"
        )),
        _ => Ok(s),
    }
}
