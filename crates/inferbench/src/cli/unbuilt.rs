//! AIPerf flags known by name but not run: using one is a clear error, not a no-op, and not
//! clap's generic "unexpected argument".

use clap::ArgAction;

use super::Cli;

/// AIPerf `profile` flags that inferbench accepts by name but has not built yet. Using one
/// is an error that says so, never a silent no-op. (name, takes a value)
pub const UNBUILT_FLAGS: &[(&str, bool)] = &[];

/// Why AIPerf's adaptive search is refused.
const SEARCH: &str = "AIPerf's adaptive search (its Bayesian, Optuna and SLA planners, which choose each next cell from the results so far, and their search files) is not built in inferbench; sweep a comma list (--concurrency 1,2,4,8) or --variant cells and read sweep_aggregate/";

/// Why the search recipes' own flags are refused.
const RECIPE: &str = "an input of AIPerf's --search-recipe recipes, which are not built in inferbench (they drive the adaptive search); sweep a comma list and judge it with --goodput or `inferbench gate`";

/// Why the accuracy flags are refused.
const ACCURACY: &str = "AIPerf's accuracy benchmarks (MMLU, AIME, GSM8K, … with their prompts and graders) are not built in inferbench; a dataset's expected answers are scored by inferbench's own correctness check (docs/correctness.md)";

/// Why the OpenTelemetry export flags are refused.
const OTEL: &str = "AIPerf's OpenTelemetry export (metrics and request timings streamed to an OTLP collector while the run goes) is not built in inferbench: the client sends nothing but the benchmark's own requests; the metrics are in the run directory's files (profile_export_aiperf.json, profile_export.jsonl)";

/// Why the MLflow and W&B flags are refused.
const TRACKING: &str = "AIPerf's upload of the results to an experiment tracker (MLflow, Weights & Biases) is not built in inferbench: the client sends nothing but the benchmark's own requests; the artifacts are files in the run directory, to upload with the tracker's own tools";

/// Why the Hugging Face download flags are refused.
const DOWNLOAD: &str = "it selects what AIPerf downloads from the Hugging Face Hub at run time; inferbench never downloads a dataset: give the file with --public-dataset-path or --input-file (docs/datasets.md)";

/// Why the network-latency calibration is refused.
const NETWORK_LATENCY: &str = "AIPerf's network-latency calibration (RTT probes of the endpoint during profiling, subtracted from the latency metrics as extra network_adjusted_* metrics) is not built in inferbench; its HTTP phases (--export-http-trace: connecting, waiting) show the network's share per request";

/// Why the video download is refused.
const VIDEO_DOWNLOAD: &str = "AIPerf's download of generated video content (the video_generation endpoint's polling) is not built: that endpoint type is refused (docs/endpoints.md)";

/// Why vLLM's multimodal UUID stripping is refused.
const UUID_STRIP: &str = "AIPerf's vLLM multimodal-cache mode (media sent once with a UUID, then the UUID alone) is not built in inferbench: every request carries its media";

/// Why the agentic_replay flags are refused (the same reason as --scenario inferencex-agentx-mvp).
const AGENTIC: &str = "an input of AIPerf's agentic_replay timing (the inferencex-agentx-mvp scenario: trajectories started at a random 25-75 % point with their in-flight subagents seeded, a one-turn warmup behind a barrier, synchronized or spread phase starts, cache-bust markers per session tree), which inferbench does not reproduce (--scenario inferencex-agentx-mvp is refused too); replay the traces with --custom-dataset-type weka_trace instead (docs/datasets.md, \"Agentic traces\")";

/// Why the unsafe override is refused.
const UNSAFE_OVERRIDE: &str = "it lets flags override the settings an AIPerf --scenario locks; AIPerf's built-in scenario is not built in inferbench (--scenario inferencex-agentx-mvp is refused), so there is nothing to override";

/// Why AIPerf's live API is refused.
const API: &str = "AIPerf's live API (an HTTP and WebSocket server with the live metrics, progress, worker status, config and a stream of its internal messages) is not built in inferbench; the live view is the --ui progress on stderr, and the results are the run directory's files";

/// AIPerf 0.13 `profile` flags refused for good, each with its reason: (name, takes a
/// value, why). docs/compatibility.md lists them.
pub const REFUSED_FLAGS: &[(&str, bool, &str)] = &[
    ("search-space", true, SEARCH),
    ("search-metric", true, SEARCH),
    ("search-stat", true, SEARCH),
    ("search-direction", true, SEARCH),
    ("search-max-iterations", true, SEARCH),
    ("search-initial-points", true, SEARCH),
    ("search-random-seed", true, SEARCH),
    ("search-planner", true, SEARCH),
    ("optuna-sampler", true, SEARCH),
    ("optuna-acquisition", true, SEARCH),
    ("optuna-terminator", true, SEARCH),
    ("search-percentile-pooling", true, SEARCH),
    ("bo-constraint-mode", true, SEARCH),
    ("search-sla", true, SEARCH),
    ("search-sla-tier", true, SEARCH),
    ("search-recipe", true, SEARCH),
    ("ttft-sla-ms", true, RECIPE),
    ("itl-sla-ms", true, RECIPE),
    ("tpot-sla-ms", true, RECIPE),
    ("e2e-sla-ms", true, RECIPE),
    ("error-rate-sla", true, RECIPE),
    ("slo-attainment-fraction", true, RECIPE),
    ("search-style", true, RECIPE),
    ("isl-osl-pairs", true, RECIPE),
    ("degradation-threshold", true, RECIPE),
    ("degradation-metric-tag", true, RECIPE),
    ("degradation-stat", true, RECIPE),
    ("isl-min", true, RECIPE),
    ("isl-max", true, RECIPE),
    ("isl-steps", true, RECIPE),
    ("concurrency-min", true, RECIPE),
    ("concurrency-max", true, RECIPE),
    ("concurrency-steps", true, RECIPE),
    ("osl-min", true, RECIPE),
    ("osl-max", true, RECIPE),
    ("osl-steps", true, RECIPE),
    ("accuracy-benchmark", true, ACCURACY),
    ("accuracy-tasks", true, ACCURACY),
    ("accuracy-n-shots", true, ACCURACY),
    ("accuracy-enable-cot", false, ACCURACY),
    ("accuracy-grader", true, ACCURACY),
    ("accuracy-system-prompt", true, ACCURACY),
    ("accuracy-verbose", false, ACCURACY),
    ("otel-url", true, OTEL),
    ("otel-resource-attributes", true, OTEL),
    ("gen-ai-provider", true, OTEL),
    ("stream", true, OTEL),
    ("mlflow-tracking-uri", true, TRACKING),
    ("mlflow-experiment", true, TRACKING),
    ("mlflow-run-name", true, TRACKING),
    ("mlflow-tag", true, TRACKING),
    ("mlflow-parent-run-id", true, TRACKING),
    ("mlflow-artifact-glob", true, TRACKING),
    ("wandb-project", true, TRACKING),
    ("wandb-entity", true, TRACKING),
    ("wandb-run-name", true, TRACKING),
    ("wandb-tag", true, TRACKING),
    ("hf-subset", true, DOWNLOAD),
    ("hf-weka-dataset", true, DOWNLOAD),
    ("dataset-filter", true, DOWNLOAD),
    ("network-latency-automatic", false, NETWORK_LATENCY),
    ("network-latency-mean", true, NETWORK_LATENCY),
    ("network-latency-ping-interval", true, NETWORK_LATENCY),
    ("download-video-content", false, VIDEO_DOWNLOAD),
    ("uuid-and-strip", false, UUID_STRIP),
    ("cache-bust", true, AGENTIC),
    ("trajectory-start-min-ratio", true, AGENTIC),
    ("trajectory-start-max-ratio", true, AGENTIC),
    ("burst-phase-starts", false, AGENTIC),
    ("agentic-cache-warmup-duration", true, AGENTIC),
    ("agentic-warmup-grace-period", true, AGENTIC),
    ("unsafe-override", false, UNSAFE_OVERRIDE),
    ("api-host", true, API),
    ("api-port", true, API),
];

/// The reason `--flag` (without its dashes) is refused, for the YAML keys that give it.
pub fn refusal(flag: &str) -> Option<&'static str> {
    REFUSED_FLAGS
        .iter()
        .find(|(n, _, _)| *n == flag)
        .map(|(_, _, why)| *why)
}

/// Add the unbuilt and refused flags to the `profile` and `inspect` subcommands, hidden, so
/// that clap accepts them and [`check_unbuilt`] can name them in a clear error.
pub fn command_with_unbuilt() -> clap::Command {
    use clap::CommandFactory;
    let add = |mut c: clap::Command| {
        let all = UNBUILT_FLAGS
            .iter()
            .copied()
            .chain(REFUSED_FLAGS.iter().map(|(n, v, _)| (*n, *v)));
        for (name, takes_value) in all {
            // The id is the kebab-case long name: derived ids are snake_case field names, so
            // the two never collide.
            let mut a = clap::Arg::new(name).long(name).hide(true);
            a = if takes_value {
                a.num_args(0..).action(ArgAction::Append)
            } else {
                a.num_args(0..=1).action(ArgAction::Append)
            };
            c = c.arg(a);
        }
        c
    };
    Cli::command()
        .mut_subcommand("profile", add)
        .mut_subcommand("inspect", add)
}

/// One line naming every unbuilt or refused flag used, with the reasons.
pub fn check_unbuilt(m: &clap::ArgMatches) -> Result<(), String> {
    let sub = match m.subcommand() {
        Some(("profile" | "inspect", sub)) => sub,
        _ => return Ok(()),
    };
    let used: Vec<String> = UNBUILT_FLAGS
        .iter()
        .filter(|(n, _)| sub.contains_id(n))
        .map(|(n, _)| format!("--{n}"))
        .collect();
    if !used.is_empty() {
        return Err(format!(
            "{} {} an AIPerf flag that inferbench does not implement yet; remove it (see docs/compatibility.md)",
            used.join(", "),
            if used.len() == 1 { "is" } else { "are" }
        ));
    }
    // Grouped by reason, in the list's order.
    let mut groups: Vec<(&str, Vec<String>)> = Vec::new();
    for (n, _, why) in REFUSED_FLAGS.iter().filter(|(n, _, _)| sub.contains_id(n)) {
        match groups.iter_mut().find(|(w, _)| w == why) {
            Some((_, names)) => names.push(format!("--{n}")),
            None => groups.push((why, vec![format!("--{n}")])),
        }
    }
    if groups.is_empty() {
        return Ok(());
    }
    Err(groups
        .iter()
        .map(|(why, names)| format!("{}: refused: {why}", names.join(", ")))
        .collect::<Vec<_>>()
        .join("; "))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn check(args: &[&str]) -> Result<(), String> {
        let mut v = vec!["inferbench"];
        v.extend(args);
        let m = command_with_unbuilt().try_get_matches_from(v).unwrap();
        check_unbuilt(&m)
    }

    #[test]
    fn every_refused_flag_is_known_and_refused_with_its_reason() {
        command_with_unbuilt().debug_assert();
        for (name, takes, why) in REFUSED_FLAGS {
            let flag = format!("--{name}");
            let mut args = vec!["profile", flag.as_str()];
            if *takes {
                args.push("x");
            }
            let e = check(&args).unwrap_err();
            assert_eq!(e, format!("--{name}: refused: {why}"));
            assert!(!e.contains('\n'));
        }
        // A bare boolean flag, and one with a value, are both known.
        assert!(check(&["profile", "--accuracy-verbose"]).is_err());
        assert!(check(&["inspect", "--accuracy-verbose", "true"]).is_err());
        assert_eq!(check(&["profile"]), Ok(()));
    }

    #[test]
    fn several_refused_flags_are_named_together_by_reason() {
        let e = check(&[
            "profile",
            "--search-space",
            "concurrency:1:64",
            "--accuracy-benchmark",
            "mmlu",
            "--search-metric",
            "request_throughput",
        ])
        .unwrap_err();
        assert_eq!(
            e,
            format!(
                "--search-space, --search-metric: refused: {SEARCH}; --accuracy-benchmark: refused: {ACCURACY}"
            )
        );
    }
}
