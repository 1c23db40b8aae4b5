use serde_json::json;

use super::*;

fn rec(conv: &str, x: Option<&str>, turn: i64, depth: i64, start: i64, msgs: Value) -> RawTurn {
    RawTurn {
        conv: conv.into(),
        x_corr: x.map(Into::into),
        turn: Some(turn),
        depth,
        start_ns: start,
        messages: msgs.as_array().cloned().unwrap_or_default(),
        ..RawTurn::default()
    }
}

const ALL: Limits = Limits {
    conversations: 100,
    turns: 100,
    chars: 1000,
};

#[test]
fn roots_come_first_then_earliest_and_the_limit_cuts() {
    let recs = vec![
        rec("late-root", Some("x1"), 0, 0, 50, json!([])),
        rec("sub", Some("x2"), 0, 1, 1, json!([])),
        rec("early-root", Some("x3"), 0, 0, 10, json!([])),
        rec("early-root", Some("x3"), 1, 0, 20, json!([])),
    ];
    let p = build(recs.clone(), 1, ALL);
    let ids: Vec<&str> = p.conversations.iter().map(|c| c.id.as_str()).collect();
    // The subagent started first but roots come first.
    assert_eq!(ids, ["early-root", "late-root", "sub"]);
    assert_eq!((p.total_conversations, p.total_turns), (3, 4));
    assert_eq!(p.conversations[2].depth, 1);
    let p = build(
        recs,
        1,
        Limits {
            conversations: 2,
            ..ALL
        },
    );
    assert_eq!(p.conversations.len(), 2);
    assert_eq!(p.total_conversations, 3);
}

#[test]
fn a_second_session_of_a_conversation_is_a_replay() {
    let recs = vec![
        rec("c", Some("b"), 0, 0, 5, json!([])),
        rec("c", Some("a"), 0, 0, 1, json!([])),
        rec("c", Some("a"), 1, 0, 7, json!([])),
        // No correlation id: the second turn 0 of "d" is its replay.
        rec("d", None, 0, 0, 2, json!([])),
        rec("d", None, 0, 0, 3, json!([])),
    ];
    let p = build(recs, 1, ALL);
    let got: Vec<(&str, Option<usize>, usize)> = p
        .conversations
        .iter()
        .map(|c| (c.id.as_str(), c.replay, c.turn_count))
        .collect();
    // Session "a" arrived first (t=1): it is "c" itself; "b" is replay 2.
    assert_eq!(
        got,
        [
            ("c", None, 2),
            ("d", None, 1),
            ("d", Some(2), 1),
            ("c", Some(2), 1)
        ]
    );
}

#[test]
fn turns_beyond_the_limit_are_counted_and_repeated_messages_kept_once() {
    let sys = json!({"role": "system", "content": "be brief"});
    let recs: Vec<RawTurn> = (0..5)
        .map(|t| {
            let mut msgs = vec![sys.clone()];
            msgs.extend((0..=t).map(|k| json!({"role": "user", "content": format!("q{k}")})));
            rec("c", Some("x"), t, 0, t, Value::Array(msgs))
        })
        .rev()
        .collect();
    let p = build(
        recs,
        2,
        Limits {
            turns: 3,
            chars: 2,
            ..ALL
        },
    );
    let c = &p.conversations[0];
    assert_eq!((c.turn_count, c.hidden_turns, c.turns.len()), (5, 2, 3));
    assert_eq!(
        c.turns.iter().map(|t| t.turn).collect::<Vec<_>>(),
        [Some(0), Some(1), Some(2)]
    );
    // Turns 0..2 shown: system, q0, q1, q2 are the distinct messages; turn 2 refers to 4.
    assert_eq!(p.messages.len(), 4);
    assert_eq!(c.turns[2].ids, vec![0, 1, 2, 3]);
    // References count every record: 2+3+4+5+6 = 20; roles over all records: 5 system,
    // 1+2+3+4+5 = 15 user.
    assert_eq!(p.message_refs, 20);
    assert_eq!(
        p.roles,
        vec![("user".to_string(), 15), ("system".to_string(), 5)]
    );
    // "be brief" capped at 2 characters: 6 more.
    assert_eq!(
        p.messages[0],
        Message {
            role: "system".into(),
            len: 8,
            body: "be".into(),
            cut: 6
        }
    );
}

#[test]
fn structured_messages_show_their_json() {
    assert_eq!(
        display(&json!({"role": "user", "content": "hi"})),
        ("user".into(), "hi".into())
    );
    assert_eq!(
        display(&json!({"role": "assistant", "content": null})),
        ("assistant".into(), String::new())
    );
    let (r, b) = display(&json!({"role": "assistant", "tool_calls": [{"id": "t"}]}));
    assert_eq!(
        (r.as_str(), b.as_str()),
        ("assistant", r#"{"tool_calls":[{"id":"t"}]}"#)
    );
    assert_eq!(display(&json!("bare")), ("?".into(), "bare".into()));
    assert_eq!(display(&json!(3)), ("?".into(), "3".into()));
}

#[test]
fn every_user_string_is_escaped() {
    let bad = "</script><b>";
    let mut r = rec(
        bad,
        Some(bad),
        0,
        0,
        0,
        json!([{"role": bad, "content": bad}]),
    );
    r.model = Some(bad.into());
    let page = build(vec![r], 1, ALL);
    let h = html(&page, bad);
    assert!(!h.contains("</script><b>"), "{h}");
    assert_eq!(h.matches("</script>").count(), 1);
    assert!(h.contains("&lt;/script&gt;&lt;b&gt;"));
}

#[test]
fn short_ids_and_thousands() {
    assert_eq!(short_id("abc"), "abc");
    assert_eq!(
        short_id("0123456789abcdef::sa:7"),
        "0123456789\u{2026}::sa:7"
    );
    assert_eq!(thousands(1234567), "1,234,567");
    assert_eq!(thousands(999), "999");
}

#[test]
fn a_bad_line_is_named_and_non_objects_skipped() {
    let e = parse_raw("{}\n\n[1]\n{x\n", "raw.jsonl").unwrap_err();
    assert!(e.starts_with("raw.jsonl:4: "), "{e}");
    assert_eq!(parse_raw("{}\n[1]\n", "f").unwrap().len(), 1);
}
