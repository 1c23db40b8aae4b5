//! `inferbench speed-bench-report PATH... [--output FILE] [--format csv|table|both]
//! [--metric accept_length|accept_rate|throughput]`, as AIPerf's command of that name: the
//! SPEED-Bench matrix over runs that each ran one category. The matrix is
//! `inferbench_report::speed_bench`; this file prints it and writes the CSV.

use std::path::PathBuf;

use clap::{Args, ValueEnum};
use inferbench_report::speed_bench::{self, SpeedMetric};
use inferbench_run::Failure;

#[derive(Clone, Copy, Debug, ValueEnum)]
pub enum SpeedFormat {
    Csv,
    Table,
    Both,
}

#[derive(Clone, Copy, Debug, ValueEnum)]
#[value(rename_all = "snake_case")]
pub enum SpeedMetricArg {
    AcceptLength,
    AcceptRate,
    Throughput,
}

#[derive(Args, Debug)]
pub struct SpeedBenchReportArgs {
    /// Run directories, or parent directories whose sub-directories are runs.
    #[arg(required = true)]
    pub paths: Vec<PathBuf>,
    /// The CSV file to write.
    #[arg(long, value_name = "FILE", default_value = "speed_bench_report.csv")]
    pub output: PathBuf,
    /// What to print or write: the CSV, the console table, or both.
    #[arg(long = "format", value_enum, default_value = "both")]
    pub format: SpeedFormat,
    /// The cell value: acceptance length (server metrics), acceptance rate (server metrics)
    /// or output token throughput (the run's summary).
    #[arg(long, value_enum, default_value = "accept_length")]
    pub metric: SpeedMetricArg,
}

pub fn run(a: &SpeedBenchReportArgs) -> Result<u8, Failure> {
    let metric = match a.metric {
        SpeedMetricArg::AcceptLength => SpeedMetric::AcceptLength,
        SpeedMetricArg::AcceptRate => SpeedMetric::AcceptRate,
        SpeedMetricArg::Throughput => SpeedMetric::Throughput,
    };
    let mut warnings = Vec::new();
    let report = speed_bench::build(&a.paths, metric, &mut warnings);
    // The runs' warnings go out before the error or the table.
    for w in &warnings {
        eprintln!("inferbench: warning: {w}");
    }
    let report = report.map_err(Failure::run)?;
    println!("Found {} run directories.", report.run_dirs);
    if matches!(a.format, SpeedFormat::Table | SpeedFormat::Both) {
        print!("{}", speed_bench::table(&report, metric));
    }
    if matches!(a.format, SpeedFormat::Csv | SpeedFormat::Both) {
        std::fs::write(&a.output, speed_bench::csv(&report))
            .map_err(|e| Failure::run(format!("{}: cannot write: {e}", a.output.display())))?;
        println!("CSV written to {}", a.output.display());
    }
    Ok(0)
}
