use super::*;

fn call(t: f64, api: Option<f64>) -> Call {
    Call {
        file: "f".into(),
        line: 1,
        t,
        model: "m".into(),
        input: 1,
        output: 1,
        hash_ids: vec![],
        api_time: api,
        think_time: None,
    }
}

#[test]
fn idle_gaps_are_end_to_start_and_never_negative() {
    assert_eq!(end_to_start_ms(5000.0, &call(0.0, Some(1.0))), 4000.0);
    // Overlap (the next call started before the previous ended): at once.
    assert_eq!(end_to_start_ms(500.0, &call(0.0, Some(1.0))), 0.0);
    // No or a non-finite api time: start to start.
    assert_eq!(end_to_start_ms(500.0, &call(0.0, None)), 500.0);
    assert_eq!(end_to_start_ms(500.0, &call(0.0, Some(f64::NAN))), 500.0);
}

#[test]
fn subagent_ends_from_duration_else_calls() {
    let s = |d: Option<f64>, calls: Vec<Call>| Subagent {
        line: 1,
        t: 2.0,
        agent_id: "a".into(),
        duration_ms: d,
        calls,
    };
    assert_eq!(subagent_end(&s(Some(1500.0), vec![])), 3.5);
    assert_eq!(subagent_end(&s(Some(-5.0), vec![])), 2.0);
    // Without a duration: the last call's end; a call at 0.5 (< 2.0) is relative: 2.5 + 1.
    assert_eq!(
        subagent_end(&s(None, vec![call(3.0, Some(0.25)), call(0.5, Some(1.0))])),
        3.5
    );
    assert_eq!(subagent_end(&s(None, vec![])), 2.0);
}
