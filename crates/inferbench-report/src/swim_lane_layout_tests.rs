use super::*;

fn key(id: &str, turns: &[Span]) -> SessionKey {
    SessionKey {
        id: id.into(),
        turns: turns.to_vec(),
        ..SessionKey::default()
    }
}

#[test]
fn three_sessions_reuse_a_slot_once_its_occupant_ended() {
    // A [0,10), B [2,6), C [6,12): C starts when B ends, so C reuses B's slot 1;
    // A still runs at 6, so slot 0 is not free.
    let (slots, n) = pack_rows(&[(0, 10), (2, 6), (6, 12)]);
    assert_eq!(slots, vec![0, 1, 1]);
    assert_eq!(n, 2);
    // Given out of start order: the earliest start takes slot 0 whatever its position.
    let (slots, n) = pack_rows(&[(5, 9), (0, 4), (1, 3)]);
    assert_eq!(slots, vec![0, 0, 1]);
    assert_eq!(n, 2);
}

#[test]
fn overlapping_turns_of_one_session_stack_in_sub_rows() {
    // Turns [0,5), [1,3), [3,4), [5,6): the second overlaps the first (row 1), the third
    // starts when the second ends (row 1 again), the fourth when the first ends (row 0).
    let (rows, n) = pack_rows(&[(0, 5), (1, 3), (3, 4), (5, 6)]);
    assert_eq!(rows, vec![0, 1, 1, 0]);
    assert_eq!(n, 2);
}

#[test]
fn merged_spans_leave_the_waits_between_requests() {
    assert_eq!(
        merged(&[(5, 7), (0, 2), (1, 3), (7, 8)]),
        vec![(0, 3), (5, 8)]
    );
}

#[test]
fn active_and_idle_curves_at_given_instants() {
    // Session X: requests [0,2) and [5,7) (alive 0..7). Session Y: [1,3) (alive 1..3).
    let requests = [(0, 2), (5, 7), (1, 3)];
    let alive = [(0, 7), (1, 3)];
    let active = step_counts(&requests);
    assert_eq!(active, vec![(0, 1), (1, 2), (2, 1), (3, 0), (5, 1), (7, 0)]);
    let idle = subtract_steps(&step_counts(&alive), &active);
    // t=0.5: X active, Y not born: idle 0. t=2.5: X waits, Y active: idle 1.
    // t=4: X waits alone: idle 1. t=6: X active: 0. t=8: nothing alive: 0.
    let at = |t| step_at(&idle, t);
    assert_eq!([at(0), at(2), at(4), at(6), at(8)], [0, 1, 1, 0, 0]);
    assert_eq!(step_at(&active, -1), 0);
    // A request ending when the next starts: never counted twice.
    assert_eq!(step_counts(&[(0, 4), (4, 6)]), vec![(0, 1), (4, 1), (6, 0)]);
}

#[test]
fn root_correlation_ids_group_trees_into_one_lane() {
    let mut root = key("r1", &[(0, 10)]);
    root.root = Some("r1".into());
    let mut sub = key("s1", &[(2, 4)]);
    sub.root = Some("r1".into());
    sub.is_sub = true;
    let mut orphan = key("s2", &[(1, 3)]);
    orphan.root = Some("gone".into());
    orphan.is_sub = true;
    let other = key("r2", &[(3, 5)]);
    assert_eq!(
        lane_keys(&[root, sub, orphan, other]),
        vec!["r1", "r1", "gone", "r2"]
    );
}

#[test]
fn without_root_ids_the_parent_chain_is_walked() {
    let mk = |id: &str, parent: Option<&str>| SessionKey {
        id: id.into(),
        parent: parent.map(Into::into),
        turns: vec![(0, 1)],
        ..SessionKey::default()
    };
    // a ← b ← c: both lead to a; d's parent "p" is absent: d keys on "p";
    // e ↔ f is a cycle: each keeps its own id.
    let s = [
        mk("a", None),
        mk("b", Some("a")),
        mk("c", Some("b")),
        mk("d", Some("p")),
        mk("e", Some("f")),
        mk("f", Some("e")),
    ];
    assert_eq!(lane_keys(&s), vec!["a", "a", "a", "p", "e", "f"]);
}

#[test]
fn subagents_nest_below_their_root_and_reuse_child_rows() {
    // Root R: turns [0,10) and [2,4) overlap → 2 rows. Subagents: S1 [1,3), S2 [2,6)
    // overlap → child rows 0 and 1 (lane rows 2 and 3); S3 [3,5) starts when S1 ended →
    // child row 0 again. A phantom lane "P" has one orphan subagent O [20,21) at row 0.
    let mut r = key("R", &[(0, 10), (2, 4)]);
    r.root = Some("R".into());
    let sub = |id: &str, root: &str, span: Span| {
        let mut k = key(id, &[span]);
        k.root = Some(root.into());
        k.is_sub = true;
        k
    };
    let s = [
        r,
        sub("S1", "R", (1, 3)),
        sub("S2", "R", (2, 6)),
        sub("S3", "R", (3, 5)),
        sub("O", "P", (20, 21)),
    ];
    let g = lane_groups(&s);
    assert_eq!(g.len(), 2);
    assert_eq!((g[0].key.as_str(), g[0].slot, g[0].rows), ("R", 0, 4));
    assert_eq!(g[0].span, (0, 10));
    let placed: Vec<(usize, usize, usize)> = g[0]
        .members
        .iter()
        .map(|m| (m.session, m.row0, m.rows))
        .collect();
    assert_eq!(placed, vec![(0, 0, 2), (1, 2, 1), (2, 3, 1), (3, 2, 1)]);
    assert_eq!(g[0].members[0].depths, vec![0, 1]);
    // The phantom lane starts at 20, after R ended at 10: slot 0 again, no root member.
    assert_eq!((g[1].key.as_str(), g[1].slot, g[1].rows), ("P", 0, 1));
    assert_eq!(g[1].members.len(), 1);
    assert_eq!((g[1].members[0].row0, g[1].members[0].is_sub), (0, true));
}
