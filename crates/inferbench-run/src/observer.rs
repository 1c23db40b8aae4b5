//! What a run tells whoever drives it. The library never prints: the binary's observer
//! turns these events into lines on stderr, a progress bar, or nothing.

use std::path::Path;
use std::sync::Arc;

use inferbench_client::Progress;
use inferbench_core::plan::UiKind;

use crate::live::RunReport;

#[derive(Debug)]
pub enum Event<'a> {
    /// The built-in simulated server listens at `url` (no `--url` was given).
    SimulatedServer {
        url: &'a str,
        ttft_ms: f64,
        itl_ms: f64,
        streaming: bool,
    },
    /// A sweep cell starts (1-based `index` of `of`).
    Cell {
        index: usize,
        of: usize,
        name: &'a str,
    },
    /// A sweep cell ran its last trial (every `--num-profile-runs`, or fewer once its
    /// convergence rule held): its parameters, how many trials ran (failed ones included)
    /// and the profiling summaries of the good ones, in trial order.
    CellDone {
        index: usize,
        of: usize,
        name: &'a str,
        parameters: &'a [(String, serde_json::Value)],
        trials: usize,
        summaries: &'a [inferbench_core::summary::Summary],
    },
    /// One of `--num-profile-runs` starts (1-based).
    Repeat {
        index: usize,
        of: usize,
    },
    /// The engine runs; `progress` counts its requests until [`Event::EngineStopped`], and
    /// `live` holds the finished records' latency histograms (the progress display's).
    EngineStarted {
        ui: UiKind,
        progress: Arc<Progress>,
        live: Arc<crate::live_stats::LiveStats>,
    },
    EngineStopped,
    /// Ctrl-C: the first (`escalation` 1) stops issuing, the second cancels what is in flight.
    Interrupt {
        escalation: u8,
    },
    /// SIGTERM: the requests in flight are cancelled; the artifacts are still written.
    Terminate,
    /// Something the user should know that does not stop the run (a metrics target that
    /// does not answer).
    Warning {
        message: &'a str,
    },
    /// One run is written (its failure, if any, is in the report).
    RunDone(&'a RunReport),
    /// The sweep's aggregate files are written.
    SweepWritten {
        dir: &'a Path,
    },
}

pub trait Observer: Send + Sync {
    fn event(&self, event: Event<'_>);
}

/// An observer that ignores everything (tests, library use).
pub struct Quiet;

impl Observer for Quiet {
    fn event(&self, _: Event<'_>) {}
}
