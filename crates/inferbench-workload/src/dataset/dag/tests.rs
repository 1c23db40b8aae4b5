use super::*;
use serde_json::json;

#[test]
fn bare_spawns_group_and_objects_stand_alone() {
    let turn = json!({"messages": [{"role": "user", "content": "x"}],
        "spawns": ["a", "b", {"children": ["c"], "join_at": 3}, "d"]});
    let obj = turn.as_object().unwrap();
    let r = Row::new("f", 1, obj);
    let (_, forks, spawns) = parse_turn(&r, obj).unwrap();
    assert!(forks.is_empty());
    assert_eq!(
        spawns,
        [
            (vec!["a".to_string(), "b".to_string()], None),
            (vec!["c".to_string()], Some(3)),
            (vec!["d".to_string()], None),
        ]
    );
}

#[test]
fn detection_needs_messages_forks_or_spawns() {
    let yes = json!({"session_id": "s", "turns": [{"messages": []}]});
    let no = json!({"session_id": "s", "turns": [{"text": "hi"}]});
    assert!(looks_dag(yes.as_object().unwrap()));
    assert!(!looks_dag(no.as_object().unwrap()));
}
