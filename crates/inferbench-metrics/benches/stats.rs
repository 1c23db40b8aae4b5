//! Throughput of the statistics and of a whole `aiperf-0.13` computation.

use criterion::{Criterion, black_box, criterion_group, criterion_main};
use inferbench_core::evidence::{EvidenceHeader, PhaseWindow};
use inferbench_core::record::{ConnectionEvidence, Frame};
use inferbench_core::{Event, Evidence, Phase, Record, TokenCounts};
use inferbench_metrics::inference::bootstrap::{self, Scale, Spec, Statistic};
use inferbench_metrics::sweepline::{SweepRecord, sweepline_metrics};
use inferbench_metrics::{compute, stats::stats};

/// Deterministic pseudo-random values (xorshift), so runs are comparable.
fn values(n: usize) -> Vec<f64> {
    let mut x: u64 = 0x9E37_79B9_7F4A_7C15;
    (0..n)
        .map(|_| {
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            (x % 1_000_000_000) as f64
        })
        .collect()
}

fn evidence(n: u64) -> Evidence {
    let records = (0..n)
        .map(|i| {
            let start = i * 1_000_000;
            let events = (0..17u64)
                .map(|k| Event {
                    frame: k as u32,
                    t_ns: start + 20_000_000 + k * 5_000_000 + (i * 7919 + k * 104_729) % 300_000,
                    content: Some(" the".into()),
                    ..Default::default()
                })
                .collect();
            Record {
                id: i,
                request_id: format!("r{i}"),
                streaming: true,
                planned_ns: start,
                start_ns: start + 1000,
                end_ns: start + 110_000_000,
                requested_output_tokens: Some(17),
                events,
                tokens: TokenCounts {
                    input: Some(32),
                    output: Some(17),
                    reasoning: None,
                },
                ..Default::default()
            }
        })
        .collect();
    Evidence {
        header: EvidenceHeader {
            schema_version: 1,
            tool: "inferbench".into(),
            tool_version: "bench".into(),
            anchor_unix_ns: 1_795_978_615_000_000_000,
            benchmark_id: "bench".into(),
            endpoint_type: "chat".into(),
            streaming: true,
            tokenizer: "builtin".into(),
            use_server_token_count: false,
            per_chunk_usage: false,
        },
        records,
        phases: vec![PhaseWindow {
            phase: Phase::Profiling,
            start_ns: 0,
            sent_end_ns: n * 1_000_000,
            requests_end_ns: n * 1_000_000 + 110_000_000,
            scheduled: n,
            completed: n,
            errors: 0,
            cancelled: false,
        }],
        end: None,
    }
}

fn bench(c: &mut Criterion) {
    let v10k = values(10_000);
    let v1m = values(1_000_000);
    c.bench_function("stats 10k", |b| b.iter(|| stats(black_box(&v10k))));
    let mut g = c.benchmark_group("large");
    g.sample_size(10);
    g.bench_function("stats 1M", |b| b.iter(|| stats(black_box(&v1m))));
    let ev = evidence(10_000);
    g.bench_function("compute aiperf-0.13 10k records", |b| {
        b.iter(|| compute("aiperf-0.13", black_box(&ev), Phase::Profiling).unwrap())
    });
    // The writer thread's fold alone (no end-of-run statistics): each record as a live run
    // gives it, with its frames and connection evidence (the 14 `http_req_*` values too).
    let live = live_records(&ev);
    g.bench_function("fold aiperf-0.13 10k live records", |b| {
        b.iter(|| {
            let mut acc = inferbench_metrics::aiperf::Accumulator::new(&ev.header);
            for r in black_box(&live) {
                black_box(acc.push(r));
            }
            acc
        })
    });
    // The comparison's single-run path: 100 000 requests per side, B = 2 000.
    let a = values(100_000);
    let b: Vec<f64> = a.iter().rev().map(|v| v * 1.01 + 1.0).collect();
    for (name, statistic) in [
        ("bootstrap p99 100k x2 B=2000", Statistic::Percentile(99.0)),
        ("bootstrap mean 100k x2 B=2000", Statistic::Mean),
    ] {
        let spec = Spec {
            statistic,
            scale: Scale::Log,
            resamples: 2000,
            seed: 42,
            confidence: 0.90,
        };
        g.bench_function(name, |bch| {
            bch.iter(|| bootstrap::difference(black_box(&a), black_box(&b), &spec).unwrap())
        });
    }
    // The end-of-run sweep of a streamed run (the 14 time-weighted metrics): 20,000 requests
    // at concurrency 64, 16 chunks each, ICL-aware as every streaming run is.
    // At 40,000 the per-gap curves hold 1.2 million events, past the radix sorts' limit
    // (radix.rs `LARGE`): they are built in two time buckets, each radix-sorted; at 100,000
    // in three.
    for n in [20_000, 40_000, 100_000] {
        let sweep = sweep_records(n);
        let start = sweep.iter().map(|r| r.s).min().unwrap_or(0);
        let end = sweep.iter().map(|r| r.e).max().unwrap_or(0);
        g.bench_function(
            format!("sweepline {}k records x 16 chunks", n / 1000),
            |bch| bch.iter(|| sweepline_metrics(black_box(&sweep), (start, end), true)),
        );
    }
    g.finish();
}

/// `ev`'s records with a frame per event and the connection evidence of a reused connection.
fn live_records(ev: &Evidence) -> Vec<Record> {
    ev.records
        .iter()
        .map(|r| {
            let mut r = r.clone();
            r.frames = r
                .events
                .iter()
                .map(|e| Frame {
                    t_ns: e.t_ns,
                    bytes: 185,
                })
                .collect();
            r.sent_ns = Some(r.start_ns + 20_000);
            r.connection = Some(ConnectionEvidence {
                reused: true,
                send_start_ns: Some(r.start_ns + 5_000),
                chunks_sent: Some(1),
                ..Default::default()
            });
            r
        })
        .collect()
}

/// Requests of 64 concurrent streams back to back, each 2 to 3 ms long with 15 gaps; wall
/// clock instants, as a run's are (every byte of their f64 bits varies).
fn sweep_records(n: u64) -> Vec<SweepRecord> {
    let jitter = values(n as usize * 17);
    let mut free_at = [1_796_428_699_402_236_901u64; 64];
    (0..n as usize)
        .map(|i| {
            let slot = i % 64;
            let s = free_at[slot] + 10_000 + jitter[17 * i] as u64 % 20_000;
            let g = s + 1_000_000 + jitter[17 * i + 1] as u64 % 500_000;
            let icl: Vec<u64> = (0..15)
                .map(|k| 50_000 + jitter[17 * i + 2 + k] as u64 % 100_000)
                .collect();
            let e = g + icl.iter().sum::<u64>();
            free_at[slot] = e;
            SweepRecord {
                s,
                g: Some(g),
                e,
                i: Some(32),
                o: Some(16),
                icl,
            }
        })
        .collect()
}

criterion_group!(benches, bench);
criterion_main!(benches);
