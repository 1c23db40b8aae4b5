use super::*;

#[test]
fn iso_times_by_hand() {
    // 2025-06-01 is day 20240 after 1970-01-01 (55 years, 14 leap days, 151 days into 2025).
    let day = 20_240.0 * 86_400.0;
    assert_eq!(parse_ts("2025-06-01T00:00:00Z"), Some(day));
    assert_eq!(parse_ts("2025-06-01T10:00:02Z"), Some(day + 36_002.0));
    assert_eq!(parse_ts("2025-06-01T10:00:02"), Some(day + 36_002.0));
    assert_eq!(parse_ts("2025-06-01T12:00:02+02:00"), Some(day + 36_002.0));
    assert_eq!(
        parse_ts("2025-06-01 10:00:02.250-0030"),
        Some(day + 36_002.25 + 1800.0)
    );
    assert_eq!(parse_ts("1970-01-01"), Some(0.0));
    for bad in [
        "",
        "June 1st",
        "2025-13-01T00:00:00Z",
        "2025-06-01T10:00:02Q",
        "2025-06-01T1",
    ] {
        assert_eq!(parse_ts(bad), None, "{bad}");
    }
}

#[test]
fn safe_ids_replace_runs_of_other_characters() {
    assert_eq!(safe_id("claude:abc/def"), "claude_abc_def");
    assert_eq!(safe_id("a::b"), "a_b");
    assert_eq!(safe_id(&"x".repeat(200)).len(), 150);
}

#[test]
fn block_ids_keep_the_reported_prefix() {
    // Rounds of 130, 200 (prefix 150) and 100 (prefix 10: compaction) tokens, block 64.
    let mk = |input, prefix| Round {
        line: 1,
        round_index: 0,
        model: None,
        input,
        prefix,
        output: 1,
        submitted: Some(0.0),
        api: None,
        stamps: vec![],
        spawn_calls: vec![],
        codex_spawns: vec![],
        codex_waits: vec![],
    };
    let rounds = [mk(130, 0), mk(200, 150), mk(100, 10)];
    let refs: Vec<&Round> = rounds.iter().collect();
    let mut next = 1;
    let c = calls("f", &refs, 64, &mut next, 0.0);
    let ids: Vec<Vec<i64>> = c.iter().map(|c| c.hash_ids.clone()).collect();
    assert_eq!(ids, [vec![1, 2], vec![1, 2, 3], vec![4]]);
    assert_eq!(next, 5);
}
