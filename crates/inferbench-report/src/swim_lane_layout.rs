//! The geometry of the swim-lane chart as pure functions of time spans: which slot a session
//! tree takes, which row a request takes inside its session, and the active/idle step
//! curves. The rules are AIPerf 0.13's (`aiperf analyze swim-lane`): greedy first-fit
//! everywhere, a slot or row free again from the instant its last occupant ended.
//!
//! Times are integers (nanoseconds since the first request start) so ties are exact.

use std::collections::HashMap;

/// `[start, end)` in nanoseconds.
pub type Span = (i64, i64);

/// Greedy first-fit over items taken by start time (ties keep input order): each item goes
/// to the lowest row whose previous item ended at or before its start. Returns the row of
/// each item (input order) and the number of rows used.
pub fn pack_rows(spans: &[Span]) -> (Vec<usize>, usize) {
    let mut order: Vec<usize> = (0..spans.len()).collect();
    order.sort_by_key(|&i| spans[i].0);
    let mut row_ends: Vec<i64> = Vec::new();
    let mut rows = vec![0; spans.len()];
    for i in order {
        let (start, end) = spans[i];
        match row_ends.iter().position(|&e| start >= e) {
            Some(r) => {
                row_ends[r] = end;
                rows[i] = r;
            }
            None => {
                row_ends.push(end);
                rows[i] = row_ends.len() - 1;
            }
        }
    }
    (rows, row_ends.len())
}

/// The union of the spans, sorted: the gaps between the pieces are when a session waited
/// between its requests. Touching spans merge.
pub fn merged(spans: &[Span]) -> Vec<Span> {
    let mut v = spans.to_vec();
    v.sort();
    let mut out: Vec<Span> = Vec::new();
    for (s, e) in v {
        match out.last_mut() {
            Some(last) if s <= last.1 => last.1 = last.1.max(e),
            _ => out.push((s, e)),
        }
    }
    out
}

/// How many spans are open, as a step function: `(t, count from t on)`, one point per
/// distinct event time. A span ending when another starts does not overlap it.
pub fn step_counts(spans: &[Span]) -> Vec<(i64, i64)> {
    let mut events: Vec<(i64, i64)> = spans.iter().flat_map(|&(s, e)| [(s, 1), (e, -1)]).collect();
    events.sort();
    let mut out: Vec<(i64, i64)> = Vec::new();
    let mut n = 0;
    for (t, d) in events {
        n += d;
        match out.last_mut() {
            Some(last) if last.0 == t => last.1 = n,
            _ => out.push((t, n)),
        }
    }
    out
}

/// The value of a step function at `t` (0 before its first point).
pub fn step_at(curve: &[(i64, i64)], t: i64) -> i64 {
    match curve.partition_point(|p| p.0 <= t) {
        0 => 0,
        k => curve[k - 1].1,
    }
}

/// `a − b` on the union of their event times, never below 0: alive sessions minus active
/// requests is the idle-session curve.
pub fn subtract_steps(a: &[(i64, i64)], b: &[(i64, i64)]) -> Vec<(i64, i64)> {
    let mut ts: Vec<i64> = a.iter().chain(b).map(|p| p.0).collect();
    ts.sort_unstable();
    ts.dedup();
    ts.into_iter()
        .map(|t| (t, (step_at(a, t) - step_at(b, t)).max(0)))
        .collect()
}

/// What the layout needs of one session (one `x_correlation_id`).
#[derive(Clone, Debug, Default)]
pub struct SessionKey {
    pub id: String,
    /// The first non-empty `root_correlation_id` among its requests.
    pub root: Option<String>,
    /// The first non-empty `parent_correlation_id` among its requests.
    pub parent: Option<String>,
    /// Any request at `agent_depth > 0`.
    pub is_sub: bool,
    /// Its requests' spans, in turn order.
    pub turns: Vec<Span>,
}

impl SessionKey {
    /// First start to last end (the last turn by index need not end last).
    pub fn span(&self) -> Span {
        let s = self.turns.iter().map(|t| t.0).min().unwrap_or(0);
        let e = self.turns.iter().map(|t| t.1).max().unwrap_or(0);
        (s, e)
    }
}

/// The lane key of each session: its `root_correlation_id` when the export has any (one lane
/// per session tree); otherwise the top of its `parent_correlation_id` chain, or the absent
/// parent itself when the chain leaves the export (a phantom root shared by its orphans).
pub fn lane_keys(sessions: &[SessionKey]) -> Vec<String> {
    if sessions.iter().any(|s| s.root.is_some()) {
        return sessions
            .iter()
            .map(|s| s.root.clone().unwrap_or_else(|| s.id.clone()))
            .collect();
    }
    let parent: HashMap<&str, Option<&str>> = sessions
        .iter()
        .map(|s| (s.id.as_str(), s.parent.as_deref()))
        .collect();
    sessions
        .iter()
        .map(|s| {
            let mut seen = vec![s.id.as_str()];
            let mut cur = s.id.as_str();
            while let Some(Some(next)) = parent.get(cur) {
                if *next == cur || !parent.contains_key(next) || seen.contains(next) {
                    break;
                }
                cur = next;
                seen.push(cur);
            }
            match parent.get(cur).copied().flatten() {
                None => cur.to_string(),
                // A cycle in a malformed export: the session keeps a lane of its own.
                Some(top) if seen.contains(&top) => s.id.clone(),
                Some(top) => top.to_string(),
            }
        })
        .collect()
}

/// One session's rows inside its lane.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Member {
    /// Index into the sessions given to [`lane_groups`].
    pub session: usize,
    pub is_sub: bool,
    /// First row of the lane the session occupies.
    pub row0: usize,
    /// Rows its own overlapping requests need.
    pub rows: usize,
    /// Each request's row within the session (turn order).
    pub depths: Vec<usize>,
}

/// One lane: a root session with its subagent sessions nested below it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct LaneGroup {
    pub key: String,
    pub slot: usize,
    pub rows: usize,
    pub span: Span,
    /// The root session first (absent for a phantom root), then subagents by start.
    pub members: Vec<Member>,
}

/// Lanes in slot-assignment order (by start time; ties in order of first appearance).
pub fn lane_groups(sessions: &[SessionKey]) -> Vec<LaneGroup> {
    let keys = lane_keys(sessions);
    let mut order: Vec<String> = Vec::new();
    let mut members_of: HashMap<&str, Vec<usize>> = HashMap::new();
    for (i, k) in keys.iter().enumerate() {
        if !members_of.contains_key(k.as_str()) {
            order.push(k.clone());
        }
        members_of.entry(k.as_str()).or_default().push(i);
    }
    let spans: Vec<Span> = order
        .iter()
        .map(|k| {
            let ms = &members_of[k.as_str()];
            let s = ms.iter().map(|&m| sessions[m].span().0).min().unwrap_or(0);
            let e = ms.iter().map(|&m| sessions[m].span().1).max().unwrap_or(0);
            (s, e)
        })
        .collect();
    let (slots, _) = pack_rows(&spans);
    let mut by_start: Vec<usize> = (0..order.len()).collect();
    by_start.sort_by_key(|&g| spans[g].0);
    by_start
        .into_iter()
        .map(|g| {
            let key = &order[g];
            let ms = &members_of[key.as_str()];
            let root = ms.iter().copied().find(|&m| sessions[m].id == *key);
            let mut members = Vec::new();
            let mut root_rows = 0;
            if let Some(r) = root {
                let (depths, rows) = pack_rows(&sessions[r].turns);
                root_rows = rows;
                members.push(Member {
                    session: r,
                    is_sub: sessions[r].is_sub,
                    row0: 0,
                    rows,
                    depths,
                });
            }
            let mut kids: Vec<usize> = ms.iter().copied().filter(|&m| Some(m) != root).collect();
            kids.sort_by_key(|&k| sessions[k].span().0);
            // Child rows below the root's: the lowest window of rows all free at the
            // subagent's start (rows past the end are free).
            let mut row_ends: Vec<i64> = Vec::new();
            for k in kids {
                let (depths, rows) = pack_rows(&sessions[k].turns);
                let (start, end) = sessions[k].span();
                let row = (0..=row_ends.len())
                    .find(|&r| (r..r + rows).all(|j| row_ends.get(j).is_none_or(|&e| e <= start)))
                    .unwrap_or(row_ends.len());
                if row_ends.len() < row + rows {
                    row_ends.resize(row + rows, 0);
                }
                row_ends[row..row + rows].fill(end);
                members.push(Member {
                    session: k,
                    is_sub: true,
                    row0: root_rows + row,
                    rows,
                    depths,
                });
            }
            LaneGroup {
                key: key.clone(),
                slot: slots[g],
                rows: root_rows + row_ends.len(),
                span: spans[g],
                members,
            }
        })
        .collect()
}

#[cfg(test)]
#[path = "swim_lane_layout_tests.rs"]
mod tests;
