//! `inferbench analyze-trace FILE [--block-size N[,N…]] [--output-file F]` and
//! `inferbench validate mooncake-trace FILE`, as AIPerf's commands of those names. The
//! computations are `inferbench_workload::dataset::{analyze_trace, validate_mooncake_trace}`.

use std::path::PathBuf;

use clap::{Args, Subcommand};
use inferbench_run::Failure;
use inferbench_workload::dataset::{
    MetricStats, TraceAnalysis, analyze_trace, validate_mooncake_trace,
};

#[derive(Args, Debug)]
pub struct AnalyzeTraceArgs {
    /// The Mooncake trace (JSONL: input_length, output_length, hash_ids).
    pub input_file: PathBuf,
    /// KV-cache block size in tokens; a comma list analyzes each size in turn.
    #[arg(long = "block-size", value_delimiter = ',', default_value = "512")]
    pub block_size: Vec<u64>,
    /// Also write the report as JSON (AIPerf's field names; a list for several sizes).
    #[arg(long = "output-file", value_name = "FILE")]
    pub output_file: Option<PathBuf>,
}

#[derive(Args, Debug)]
pub struct ValidateArgs {
    #[command(subcommand)]
    pub command: ValidateCommand,
}

#[derive(Subcommand, Debug)]
pub enum ValidateCommand {
    /// Check every row of a Mooncake trace against the loader's rules; exit 1 naming the
    /// first ten bad lines.
    MooncakeTrace {
        /// The trace file (JSONL).
        file: PathBuf,
    },
}

pub fn analyze(a: &AnalyzeTraceArgs) -> Result<u8, Failure> {
    if !a.input_file.is_file() {
        return Err(Failure::input(format!(
            "{}: no such file",
            a.input_file.display()
        )));
    }
    let mut reports = Vec::with_capacity(a.block_size.len());
    for &b in &a.block_size {
        if b == 0 {
            return Err(Failure::input("--block-size: must be at least 1"));
        }
        reports.push(analyze_trace(&a.input_file, b).map_err(|e| Failure::input(e.to_string()))?);
    }
    for r in &reports {
        print!("{}", render(r));
    }
    if let Some(p) = &a.output_file {
        let json = if reports.len() == 1 {
            serde_json::to_string_pretty(&reports[0])
        } else {
            serde_json::to_string_pretty(&reports)
        }
        .map_err(|e| Failure::run(format!("cannot write the report: {e}")))?;
        crate::metrics_cmd::write_report(p, json.as_bytes())?;
        println!("Analysis report saved to {}", p.display());
    }
    Ok(0)
}

/// AIPerf's console report: the counts, then one row per metric.
fn render(r: &TraceAnalysis) -> String {
    let mut t = comfy_table::Table::new();
    t.load_preset(comfy_table::presets::UTF8_FULL_CONDENSED);
    t.set_header([
        "Metric", "Mean", "Std Dev", "Min", "P25", "Median", "P75", "Max",
    ]);
    let rows: [(&str, &Option<MetricStats>); 5] = [
        ("Input Length", &r.isl_stats),
        ("Context Length", &r.context_length_stats),
        ("Unique Prompt Length", &r.unique_prompt_length_stats),
        ("Output Length", &r.osl_stats),
        ("Theoretical Hit Rates", &r.hit_rate_stats),
    ];
    for (name, s) in rows {
        let cells: Vec<String> = match s {
            None => vec!["N/A".to_string(); 7],
            Some(s) => [s.mean, s.std_dev, s.min, s.p25, s.median, s.p75, s.max]
                .iter()
                .map(|v| format!("{v:.2}"))
                .collect(),
        };
        let mut row = vec![name.to_string()];
        row.extend(cells);
        t.add_row(row);
    }
    format!(
        "\nTrace Analysis Report (block size {})\nTotal requests:  {}\nUnique prefixes: {}\n\n{t}\n\n",
        r.block_size, r.total_requests, r.unique_prefixes
    )
}

pub fn validate(a: &ValidateArgs) -> Result<u8, Failure> {
    let ValidateCommand::MooncakeTrace { file } = &a.command;
    let (rows, errors) =
        validate_mooncake_trace(file, 10).map_err(|e| Failure::input(e.to_string()))?;
    if errors.is_empty() {
        println!("Validation passed: {rows} rows are Mooncake-compatible.");
        return Ok(0);
    }
    println!("Validation failed with {} error(s):", errors.len());
    for e in errors {
        println!("  {e}");
    }
    Ok(1)
}
