use super::*;
use inferbench_core::record::{Event, PhaseOpt, RecordError};

#[test]
fn bucket_edges() {
    // Exact below 8.
    for v in 0..8 {
        assert_eq!(bucket_of(v), v as usize);
        assert_eq!(bucket_range(v as usize), (v, v + 1));
    }
    // 8..16 is the first octave, one value per bucket; 16 and 17 share [16, 18).
    assert_eq!(bucket_of(8), 8);
    assert_eq!(bucket_of(15), 15);
    assert_eq!(bucket_of(16), 16);
    assert_eq!(bucket_of(17), 16);
    assert_eq!(bucket_of(18), 17);
    assert_eq!(bucket_range(16), (16, 18));
    // 1000: ⌊log₂⌋ = 9, sub-bucket (1000 >> 6) & 7 = 7 → 8 + 6·8 + 7 = 63, [960, 1024).
    assert_eq!(bucket_of(1000), 63);
    assert_eq!(bucket_range(63), (960, 1024));
    assert_eq!(bucket_of(959), 62);
    assert_eq!(bucket_of(1024), 64);
    // The top bucket holds u64::MAX and its upper edge saturates.
    assert_eq!(bucket_of(u64::MAX), BUCKETS - 1);
    assert_eq!(bucket_range(BUCKETS - 1), (15 << 60, u64::MAX));
    // Every bucket's lower edge maps back to it, and the buckets tile the line.
    for i in 0..BUCKETS - 1 {
        let (lo, hi) = bucket_range(i);
        assert_eq!(bucket_of(lo), i);
        assert_eq!(bucket_of(hi - 1), i);
        assert_eq!(bucket_range(i + 1).0, hi);
    }
}

#[test]
fn percentile_picks_by_nearest_rank() {
    let h = LogHistogram::default();
    assert_eq!(h.quantile(0.5), None);
    for v in [1, 2, 3, 4] {
        h.add(v);
    }
    // n = 4: p50 is the ⌈2⌉ = 2nd value, p99 the ⌈3.96⌉ = 4th.
    assert_eq!(h.quantile(0.5), Some(2.0));
    assert_eq!(h.quantile(0.99), Some(4.0));
    let h = LogHistogram::default();
    for _ in 0..98 {
        h.add(5);
    }
    h.add(1000);
    h.add(1000);
    // n = 100: p99 is the 99th value, 1000, in [960, 1024): its midpoint 992.
    assert_eq!(h.count(), 100);
    assert_eq!(h.quantile(0.98), Some(5.0));
    assert_eq!(h.quantile(0.99), Some(992.0));
    assert_eq!(h.quantile(0.5), Some(5.0));
}

fn text_at(t_ns: u64) -> Event {
    Event {
        t_ns,
        content: Some("x".into()),
        ..Default::default()
    }
}

#[test]
fn a_record_gives_ttft_itl_and_lag() {
    let s = LiveStats::default();
    let mut r = Record {
        phase: PhaseOpt(Phase::Profiling),
        planned_ns: 100,
        start_ns: 150,
        end_ns: 3200,
        events: vec![text_at(1150), text_at(2150), text_at(3150)],
        ..Default::default()
    };
    r.tokens.output = Some(3);
    s.observe(&r);
    // TTFT 1150 − 150 = 1000 ns; ITL (3150 − 1150) / (3 − 1) = 1000 ns: both in [960, 1024).
    // Lag 150 − 100 = 50 ns: ⌊log₂⌋ 5, sub-bucket (50 >> 2) & 7 = 4 → [48, 52), midpoint 50.
    let snap = s.snapshot();
    assert_eq!(snap.ttft_p50_ms, Some(992.0 / 1e6));
    assert_eq!(snap.itl_p99_ms, Some(992.0 / 1e6));
    assert_eq!(snap.lag_p99_ms, Some(50.0 / 1e6));
    // A warmup record counts nowhere; an error record counts in the lag only.
    let mut w = r.clone();
    w.phase = PhaseOpt(Phase::Warmup);
    s.observe(&w);
    let mut e = r.clone();
    e.error = Some(RecordError {
        kind: inferbench_core::record::ErrorKind::Http,
        code: Some(500),
        error_type: "HTTPError".into(),
        message: "boom".into(),
    });
    s.observe(&e);
    assert_eq!((s.ttft.count(), s.itl.count(), s.lag.count()), (1, 1, 2));
    // One output token: a TTFT, no ITL.
    let mut one = r.clone();
    one.tokens.output = Some(1);
    s.observe(&one);
    assert_eq!((s.ttft.count(), s.itl.count()), (2, 1));
}

#[test]
fn the_progress_line_format() {
    let snap = LiveSnapshot {
        ttft_p50_ms: Some(12.345),
        ttft_p99_ms: Some(150.2),
        itl_p50_ms: Some(1.049),
        itl_p99_ms: Some(2.1),
        lag_p99_ms: None,
    };
    assert_eq!(
        progress_line("profiling", 40, 100, 2, &snap),
        "inferbench: profiling: 40/100 requests done, 2 errors · \
         TTFT p50 12.3 p99 150 ms · ITL p50 1.05 p99 2.10 ms · lag p99 - ms"
    );
    // No planned count (a duration-bounded run): no "/0".
    assert!(
        progress_line("profiling", 7, 0, 0, &LiveSnapshot::default())
            .starts_with("inferbench: profiling: 7 requests done, 0 errors · TTFT p50 - p99 - ms")
    );
}
