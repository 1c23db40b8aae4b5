//! The third layer of evidence: the serving system's own counters, read from Prometheus
//! text (the inference server's `/metrics`, a DCGM exporter), kept raw, and summarised
//! over the run's windows. Pure functions over text and types; the scraping itself (network)
//! is `inferbench-client::scrape`, the files are written by `inferbench-run`.
//!
//! Modules, by job: `expo` (the 0.0.4 / OpenMetrics text parser), `promql` (Prometheus's
//! exact `rate`/`increase`/`delta`/`irate` and the exact reset-aware increase), `quantile`
//! (`histogram_quantile`), `scrape` (the raw scrape file), `window` (every series over the
//! profiling window: counters, gauges, histograms), `names` (what each server's metric names
//! mean), `dcgm` (DCGM exporter fields), `view` (server and GPU views of a window, energy
//! per token), `aiperf` (AIPerf 0.13's own summary of the same scrapes and its export files).

pub mod aiperf;
pub mod dcgm;
pub mod expo;
pub mod names;
pub mod promql;
pub mod quantile;
pub mod scrape;
pub mod view;
pub mod window;
