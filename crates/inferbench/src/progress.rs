//! Progress on stderr, on its own thread while the engine runs: a bar when stderr is a
//! terminal (`--ui dashboard`), one line a second with `--ui simple`, nothing with
//! `--ui none`.

use std::io::IsTerminal;
use std::sync::Arc;
use std::sync::atomic::Ordering;
use std::sync::mpsc::{Receiver, RecvTimeoutError};
use std::time::Duration;

use inferbench_client::Progress;
use inferbench_core::plan::UiKind;

/// Shows progress until `done` is dropped or sent to.
pub fn show(ui: UiKind, progress: Arc<Progress>, done: Receiver<()>) {
    let tty = std::io::stderr().is_terminal();
    match ui {
        UiKind::Dashboard if tty => bar(progress, done),
        UiKind::Simple => lines(progress, done),
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

fn bar(p: Arc<Progress>, done: Receiver<()>) {
    let pb = indicatif::ProgressBar::new(0);
    pb.set_draw_target(indicatif::ProgressDrawTarget::stderr_with_hz(4));
    if let Ok(style) = indicatif::ProgressStyle::with_template(
        "{prefix:>9} [{elapsed_precise}] {wide_bar} {pos}/{len} {per_sec} {msg}",
    ) {
        pb.set_style(style);
    }
    while tick(&done, Duration::from_millis(250)) {
        let (phase, completed, total, errors) = snapshot(&p);
        pb.set_prefix(phase);
        pb.set_length(total);
        pb.set_position(completed);
        pb.set_message(if errors > 0 {
            format!("{errors} errors")
        } else {
            String::new()
        });
    }
    pb.finish_and_clear();
}

fn lines(p: Arc<Progress>, done: Receiver<()>) {
    while tick(&done, Duration::from_secs(1)) {
        let (phase, completed, total, errors) = snapshot(&p);
        eprintln!("inferbench: {phase}: {completed}/{total} requests done, {errors} errors");
    }
}
