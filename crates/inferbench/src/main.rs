//! The `inferbench` binary: flags in, a validated plan out, then the library crates do the
//! work. Errors are one line on stderr and a non-zero exit code.

mod aiperf_config;
mod alloc_tuning;
mod analyze_cmd;
mod bridge_cmd;
mod chat_cmd;
mod cli;
mod compare_cmd;
mod config_cmd;
mod config_hooks;
mod crosswalk;
mod gate_cmd;
mod grade_cmd;
mod inspect;
mod kube_cmd;
mod ledger_cmd;
mod log_level;
mod manual;
mod merge_cmd;
mod metrics_cmd;
mod mock;
mod plan_cmd;
mod plot_cmd;
mod plot_specs;
mod profile;
mod progress;
mod qualify_cmd;
mod report_cmd;
mod speed_bench_cmd;
mod sweep_table;
mod time_server_cmd;
mod trace_cmd;

use std::process::ExitCode;

use clap::FromArgMatches;

pub use inferbench_run::Failure;

fn main() -> ExitCode {
    alloc_tuning::tune();
    // A panic is a bug; even then the user gets one line, not Rust's panic message.
    std::panic::set_hook(Box::new(|info| {
        let what = info
            .payload()
            .downcast_ref::<&str>()
            .map(|s| s.to_string())
            .or_else(|| info.payload().downcast_ref::<String>().cloned())
            .unwrap_or_default();
        let at = info
            .location()
            .map(|l| format!(" ({}:{})", l.file(), l.line()))
            .unwrap_or_default();
        eprintln!("inferbench: internal error{at}: {what}; please report it");
    }));
    inferbench_run::identity::set_build(inferbench_run::identity::BuildInfo {
        commit: env!("INFERBENCH_GIT_COMMIT").to_string(),
        profile: env!("INFERBENCH_BUILD_PROFILE").to_string(),
    });
    let argv = match cli::utf8_args(std::env::args_os()) {
        Ok(v) => v,
        Err(e) => {
            eprintln!("inferbench: error: {e}");
            return ExitCode::from(2);
        }
    };
    let matches = match cli::command_with_unbuilt().try_get_matches_from(&argv) {
        Ok(m) => m,
        Err(e) => e.exit(),
    };
    // `profile --config FILE.yaml`: the file's flags under the command line's.
    let (matches, argv) = match cli::apply_config(matches, argv) {
        Ok(x) => x,
        Err(e) => {
            eprintln!("inferbench: error: {e}");
            return ExitCode::from(2);
        }
    };
    match cli::log_settings(&matches) {
        Ok((level, interval)) => {
            log_level::set(level);
            progress::set_interval(interval);
        }
        Err(e) => {
            eprintln!("inferbench: error: {e}");
            return ExitCode::from(2);
        }
    }
    match cli::service_notes(&matches) {
        Ok(notes) => notes
            .iter()
            .filter(|_| log_level::notes())
            .for_each(|n| eprintln!("inferbench: note: {n}")),
        Err(e) => {
            eprintln!("inferbench: error: {e}");
            return ExitCode::from(2);
        }
    }
    if let Err(e) = cli::check_unbuilt(&matches) {
        eprintln!("inferbench: error: {e}");
        return ExitCode::from(2);
    }
    match cli::check_given(&matches) {
        Ok(warnings) => {
            for w in warnings.iter().filter(|_| log_level::warnings()) {
                eprintln!("inferbench: warning: {w}");
            }
        }
        Err(e) => {
            eprintln!("inferbench: error: {e}");
            return ExitCode::from(2);
        }
    }
    let parsed = match cli::Cli::from_arg_matches(&matches) {
        Ok(c) => c,
        Err(e) => e.exit(),
    };
    let result = match parsed.command {
        cli::Command::Profile(a) => profile::run(&a, &argv),
        cli::Command::MockServer(a) => mock::run(&a),
        cli::Command::Metrics(a) => metrics_cmd::run(&a),
        cli::Command::Inspect(a) => inspect::run(&a, &argv),
        cli::Command::Chat(a) => chat_cmd::run(&a),
        cli::Command::Crosswalk(a) => crosswalk::run(&a),
        cli::Command::Ledger(a) => ledger_cmd::run(&a),
        cli::Command::Grade(a) => grade_cmd::run(&a),
        cli::Command::Compare(a) => compare_cmd::run(&a),
        cli::Command::Gate(a) => gate_cmd::run(&a),
        cli::Command::Qualify(a) => qualify_cmd::run(&a, &argv),
        cli::Command::Plan(a) => plan_cmd::run(&a),
        cli::Command::Config(a) => config_cmd::run(&a),
        cli::Command::Bridge(a) => bridge_cmd::run(&a),
        cli::Command::AnalyzeTrace(a) => trace_cmd::analyze(&a),
        cli::Command::Validate(a) => trace_cmd::validate(&a),
        cli::Command::SpeedBenchReport(a) => speed_bench_cmd::run(&a),
        cli::Command::Analyze(a) => analyze_cmd::run(&a),
        cli::Command::Completions(a) => manual::completions(&a),
        cli::Command::Man(a) => manual::man(&a),
        cli::Command::Merge(a) => merge_cmd::run(&a),
        cli::Command::TimeServer(a) => time_server_cmd::run(&a),
        cli::Command::Kube(a) => kube_cmd::run(&a),
        cli::Command::Plot(a) => plot_cmd::run(&a),
        cli::Command::Report(a) => report_cmd::run(&a),
    };
    match result {
        Ok(code) => ExitCode::from(code),
        Err(f) => {
            eprintln!("inferbench: error: {}", f.message);
            ExitCode::from(f.code)
        }
    }
}
