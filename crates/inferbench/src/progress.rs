//! Progress on stderr: a bar when stderr is a terminal (`--ui dashboard`), one line a second
//! with `--ui simple`, nothing with `--ui none`.

use std::io::IsTerminal;
use std::sync::Arc;
use std::sync::atomic::Ordering;
use std::time::Duration;

use inferbench_client::Progress;
use inferbench_core::plan::UiKind;

/// Runs until `done` resolves.
pub async fn show(ui: UiKind, progress: Arc<Progress>, done: tokio::sync::oneshot::Receiver<()>) {
    let tty = std::io::stderr().is_terminal();
    match ui {
        UiKind::None => {
            let _ = done.await;
        }
        UiKind::Dashboard if tty => bar(progress, done).await,
        UiKind::Dashboard => {
            let _ = done.await;
        }
        UiKind::Simple => lines(progress, done).await,
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

async fn bar(p: Arc<Progress>, mut done: tokio::sync::oneshot::Receiver<()>) {
    let pb = indicatif::ProgressBar::new(0);
    pb.set_draw_target(indicatif::ProgressDrawTarget::stderr_with_hz(4));
    if let Ok(style) = indicatif::ProgressStyle::with_template(
        "{prefix:>9} [{elapsed_precise}] {wide_bar} {pos}/{len} {per_sec} {msg}",
    ) {
        pb.set_style(style);
    }
    let mut tick = tokio::time::interval(Duration::from_millis(250));
    loop {
        tokio::select! {
            _ = &mut done => break,
            _ = tick.tick() => {
                let (phase, completed, total, errors) = snapshot(&p);
                pb.set_prefix(phase);
                pb.set_length(total);
                pb.set_position(completed);
                pb.set_message(if errors > 0 { format!("{errors} errors") } else { String::new() });
            }
        }
    }
    pb.finish_and_clear();
}

async fn lines(p: Arc<Progress>, mut done: tokio::sync::oneshot::Receiver<()>) {
    let mut tick = tokio::time::interval(Duration::from_secs(1));
    tick.tick().await;
    loop {
        tokio::select! {
            _ = &mut done => break,
            _ = tick.tick() => {
                let (phase, completed, total, errors) = snapshot(&p);
                eprintln!("inferbench: {phase}: {completed}/{total} requests done, {errors} errors");
            }
        }
    }
}
