//! Progress on stderr, on its own thread while the engine runs: a bar when stderr is a
//! terminal (`--ui dashboard`, its live percentiles refreshed every `--stats-interval`,
//! default 5 s), one line every `--stats-interval` (default 30 s, as AIPerf) with
//! `--ui simple`, nothing with `--ui none`. Besides the counts it shows the live TTFT, ITL and schedule-lag
//! percentiles, read from the histograms the evidence writer fills (`live_stats`), so the
//! client's threads do no extra work for it.

use std::io::IsTerminal;
use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::mpsc::{Receiver, RecvTimeoutError};
use std::time::Duration;

use inferbench_client::Progress;
use inferbench_core::plan::UiKind;
use inferbench_run::live_stats::{LiveStats, progress_line};

/// `--stats-interval` in ms (0: the UI's default, as AIPerf: 5 s with the dashboard, 30 s
/// otherwise).
static INTERVAL_MS: AtomicU64 = AtomicU64::new(0);

pub fn set_interval(seconds: Option<f64>) {
    let ms = seconds.map_or(0, |s| (s * 1000.0).round().max(1.0) as u64);
    INTERVAL_MS.store(ms, Ordering::Relaxed);
}

fn interval(default_s: u64) -> Duration {
    match INTERVAL_MS.load(Ordering::Relaxed) {
        0 => Duration::from_secs(default_s),
        ms => Duration::from_millis(ms),
    }
}

/// Shows progress until `done` is dropped or sent to.
pub fn show(ui: UiKind, progress: Arc<Progress>, live: Arc<LiveStats>, done: Receiver<()>) {
    let tty = std::io::stderr().is_terminal();
    match ui {
        UiKind::Dashboard if tty => bar(progress, live, done),
        UiKind::Simple => lines(progress, live, done),
        UiKind::None | UiKind::Dashboard => {
            let _ = done.recv();
        }
    }
}

fn snapshot(p: &Progress) -> (&'static str, u64, u64, u64) {
    (
        p.phase().as_str(),
        p.completed.load(Ordering::Relaxed),
        p.phase_total.load(Ordering::Relaxed),
        p.errors.load(Ordering::Relaxed),
    )
}

/// Waits one tick; false once the run is over.
fn tick(done: &Receiver<()>, every: Duration) -> bool {
    matches!(done.recv_timeout(every), Err(RecvTimeoutError::Timeout))
}

fn bar(p: Arc<Progress>, live: Arc<LiveStats>, done: Receiver<()>) {
    let pb = indicatif::ProgressBar::new(0);
    pb.set_draw_target(indicatif::ProgressDrawTarget::stderr_with_hz(4));
    if let Ok(style) = indicatif::ProgressStyle::with_template(
        "{prefix:>9} [{elapsed_precise}] {wide_bar} {pos}/{len} {per_sec} {msg}",
    ) {
        pb.set_style(style);
    }
    // The counts move four times a second; the live percentiles every --stats-interval.
    let every = interval(5);
    let mut latency = String::new();
    let mut last: Option<std::time::Instant> = None;
    while tick(&done, Duration::from_millis(250)) {
        let (phase, completed, total, errors) = snapshot(&p);
        pb.set_prefix(phase);
        pb.set_length(total);
        pb.set_position(completed);
        if last.is_none_or(|t| t.elapsed() >= every) {
            latency = live.snapshot().latency_text();
            last = Some(std::time::Instant::now());
        }
        pb.set_message(format!("{errors} errors · {latency}"));
    }
    pb.finish_and_clear();
}

fn lines(p: Arc<Progress>, live: Arc<LiveStats>, done: Receiver<()>) {
    while tick(&done, interval(30)) {
        let (phase, completed, total, errors) = snapshot(&p);
        eprintln!(
            "{}",
            progress_line(phase, completed, total, errors, &live.snapshot())
        );
    }
}
