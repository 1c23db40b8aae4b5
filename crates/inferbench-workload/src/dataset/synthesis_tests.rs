//! Expected values worked out by hand from the rules in `synthesis.rs`'s doc comment.

use super::*;
use crate::synthetic::rng_for;

fn row(ids: &[i64], isl: u64, ts: Option<f64>, out: Option<u64>) -> SynthRow {
    SynthRow {
        hash_ids: Some(ids.to_vec()),
        input_length: Some(isl),
        timestamp_ms: ts,
        output_length: out,
    }
}

fn run(rows: &mut [SynthRow], s: &SynthesisPlan, block: u64) -> Result<(), (usize, String)> {
    synthesize(rows, s, block, &mut rng_for(7, "dataset.synthesis"))
}

#[test]
fn prefix_prompt_time_and_output_follow_aiperf() {
    // Block 4. Id 1 occurs twice (shared), 2 and 3 once. m = 2: new ids start after
    // (1 + 1) × 2 = 4. Row A: prefix [1] → [2, 3] (8 tokens); prompt 10 − 4 = 6 → 9
    // tokens on ceil(9/4) = 3 fresh ids 5, 6, 7; ISL 8 + 9 = 17. Row B the same with 8, 9, 10.
    let s = SynthesisPlan {
        speedup_ratio: 2.0,
        prefix_len_multiplier: 2.0,
        prompt_len_multiplier: 1.5,
        output_len_multiplier: 1.5,
        ..Default::default()
    };
    let mut rows = vec![
        row(&[1, 2], 10, Some(100.0), Some(2)),
        row(&[1, 3], 10, Some(201.0), Some(3)),
    ];
    run(&mut rows, &s, 4).unwrap();
    assert_eq!(rows[0].hash_ids, Some(vec![2, 3, 5, 6, 7]));
    assert_eq!(rows[1].hash_ids, Some(vec![2, 3, 8, 9, 10]));
    assert_eq!(rows[0].input_length, Some(17));
    assert_eq!(rows[1].input_length, Some(17));
    // 100 / 2 = 50; 201 / 2 = 100.5 → 100.
    assert_eq!(rows[0].timestamp_ms, Some(50.0));
    assert_eq!(rows[1].timestamp_ms, Some(100.0));
    // 2 × 1.5 = 3; 3 × 1.5 = 4.5 → 4 (half to even).
    assert_eq!(rows[0].output_length, Some(3));
    assert_eq!(rows[1].output_length, Some(4));

    // The same with --synthesis-max-isl 16: the grown rows are capped at 16.
    let capped = SynthesisPlan {
        max_isl: Some(16),
        ..s
    };
    let mut rows = vec![row(&[1, 2], 10, None, None), row(&[1, 3], 10, None, None)];
    run(&mut rows, &capped, 4).unwrap();
    assert_eq!(rows[0].input_length, Some(16));
    assert_eq!(rows[1].input_length, Some(16));
}

#[test]
fn fractional_stretch_adds_fresh_prefix_blocks() {
    // Shared {1, 2}; m = 1, new ids after 3. Multiplier 1.5: ceil(2 × 1.5) = 3 prefix
    // blocks: [1, 2] + fresh 4 (12 tokens). A: prompt 12 − 8 = 4 → id 5, ISL 16.
    // B: [1, 2] + fresh 6, prompt 10 − 8 = 2 → id 7, ISL 14.
    let s = SynthesisPlan {
        prefix_len_multiplier: 1.5,
        ..Default::default()
    };
    let mut rows = vec![
        row(&[1, 2, 5], 12, None, None),
        row(&[1, 2, 6], 10, None, None),
    ];
    run(&mut rows, &s, 4).unwrap();
    assert_eq!(rows[0].hash_ids, Some(vec![1, 2, 4, 5]));
    assert_eq!(rows[0].input_length, Some(16));
    assert_eq!(rows[1].hash_ids, Some(vec![1, 2, 6, 7]));
    assert_eq!(rows[1].input_length, Some(14));
}

#[test]
fn squeeze_keeps_at_least_one_prefix_block() {
    // Nothing shared: new ids after (0 + 1) × 1 = 1. Multiplier 0.5 keeps max(1, 0) = 1
    // block of prefix (no id, 4 tokens) as AIPerf does. A: prompt 3 → id 2, ISL 4 + 3 = 7.
    // B: prompt 4 → id 3, ISL 8. A row without hash_ids is left alone.
    let s = SynthesisPlan {
        prefix_len_multiplier: 0.5,
        ..Default::default()
    };
    let plain = SynthRow {
        hash_ids: None,
        input_length: Some(9),
        timestamp_ms: Some(5.0),
        output_length: None,
    };
    let mut rows = vec![
        row(&[7], 3, None, None),
        row(&[8], 4, None, None),
        plain.clone(),
    ];
    run(&mut rows, &s, 4).unwrap();
    assert_eq!(rows[0].hash_ids, Some(vec![2]));
    assert_eq!(rows[0].input_length, Some(7));
    assert_eq!(rows[1].hash_ids, Some(vec![3]));
    assert_eq!(rows[1].input_length, Some(8));
    assert_eq!(rows[2], plain);
    // Squeezing 4 shared blocks by 0.5 keeps the first 2.
    let mut rows = vec![
        row(&[1, 2, 3, 4], 16, None, None),
        row(&[1, 2, 3, 4], 16, None, None),
    ];
    run(&mut rows, &s, 4).unwrap();
    assert_eq!(rows[0].hash_ids, Some(vec![1, 2]));
    assert_eq!(rows[0].input_length, Some(8));
}

#[test]
fn root_multiplier_moves_rows_to_other_trees() {
    // Shared {1, 2}, prompt 0 tokens: ids stay [1, 2], last new id 3, tree offset 4.
    // Tree t adds 4t: [1, 2], [5, 6] or [9, 10].
    let s = SynthesisPlan {
        prefix_root_multiplier: 3,
        ..Default::default()
    };
    let mut rows: Vec<SynthRow> = (0..30).map(|_| row(&[1, 2], 8, None, None)).collect();
    run(&mut rows, &s, 4).unwrap();
    let mut seen = HashSet::new();
    for r in &rows {
        let ids = r.hash_ids.clone().unwrap();
        assert!(
            [vec![1, 2], vec![5, 6], vec![9, 10]].contains(&ids),
            "{ids:?}"
        );
        assert_eq!(r.input_length, Some(8));
        seen.insert(ids);
    }
    assert_eq!(seen.len(), 3);
    // Seeded: the same seed gives the same trees.
    let mut again: Vec<SynthRow> = (0..30).map(|_| row(&[1, 2], 8, None, None)).collect();
    run(&mut again, &s, 4).unwrap();
    assert_eq!(again, rows);
}

#[test]
fn identity_is_untouched_and_short_rows_are_an_error() {
    let caps = SynthesisPlan {
        max_isl: Some(1),
        max_osl: Some(1),
        ..Default::default()
    };
    let mut rows = vec![row(&[1], 10, Some(3.0), Some(9))];
    let before = rows.clone();
    run(&mut rows, &caps, 4).unwrap();
    assert_eq!(rows, before);
    // Two shared blocks of 4 need at least 8 tokens.
    let s = SynthesisPlan {
        speedup_ratio: 2.0,
        ..Default::default()
    };
    let mut rows = vec![row(&[1, 2], 5, None, None), row(&[1, 2], 8, None, None)];
    let (i, m) = run(&mut rows, &s, 4).unwrap_err();
    assert_eq!(i, 0);
    assert!(m.contains("shorter than its 2 shared prefix blocks"), "{m}");
}

#[test]
fn max_isl_drops_rows_and_max_osl_caps_outputs() {
    let s = SynthesisPlan {
        max_isl: Some(100),
        max_osl: Some(10),
        ..Default::default()
    };
    assert!(keep_row(&s, Some(100)));
    assert!(!keep_row(&s, Some(101)));
    assert!(keep_row(&s, None));
    assert_eq!(cap_output(&s, Some(11)), Some(10));
    assert_eq!(cap_output(&s, Some(9)), Some(9));
    assert_eq!(cap_output(&s, None), None);
}

#[test]
fn delay_cap_clamps_only_longer_delays() {
    use super::super::TurnSpec;
    let turn = |d: Option<f64>| TurnSpec {
        delay_ms: d,
        ..Default::default()
    };
    let mut convs = vec![Conv {
        id: "a".into(),
        history: true,
        turns: vec![turn(None), turn(Some(500.0)), turn(Some(2500.0))],
    }];
    cap_delays(&mut convs, Some(1.5));
    let d: Vec<Option<f64>> = convs[0].turns.iter().map(|t| t.delay_ms).collect();
    assert_eq!(d, vec![None, Some(500.0), Some(1500.0)]);
}
