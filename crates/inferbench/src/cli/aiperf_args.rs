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

#[derive(Args, Debug, Default)]
pub struct AiperfArgs {
    /// An AIPerf 0.13 YAML config (`schemaVersion: "2.0"`). Its parts become flags; a flag
    /// given on the command line overrides the file's (docs/aiperf-config.md).
    #[arg(short = 'f', long = "config", value_name = "FILE.yaml")]
    pub config: Option<String>,
    /// With --config: the run of a `sweep: {type: scenarios}` to benchmark, by name.
    #[arg(long = "scenario", requires = "config")]
    pub scenario: Option<String>,
    /// With --config: benchmark the built-in simulated server, not the file's endpoint URL.
    /// Not an AIPerf flag.
    #[arg(long = "simulated", requires = "config")]
    pub simulated: bool,
    /// How comma lists of sweep flags combine: grid (every combination) or zip.
    #[arg(long = "sweep-type", value_enum, default_value = "grid")]
    pub sweep_type: SweepTypeArg,
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
}
