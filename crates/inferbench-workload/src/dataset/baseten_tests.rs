use super::*;
use rand::SeedableRng;
use rand_chacha::ChaCha8Rng;

fn r(n: usize, ts: u64, session: Option<&str>) -> Row {
    Row {
        row: n,
        timestamp_ms: ts,
        prompt: format!("p{n}"),
        input_tokens: 1,
        output_tokens: 1,
        total_hashes: vec![],
        block_size: None,
        session: session.map(String::from),
        duration_e2e_ms: None,
    }
}

#[test]
fn idle_gaps_reflow_by_hand() {
    // Positional order kept; in time order 0, 100, 5000, 5100, 20000 with a 1 s cap:
    // gaps 100, 4900→1000, 100, 14900→1000.
    let mut t = vec![5000.0, 0.0, 20000.0, 100.0, 5100.0];
    reflow_idle_gaps(&mut t, 1000.0);
    assert_eq!(t, [1100.0, 0.0, 2200.0, 100.0, 1200.0]);
    // The earliest time stays (the leading offset is not trimmed); ties stay ties; a
    // sub-millisecond cap rounds up to 1 ms; fractional times are truncated first.
    let mut t = vec![300.7, 300.2, 900.0];
    reflow_idle_gaps(&mut t, 0.4);
    assert_eq!(t, [300.0, 300.0, 301.0]);
    let mut empty: Vec<f64> = vec![];
    reflow_idle_gaps(&mut empty, 1.0);
}

#[test]
fn the_session_column_prefers_the_configured_then_the_other() {
    let both = vec![PROVIDED.to_string(), POOR_MAN.to_string()];
    assert_eq!(session_column(&both, None), Some(PROVIDED));
    assert_eq!(session_column(&both, Some(POOR_MAN)), Some(POOR_MAN));
    let poor = vec![POOR_MAN.to_string()];
    assert_eq!(session_column(&poor, None), Some(POOR_MAN));
    assert_eq!(session_column(&[], None), None);
}

#[test]
fn sampling_keeps_at_least_one_session_and_whole_ones() {
    let rows = vec![
        r(1, 10, Some("a")),
        r(2, 5, Some("b")),
        r(3, 20, Some("a")),
        r(4, 0, None),
    ];
    // A tiny ratio: nothing drawn, so one session is chosen at random, whole.
    for seed in 0..10 {
        let kept = sample(rows.clone(), 1e-12, &mut ChaCha8Rng::seed_from_u64(seed));
        let ids: Vec<usize> = kept.iter().map(|r| r.row).collect();
        assert!(ids == [1, 3] || ids == [2], "seed {seed}: {ids:?}");
    }
    // Ratio just under 1: everything (each draw is < 1 − 1e-12 but for a vanishing chance).
    let kept = sample(rows.clone(), 1.0 - 1e-12, &mut ChaCha8Rng::seed_from_u64(1));
    assert_eq!(kept, rows);
    // Rows without a session only: each drawn alone; none kept is possible.
    let nulls = vec![r(1, 0, None), r(2, 1, None)];
    assert!(sample(nulls, 1e-12, &mut ChaCha8Rng::seed_from_u64(3)).is_empty());
}
