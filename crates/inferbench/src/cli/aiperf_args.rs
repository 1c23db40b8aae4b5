//! `profile` flags of issue 14: the YAML config, the sweep shape, seeds, tokenizer checks and
//! AIPerf's service flags that mean nothing in one process.

use clap::{ArgAction, Args, ValueEnum};

#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, ValueEnum)]
pub enum SweepTypeArg {
    /// Every combination of the swept lists, the first flag outermost (AIPerf's default).
    #[default]
    Grid,
    /// The i-th value of every swept list together; the lists must have one length.
    Zip,
}

/// `--convergence-mode`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, ValueEnum)]
pub enum ConvergenceModeArg {
    /// The Student-t interval's width over |mean| (default threshold 0.10).
    #[value(name = "ci_width")]
    CiWidth,
    /// The runs' coefficient of variation (default threshold 0.05).
    Cv,
    /// The two-sample KS test of the last run's requests against the earlier runs' pooled:
    /// its p-value above the threshold (default 0.05).
    Distribution,
}

/// `--parameter-sweep-mode`: the order of a sweep's trials (with `--num-profile-runs` > 1).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, ValueEnum)]
pub enum SweepModeArg {
    /// Trials outer: trial 1 of every cell, then trial 2 of every cell (AIPerf's default).
    #[default]
    Repeated,
    /// Cells outer: every trial of a cell before the next cell.
    Independent,
}

#[derive(Args, Debug, Default)]
pub struct AiperfArgs {
    /// An AIPerf 0.13 YAML config (`schemaVersion: "2.0"`). Its parts become flags; a flag
    /// given on the command line overrides the file's (docs/aiperf-config.md).
    #[arg(short = 'f', long = "config", value_name = "FILE.yaml")]
    pub config: Option<String>,
    /// With --config: the run of a `sweep: {type: scenarios}` to benchmark, by name.
    /// AIPerf's own `--scenario inferencex-agentx-mvp` (without --config) is refused.
    #[arg(long = "scenario")]
    pub scenario: Option<String>,
    /// With --config: benchmark the built-in simulated server, not the file's endpoint URL.
    /// Not an AIPerf flag.
    #[arg(long = "simulated", requires = "config")]
    pub simulated: bool,
    /// A note of the --config mapping (a part that maps to nothing, as in AIPerf), printed
    /// once at the start; written by the mapping, not by hand.
    #[arg(long = "config-note", hide = true)]
    pub config_notes: Vec<String>,
    /// Every scenario of the config's `scenarios` sweep, when `--scenario` picks none: each
    /// runs as a cell (written by `--config`'s mapping, not by hand).
    #[arg(long = "config-scenario", hide = true)]
    pub config_scenarios: Vec<String>,
    /// How comma lists of sweep flags combine: grid (every combination) or zip.
    #[arg(
        long = "sweep-type",
        value_enum,
        ignore_case = true,
        default_value = "grid"
    )]
    pub sweep_type: SweepTypeArg,
    /// One cell of a hand-picked sweep, `[NAME:] KEY=VALUE, KEY=VALUE, …` (keys are profile
    /// flags without `--`); give it at least twice. Not with comma lists.
    #[arg(long = "variant", visible_alias = "sweep-variant", value_name = "[NAME:] KEY=VALUE,…", action = ArgAction::Append)]
    pub variants: Vec<String>,
    /// Do not print the sweep table (the finished cells' headline numbers, printed again
    /// after each cell of a sweep when stdout is a terminal).
    #[arg(long = "no-sweep-table")]
    pub no_sweep_table: bool,
    /// AIPerf's record-processor service count. inferbench folds records in one process;
    /// accepted with a note, no effect.
    #[arg(
        long = "record-processor-service-count",
        visible_alias = "record-processors"
    )]
    pub record_processors: Option<u64>,
    /// AIPerf runs a tokenizer's own Python code with this; inferbench never runs code, so
    /// the flag is refused with that reason.
    #[arg(long = "tokenizer-trust-remote-code", action = ArgAction::SetTrue)]
    pub tokenizer_trust_remote_code: bool,
    /// The revision the tokenizer must be (a branch, tag or commit; AIPerf's default is
    /// main). Checked against the local Hugging Face cache snapshot the tokenizer's files are
    /// in, never fetched; the manifest records the commit.
    #[arg(long = "tokenizer-revision", value_name = "REV")]
    pub tokenizer_revision: Option<String>,
    /// The order of a sweep's trials: repeated (trials outer) or independent (cells outer).
    #[arg(
        long = "parameter-sweep-mode",
        value_enum,
        ignore_case = true,
        default_value = "repeated"
    )]
    pub parameter_sweep_mode: SweepModeArg,
    /// Every cell of a sweep gets the same seed; by default cell i gets the seed plus i.
    #[arg(long = "parameter-sweep-same-seed", action = ArgAction::SetTrue)]
    pub parameter_sweep_same_seed: bool,
    /// Sweeps and repeated runs without --random-seed use seed 42, so that they differ only
    /// in what is swept (AIPerf's default: true).
    #[arg(long = "set-consistent-seed", default_value_t = true, action = ArgAction::Set)]
    pub set_consistent_seed: bool,
    /// Each repeated run of a cell gets its own seed, derived from the cell's (SHA-256 over
    /// the seed, the cell and the trial), so the repeats vary the workload too.
    #[arg(long = "vary-seed-per-trial", action = ArgAction::SetTrue)]
    pub vary_seed_per_trial: bool,
    /// Inter-arrival distribution of a rate-paced warmup (default: --arrival-pattern).
    #[arg(long = "warmup-arrival-pattern", value_enum, ignore_case = true)]
    pub warmup_arrival_pattern: Option<super::ArrivalArg>,
    /// Seconds in-flight warmup requests may finish after --warmup-duration before they are
    /// cancelled (default: as long as they take).
    #[arg(long = "warmup-grace-period", allow_negative_numbers = true)]
    pub warmup_grace_period: Option<f64>,
    /// Stop a cell's repeated runs early once this metric (a summary tag, e.g.
    /// time_to_first_token) has settled; --num-profile-runs is the most runs.
    #[arg(long = "convergence-metric")]
    pub convergence_metric: Option<String>,
    /// The statistic of the metric taken from each run: avg (default), p50, p90, p95, p99,
    /// min, max.
    #[arg(long = "convergence-stat")]
    pub convergence_stat: Option<String>,
    /// The bound, between 0 and 1 (default: 0.10 for ci_width, 0.05 for cv, and for
    /// distribution the KS p-value to exceed, 0.05).
    #[arg(long = "convergence-threshold", allow_negative_numbers = true)]
    pub convergence_threshold: Option<f64>,
    /// How settling is judged: ci_width (default), cv or distribution.
    #[arg(long = "convergence-mode", value_enum, ignore_case = true)]
    pub convergence_mode: Option<ConvergenceModeArg>,
    /// A JSON file of request-rate points (`[{"time_s": 0, "qps": 2}, …]` or
    /// `{"points": […]}`): the rate follows them piecewise-linearly after any rate ramp,
    /// in place of --request-rate (docs/load-shapes.md).
    #[arg(long = "request-rate-series", value_name = "FILE.json")]
    pub request_rate_series: Option<String>,
    /// Seconds over which the --prefill-concurrency cap rises from 1 to its target.
    #[arg(
        long = "prefill-concurrency-ramp-duration",
        allow_negative_numbers = true
    )]
    pub prefill_concurrency_ramp_duration: Option<f64>,
    /// --prefill-concurrency-ramp-duration of the warmup phase (default: the profiling one).
    #[arg(
        long = "warmup-prefill-concurrency-ramp-duration",
        allow_negative_numbers = true
    )]
    pub warmup_prefill_concurrency_ramp_duration: Option<f64>,
}

impl AiperfArgs {
    /// The convergence rule of `--convergence-*`, checked (one error naming the flag).
    pub fn convergence(
        &self,
        runs: usize,
    ) -> Result<Option<inferbench_run::convergence::Convergence>, String> {
        use inferbench_run::convergence::{Convergence, ConvergenceMode, STATS};
        let Some(metric) = &self.convergence_metric else {
            for (flag, given) in [
                ("--convergence-stat", self.convergence_stat.is_some()),
                (
                    "--convergence-threshold",
                    self.convergence_threshold.is_some(),
                ),
                ("--convergence-mode", self.convergence_mode.is_some()),
            ] {
                if given {
                    return Err(format!("{flag} needs --convergence-metric"));
                }
            }
            return Ok(None);
        };
        if runs < 2 {
            return Err(format!(
                "--convergence-metric needs --num-profile-runs of at least 2 (the rule is checked from the second run on; got {runs})"
            ));
        }
        let stat = self.convergence_stat.clone().unwrap_or("avg".into());
        let stat = stat.to_ascii_lowercase();
        if !STATS.contains(&stat.as_str()) {
            return Err(format!(
                "--convergence-stat {stat}: one of {}",
                STATS.join(", ")
            ));
        }
        if let Some(t) = self.convergence_threshold
            && !(t > 0.0 && t < 1.0)
        {
            return Err(format!(
                "--convergence-threshold {t}: must be between 0 and 1 (exclusive)"
            ));
        }
        let mode = match self.convergence_mode.unwrap_or(ConvergenceModeArg::CiWidth) {
            ConvergenceModeArg::CiWidth => ConvergenceMode::CiWidth,
            ConvergenceModeArg::Cv => ConvergenceMode::Cv,
            ConvergenceModeArg::Distribution => ConvergenceMode::Distribution,
        };
        Ok(Some(Convergence {
            metric: metric.clone(),
            stat,
            mode,
            threshold: self.convergence_threshold,
            min_runs: 2,
        }))
    }
}

/// `inferbench config`: AIPerf's YAML configs without running them.
#[derive(Args, Debug)]
pub struct ConfigArgs {
    #[command(subcommand)]
    pub command: ConfigCommand,
}

#[derive(clap::Subcommand, Debug)]
pub enum ConfigCommand {
    /// Check FILE against AIPerf 0.13's schema (after `${VAR:default}` substitution), and
    /// say whether inferbench runs it or which part it refuses.
    Validate { file: String },
    /// Print the cells a sweep of FILE would run (one without a sweep), each with the
    /// inferbench flags it maps to or the part refused.
    Expand {
        file: String,
        /// Map each cell for the built-in simulated server (leave out the file's URL).
        #[arg(long)]
        simulated: bool,
    },
    /// inferbench's starter configs in AIPerf's YAML format: list, search, or write one
    /// (to stdout, or --output FILE) with the model and URL filled in.
    Init(ConfigInitArgs),
}

/// `config init` (AIPerf's interface).
#[derive(Args, Debug)]
pub struct ConfigInitArgs {
    /// The template to write (see --list).
    #[arg(short = 't', long)]
    pub template: Option<String>,
    /// List the templates by category.
    #[arg(short = 'l', long = "list")]
    pub list: bool,
    /// The templates with this word in their name, title, description, category or tags.
    #[arg(short = 's', long)]
    pub search: Option<String>,
    /// With --list: only categories containing this.
    #[arg(short = 'c', long)]
    pub category: Option<String>,
    /// Also show tags and difficulty.
    #[arg(short = 'v', long)]
    pub verbose: bool,
    /// The model name to write into the template.
    #[arg(short = 'm', long)]
    pub model: Option<String>,
    /// The endpoint URL to write into the template.
    #[arg(short = 'u', long)]
    pub url: Option<String>,
    /// Write to this file instead of stdout.
    #[arg(short = 'o', long)]
    pub output: Option<std::path::PathBuf>,
}
