//! Flags given without the flag that gives them an effect. Each is an error where the user
//! clearly expected an effect, or a one-line warning for a harmless leftover; none is
//! accepted silently. Read from the matches, not the parsed struct: there a default and an
//! explicitly typed value look the same.

use clap::ArgMatches;
use clap::parser::ValueSource;

use super::EndpointArg;

/// The warmup phase's load flags, each useless without a warmup count or duration.
const WARMUP_LOAD: &[(&str, &str)] = &[
    ("warmup_concurrency", "--warmup-concurrency"),
    ("warmup_request_rate", "--warmup-request-rate"),
    (
        "warmup_concurrency_ramp_duration",
        "--warmup-concurrency-ramp-duration",
    ),
    (
        "warmup_request_rate_ramp_duration",
        "--warmup-request-rate-ramp-duration",
    ),
    ("warmup_prefill_concurrency", "--warmup-prefill-concurrency"),
    ("warmup_arrival_pattern", "--warmup-arrival-pattern"),
    ("warmup_user_centric_rate", "--warmup-user-centric-rate"),
    ("warmup_num_users", "--warmup-num-users"),
    ("warmup_grace_period", "--warmup-grace-period"),
    (
        "warmup_prefill_concurrency_ramp_duration",
        "--warmup-prefill-concurrency-ramp-duration",
    ),
];

/// Flags `inspect` takes (it shares profile's flags) but never uses: it sends `--count`
/// requests one after another and writes no file.
const INSPECT_IGNORES: &[(&str, &str)] = &[
    ("concurrency", "--concurrency"),
    ("request_rate", "--request-rate"),
    ("request_count", "--request-count"),
    ("warmup_request_count", "--warmup-request-count"),
    ("num_warmup_sessions", "--num-warmup-sessions"),
    ("num_profiling_sessions", "--num-profiling-sessions"),
    ("variants", "--variant"),
    ("no_sweep_table", "--no-sweep-table"),
    ("goodput", "--goodput"),
    ("num_profile_runs", "--num-profile-runs"),
    (
        "profile_run_cooldown_seconds",
        "--profile-run-cooldown-seconds",
    ),
    ("confidence_level", "--confidence-level"),
    (
        "profile_run_disable_warmup_after_first",
        "--profile-run-disable-warmup-after-first",
    ),
    (
        "parameter_sweep_cooldown_seconds",
        "--parameter-sweep-cooldown-seconds",
    ),
    ("arrival_pattern", "--arrival-pattern"),
    ("arrival_smoothness", "--arrival-smoothness"),
    ("request_rate_ramp_duration", "--request-rate-ramp-duration"),
    ("benchmark_duration", "--benchmark-duration"),
    ("benchmark_grace_period", "--benchmark-grace-period"),
    ("user_centric_rate", "--user-centric-rate"),
    ("num_users", "--num-users"),
    (
        "warmup_concurrency_ramp_duration",
        "--warmup-concurrency-ramp-duration",
    ),
    (
        "warmup_request_rate_ramp_duration",
        "--warmup-request-rate-ramp-duration",
    ),
    ("warmup_prefill_concurrency", "--warmup-prefill-concurrency"),
    ("failed_request_threshold", "--failed-request-threshold"),
    ("prefill_concurrency", "--prefill-concurrency"),
    ("concurrency_ramp_duration", "--concurrency-ramp-duration"),
    ("warmup_duration", "--warmup-duration"),
    ("warmup_concurrency", "--warmup-concurrency"),
    ("warmup_request_rate", "--warmup-request-rate"),
    ("warmup_arrival_pattern", "--warmup-arrival-pattern"),
    ("warmup_grace_period", "--warmup-grace-period"),
    ("request_rate_series", "--request-rate-series"),
    (
        "prefill_concurrency_ramp_duration",
        "--prefill-concurrency-ramp-duration",
    ),
    (
        "warmup_prefill_concurrency_ramp_duration",
        "--warmup-prefill-concurrency-ramp-duration",
    ),
    ("parameter_sweep_mode", "--parameter-sweep-mode"),
    ("parameter_sweep_same_seed", "--parameter-sweep-same-seed"),
    ("set_consistent_seed", "--set-consistent-seed"),
    ("vary_seed_per_trial", "--vary-seed-per-trial"),
    ("convergence_metric", "--convergence-metric"),
    ("convergence_stat", "--convergence-stat"),
    ("convergence_threshold", "--convergence-threshold"),
    ("convergence_mode", "--convergence-mode"),
    ("request_cancellation_rate", "--request-cancellation-rate"),
    ("request_cancellation_delay", "--request-cancellation-delay"),
    ("schedule_lag_p99_ms", "--schedule-lag-p99-ms"),
    ("schedule_min_achieved_pct", "--schedule-min-achieved-pct"),
    ("fail_on_missed_schedule", "--fail-on-missed-schedule"),
    ("artifact_dir", "--output-artifact-dir"),
    ("profile_export_prefix", "--profile-export-prefix"),
    ("export_level", "--export-level"),
    ("ui", "--ui-type"),
];

fn given(m: &ArgMatches, id: &str) -> bool {
    m.value_source(id) == Some(ValueSource::CommandLine)
}

fn names(m: &ArgMatches, flags: &[(&str, &'static str)]) -> Vec<&'static str> {
    flags
        .iter()
        .filter(|(id, _)| given(m, id))
        .map(|(_, flag)| *flag)
        .collect()
}

/// Check `profile` and `inspect` flags that depend on one another: an error, or the
/// warnings to print (one line each, without the `inferbench: warning:` prefix). Other
/// subcommands have none.
pub fn check_given(m: &ArgMatches) -> Result<Vec<String>, String> {
    let (sub_name, sub) = match m.subcommand() {
        Some((n @ ("profile" | "inspect"), sub)) => (n, sub),
        _ => return Ok(Vec::new()),
    };
    let mut warnings = Vec::new();
    if sub_name == "inspect" {
        let ignored = names(sub, INSPECT_IGNORES);
        if !ignored.is_empty() {
            warnings.push(format!(
                "inspect ignores {}: it sends --count requests one after another and writes no files",
                ignored.join(", ")
            ));
        }
    } else {
        profile_errors(sub)?;
    }
    if given(sub, "streaming")
        && let Some(e) = sub.get_one::<EndpointArg>("endpoint_type")
        && let Ok(t) = super::plan::endpoint_type(*e)
        && !t.supports_streaming()
    {
        // AIPerf turns streaming off silently for these; say so.
        warnings.push(format!(
            "--streaming: --endpoint-type {} does not stream; the requests are not streamed",
            t.as_str()
        ));
    }
    Ok(warnings)
}

/// Profile flags whose effect needs another flag: the user expected it, so an error.
fn profile_errors(m: &ArgMatches) -> Result<(), String> {
    let warmup = names(m, WARMUP_LOAD);
    if !warmup.is_empty()
        && !given(m, "warmup_request_count")
        && !given(m, "warmup_duration")
        && !given(m, "num_warmup_sessions")
    {
        return Err(format!(
            "{} {} --warmup-request-count, --num-warmup-sessions or --warmup-duration: without one there is no warmup phase",
            warmup.join(", "),
            if warmup.len() == 1 { "needs" } else { "need" }
        ));
    }
    if given(m, "arrival_pattern") && !given(m, "request_rate") && !given(m, "request_rate_series")
    {
        return Err(
            "--arrival-pattern needs --request-rate or --request-rate-series: without a rate, each request is sent as a concurrency slot frees"
                .into(),
        );
    }
    if given(m, "request_cancellation_delay") && !given(m, "request_cancellation_rate") {
        return Err(
            "--request-cancellation-delay needs --request-cancellation-rate: without it no request is cancelled"
                .into(),
        );
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn check(args: &[&str]) -> Result<Vec<String>, String> {
        let argv: Vec<&str> = std::iter::once("inferbench")
            .chain(args.iter().copied())
            .collect();
        let m = super::super::command_with_unbuilt()
            .try_get_matches_from(argv)
            .unwrap();
        check_given(&m)
    }

    #[test]
    fn every_listed_id_is_a_flag() {
        // value_source on an unknown id would panic under debug assertions: every id of
        // both tables must be a real argument of profile and inspect.
        let m = super::super::command_with_unbuilt()
            .try_get_matches_from(["inferbench", "inspect"])
            .unwrap();
        let (_, sub) = m.subcommand().unwrap();
        for (id, _) in INSPECT_IGNORES.iter().chain(WARMUP_LOAD) {
            assert!(!given(sub, id), "{id}");
        }
        assert_eq!(check(&["profile"]).unwrap(), Vec::<String>::new());
        assert_eq!(check(&["inspect"]).unwrap(), Vec::<String>::new());
    }

    #[test]
    fn leftovers_and_missing_partners() {
        let e = check(&["profile", "--warmup-concurrency", "4"]).unwrap_err();
        assert!(e.starts_with("--warmup-concurrency needs"), "{e}");
        assert!(
            check(&[
                "profile",
                "--warmup-concurrency",
                "4",
                "--warmup-duration",
                "1"
            ])
            .is_ok()
        );
        let e = check(&["profile", "--arrival-pattern", "constant"]).unwrap_err();
        assert!(
            e.starts_with("--arrival-pattern needs --request-rate"),
            "{e}"
        );
        assert!(
            check(&[
                "profile",
                "--request-rate-mode",
                "constant",
                "--request-rate",
                "5"
            ])
            .is_ok()
        );
        let e = check(&["profile", "--request-cancellation-delay", "1"]).unwrap_err();
        assert!(e.starts_with("--request-cancellation-delay needs"), "{e}");
        let w = check(&["profile", "--endpoint-type", "embeddings", "--streaming"]).unwrap();
        assert_eq!(w.len(), 1);
        assert!(
            w[0].starts_with("--streaming: --endpoint-type embeddings"),
            "{w:?}"
        );
        let w = check(&["inspect", "--concurrency", "8", "--artifact-dir", "x"]).unwrap();
        assert_eq!(
            w,
            [
                "inspect ignores --concurrency, --output-artifact-dir: it sends --count requests one after another and writes no files"
            ]
        );
    }
}
