//! `inferbench merge SHARD_DIR... --output-dir DIR`: the shards of a sharded run as one run
//! directory (docs/scale-out.md), and what the merge measured.

use inferbench_run::Failure;
use inferbench_run::shard::merge::merge;

use crate::cli::MergeArgs;

fn ms(ns: i64) -> String {
    format!("{:.3} ms", ns as f64 / 1e6)
}

pub fn run(a: &MergeArgs) -> Result<u8, Failure> {
    let m = merge(&a.dirs, &a.output_dir)?;
    println!(
        "{}",
        inferbench_artifacts::console::render_console_for_terminal(&m.finished.scores.profiling)
    );
    let e = &m.evidence;
    eprintln!(
        "inferbench: merged {} shards, {} records, into {}",
        e.shard_count,
        m.records,
        m.dir.display()
    );
    eprintln!(
        "inferbench: window W = {:.6} s (raw, uncorrected: {:.6} s); clock bound on W: {}",
        e.window_ns as f64 / 1e9,
        e.raw_window_ns as f64 / 1e9,
        match (e.window_bound_ns, e.window_bound_ppm) {
            (Some(b), Some(p)) => format!(
                "±{} (±{p:.2} ppm of every throughput; shard {} starts it, shard {} ends it)",
                ms(b as i64),
                e.start_shard,
                e.end_shard
            ),
            _ => "unbounded (a shard has no time reference and an unsynchronized clock)".into(),
        }
    );
    for s in &e.shards {
        eprintln!(
            "inferbench: shard {}: {} records, offset {} → {}, ε {}, start lag {}",
            s.index,
            s.records,
            ms(s.offset_start_ns),
            ms(s.offset_end_ns),
            s.epsilon_ns
                .map_or("unbounded".into(), |e| format!("±{}", ms(e as i64))),
            s.start_lag_ns.map_or("– (no --start-at)".into(), ms)
        );
    }
    eprintln!(
        "inferbench: latencies (TTFT, ITL, E2E) are each measured on one host's monotonic clock and carry no clock uncertainty"
    );
    Ok(0)
}
