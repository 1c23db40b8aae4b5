//! `profile` flags of AIPerf's service, output and control-hook groups that issue 14 left
//! unknown: the server profiler, the log level and verbosity, the stats interval, auto-plot,
//! the HTTP trace timing table, the transport and content type, and the ZMQ flags (no
//! effect in one process, accepted with a note).

use clap::{ArgAction, ArgMatches, Args};
use inferbench_core::controls_plan::{
    DEFAULT_PROFILER_START_PATH, DEFAULT_PROFILER_STOP_PATH, DEFAULT_PROFILER_TIMEOUT_S,
    ServerProfilerPlan,
};

#[derive(Args, Debug, Clone, Default)]
pub struct ServiceArgs {
    /// POST the server profiler's start route (every URL's origin) right before the profiling
    /// phase and its stop route right after it (vLLM's and SGLang's torch profiler). A failed
    /// start fails the run; a failed stop is a warning.
    #[arg(long = "server-profiler")]
    pub server_profiler: bool,
    /// Timeout of each profiler request (default 30). Enables `--server-profiler`.
    #[arg(
        long = "server-profiler-timeout-seconds",
        allow_negative_numbers = true
    )]
    pub server_profiler_timeout_seconds: Option<f64>,
    /// The profiler's start route, relative to the URL's origin (default `/start_profile`).
    /// Enables `--server-profiler`.
    #[arg(long = "server-profiler-start-path")]
    pub server_profiler_start_path: Option<String>,
    /// The profiler's stop route (default `/stop_profile`). Enables `--server-profiler`.
    #[arg(long = "server-profiler-stop-path")]
    pub server_profiler_stop_path: Option<String>,
    /// After each run, print AIPerf's "HTTP Trace Timing" table: the `http_req_*` metrics
    /// (k6's blocked, DNS lookup, connecting, sending, waiting, receiving, duration, and the
    /// totals, connection reuse, bytes and chunks), avg/min/max/p99/p90/p50/std.
    #[arg(long = "show-trace-timing")]
    pub show_trace_timing: bool,
    /// What inferbench writes on stderr: TRACE, DEBUG, INFO (default), NOTICE, SUCCESS,
    /// WARNING, ERROR, CRITICAL (case-insensitive). Errors always print.
    #[arg(long = "log-level", value_name = "LEVEL")]
    pub log_level: Option<String>,
    /// DEBUG (`-vv`: TRACE), and the `simple` progress UI instead of the dashboard, as AIPerf.
    #[arg(short = 'v', long = "verbose", action = ArgAction::Count)]
    pub verbose: u8,
    /// TRACE, and the `simple` progress UI instead of the dashboard (AIPerf's `-vv`).
    #[arg(long = "extra-verbose")]
    pub extra_verbose: bool,
    /// Seconds between live progress updates: the `simple` UI's lines and the dashboard's
    /// live percentiles (default: 5 with the dashboard, 30 otherwise, as AIPerf).
    #[arg(
        long = "stats-interval",
        value_name = "SECONDS",
        allow_negative_numbers = true
    )]
    pub stats_interval: Option<f64>,
    /// After each run, draw its charts into DIR/plots (`inferbench plot DIR`).
    #[arg(long = "auto-plot", overrides_with = "no_auto_plot")]
    pub auto_plot: bool,
    /// Do not draw the charts, even when the config asks for them.
    #[arg(long = "no-auto-plot", overrides_with = "auto_plot")]
    pub no_auto_plot: bool,
    /// A chart that cannot be drawn fails the command (exit 1) instead of a warning.
    #[arg(long = "plot-required")]
    pub plot_required: bool,
    /// `http` or `auto` (inferbench's one transport: HTTP/1.1 over TCP, TLS for https).
    #[arg(long = "transport", visible_alias = "transport-type")]
    pub transport: Option<String>,
    /// `application/json` (what inferbench sends); `multipart/form-data` is refused.
    #[arg(long = "request-content-type")]
    pub request_content_type: Option<String>,
    /// AIPerf's ZMQ bus host: accepted with a note, no effect (one process, no bus).
    #[arg(long = "zmq-host")]
    pub zmq_host: Option<String>,
    /// AIPerf's ZMQ IPC directory: accepted with a note, no effect.
    #[arg(long = "zmq-ipc-path")]
    pub zmq_ipc_path: Option<String>,
    /// AIPerf's ZMQ dual IPC+TCP bind: accepted with a note, no effect.
    #[arg(long = "zmq-dual-bind")]
    pub zmq_dual_bind: bool,
}

/// AIPerf's log levels, most verbose first (loguru's ladder; NOTICE and SUCCESS sit between
/// INFO and WARNING).
pub const LOG_LEVELS: &[&str] = &[
    "TRACE", "DEBUG", "INFO", "NOTICE", "SUCCESS", "WARNING", "ERROR", "CRITICAL",
];

/// The log level these flags give, as an index into [`LOG_LEVELS`]: `--log-level`, else
/// `-vv`/`--extra-verbose` (TRACE), else `-v` (DEBUG), else INFO.
pub fn log_level(a: &ServiceArgs) -> Result<usize, String> {
    if let Some(l) = &a.log_level {
        let up = l.to_ascii_uppercase();
        return LOG_LEVELS
            .iter()
            .position(|n| *n == up)
            .ok_or_else(|| format!("--log-level {l}: one of {}", LOG_LEVELS.join(", ")));
    }
    Ok(if a.extra_verbose || a.verbose >= 2 {
        0
    } else if a.verbose == 1 {
        1
    } else {
        2
    })
}

/// The log level and stats interval of a `profile`/`inspect` command line (INFO and None
/// for other commands): read before the command runs, for the lines printed before it.
pub fn log_settings(m: &ArgMatches) -> Result<(usize, Option<f64>), String> {
    use clap::FromArgMatches;
    let Some((_, sub)) = m
        .subcommand()
        .filter(|(n, _)| matches!(*n, "profile" | "inspect"))
    else {
        return Ok((2, None));
    };
    let a = ServiceArgs::from_arg_matches(sub).map_err(|e| e.to_string())?;
    Ok((log_level(&a)?, stats_interval(&a)?))
}

/// Whether the flags ask for AIPerf's verbose mode (which also switches its dashboard to
/// the simple UI).
pub fn verbose(a: &ServiceArgs) -> bool {
    a.verbose > 0 || a.extra_verbose
}

/// `--stats-interval`, checked (None: the UI's default).
pub fn stats_interval(a: &ServiceArgs) -> Result<Option<f64>, String> {
    match a.stats_interval {
        None => Ok(None),
        Some(s) if s.is_finite() && s > 0.0 && s <= 1000.0 => Ok(Some(s)),
        Some(s) => Err(format!(
            "--stats-interval {s}: must be more than 0 and at most 1000 seconds"
        )),
    }
}

/// `--server-profiler` and its path and timeout flags (any one enables it, as in AIPerf).
pub fn server_profiler(a: &ServiceArgs) -> Result<Option<ServerProfilerPlan>, String> {
    if !(a.server_profiler
        || a.server_profiler_timeout_seconds.is_some()
        || a.server_profiler_start_path.is_some()
        || a.server_profiler_stop_path.is_some())
    {
        return Ok(None);
    }
    let timeout_s = a
        .server_profiler_timeout_seconds
        .unwrap_or(DEFAULT_PROFILER_TIMEOUT_S);
    if !timeout_s.is_finite() || timeout_s <= 0.0 {
        return Err(format!(
            "--server-profiler-timeout-seconds {timeout_s}: must be more than 0"
        ));
    }
    let path = |flag: &str, given: &Option<String>, default: &str| -> Result<String, String> {
        let p = given.clone().unwrap_or_else(|| default.to_string());
        if !p.starts_with('/') || p.contains("://") {
            return Err(format!(
                "{flag} {p:?}: must be a path relative to the URL's origin, starting with /"
            ));
        }
        Ok(p)
    };
    Ok(Some(ServerProfilerPlan {
        start_path: path(
            "--server-profiler-start-path",
            &a.server_profiler_start_path,
            DEFAULT_PROFILER_START_PATH,
        )?,
        stop_path: path(
            "--server-profiler-stop-path",
            &a.server_profiler_stop_path,
            DEFAULT_PROFILER_STOP_PATH,
        )?,
        timeout_s,
    }))
}

/// The notes for flags with no effect in one process, and the refusal of a transport or a
/// content type inferbench does not have. `sub` is the `profile`/`inspect` matches.
pub fn notes(sub: &ArgMatches) -> Result<Vec<String>, String> {
    let mut notes: Vec<String> = sub
        .get_many::<String>("config_notes")
        .into_iter()
        .flatten()
        .cloned()
        .collect();
    if let Some(t) = sub.get_one::<String>("transport") {
        let l = t.to_ascii_lowercase();
        if l != "http" && l != "auto" {
            return Err(format!(
                "--transport {t}: refused: inferbench's one transport is HTTP (http, or auto, which selects it)"
            ));
        }
    }
    if let Some(c) = sub.get_one::<String>("request_content_type") {
        let l = c.to_ascii_lowercase();
        if l != "application/json" {
            return Err(format!(
                "--request-content-type {c}: refused: inferbench sends application/json bodies (AIPerf's multipart/form-data uploads are not built)"
            ));
        }
    }
    for (id, flag) in [
        ("zmq_host", "--zmq-host"),
        ("zmq_ipc_path", "--zmq-ipc-path"),
    ] {
        if let Some(v) = sub.get_one::<String>(id) {
            notes.push(format!(
                "{flag} {v}: no effect: AIPerf's services talk over ZMQ; inferbench runs in one process, with no message bus"
            ));
        }
    }
    if let Some(s) = sub.get_one::<f64>("stats_interval")
        && sub.get_one::<super::UiArg>("ui") == Some(&super::UiArg::None)
    {
        notes.push(format!(
            "--stats-interval {s}: no effect with --ui none (no live progress is shown)"
        ));
    }
    if sub.get_flag("zmq_dual_bind") {
        notes.push("--zmq-dual-bind: no effect: AIPerf's services talk over ZMQ; inferbench runs in one process, with no message bus".into());
    }
    Ok(notes)
}

/// `inspect` sends its requests one by one, with no phases and no run directory: the flags
/// of a run's phases, progress and files have no effect there.
pub fn inspect_notes(sub: &ArgMatches) -> Vec<String> {
    let given = |id: &str| {
        sub.value_source(id)
            .is_some_and(|s| s == clap::parser::ValueSource::CommandLine)
    };
    [
        ("server_profiler", "--server-profiler"),
        (
            "server_profiler_timeout_seconds",
            "--server-profiler-timeout-seconds",
        ),
        ("server_profiler_start_path", "--server-profiler-start-path"),
        ("server_profiler_stop_path", "--server-profiler-stop-path"),
        ("show_trace_timing", "--show-trace-timing"),
        ("stats_interval", "--stats-interval"),
        ("auto_plot", "--auto-plot"),
        ("plot_required", "--plot-required"),
    ]
    .into_iter()
    .filter(|(id, _)| given(id))
    .map(|(_, flag)| {
        format!(
            "{flag}: no effect with inspect (it has no profiling phase, progress or run directory)"
        )
    })
    .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn log_levels_are_case_insensitive_and_a_bad_one_names_them_all() {
        let mut a = ServiceArgs {
            log_level: Some("warning".into()),
            ..Default::default()
        };
        assert_eq!(log_level(&a), Ok(5));
        a.log_level = Some("loud".into());
        let e = log_level(&a).unwrap_err();
        assert_eq!(
            e,
            "--log-level loud: one of TRACE, DEBUG, INFO, NOTICE, SUCCESS, WARNING, ERROR, CRITICAL"
        );
        let a = ServiceArgs {
            verbose: 2,
            ..Default::default()
        };
        assert_eq!(log_level(&a), Ok(0));
        let a = ServiceArgs {
            verbose: 1,
            ..Default::default()
        };
        assert_eq!(log_level(&a), Ok(1));
        assert_eq!(log_level(&ServiceArgs::default()), Ok(2));
    }

    #[test]
    fn a_profiler_path_enables_it_and_bad_values_name_their_flag() {
        let a = ServiceArgs {
            server_profiler_stop_path: Some("/halt".into()),
            ..Default::default()
        };
        let p = server_profiler(&a).unwrap().unwrap();
        assert_eq!(p.start_path, "/start_profile");
        assert_eq!(p.stop_path, "/halt");
        assert_eq!(p.timeout_s, 30.0);
        assert_eq!(server_profiler(&ServiceArgs::default()), Ok(None));
        let a = ServiceArgs {
            server_profiler_start_path: Some("http://x/start".into()),
            ..Default::default()
        };
        assert!(
            server_profiler(&a)
                .unwrap_err()
                .starts_with("--server-profiler-start-path")
        );
        let a = ServiceArgs {
            server_profiler_timeout_seconds: Some(0.0),
            ..Default::default()
        };
        assert!(
            server_profiler(&a)
                .unwrap_err()
                .starts_with("--server-profiler-timeout-seconds")
        );
        let a = ServiceArgs {
            stats_interval: Some(-1.0),
            ..Default::default()
        };
        assert!(
            stats_interval(&a)
                .unwrap_err()
                .starts_with("--stats-interval")
        );
    }
}
