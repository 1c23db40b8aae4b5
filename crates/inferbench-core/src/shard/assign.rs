//! Which shard runs which session. The unit is the session (a conversation's turns depend
//! on earlier replies, so they stay on one shard); sessions are taken in schedule order and
//! each goes to the shard with the least work so far (its requests), ties to the lowest
//! index. With single-turn sessions this is round robin over the time-ordered arrivals
//! (session k → shard k mod N): every shard sees the whole time span at rate R/N, and the
//! union of the shards is the schedule. Online, so an open-ended schedule shards the same.

/// The greedy least-loaded assignment, one session at a time.
#[derive(Clone, Debug)]
pub struct Assigner {
    loads: Vec<u64>,
}

impl Assigner {
    /// `count` shards (at least 1).
    pub fn new(count: u32) -> Self {
        Assigner {
            loads: vec![0; count.max(1) as usize],
        }
    }

    /// The shard of the next session, whose work is `work` requests (its turns).
    pub fn assign(&mut self, work: u64) -> u32 {
        let mut best = 0;
        for (i, &l) in self.loads.iter().enumerate() {
            if l < self.loads[best] {
                best = i;
            }
        }
        self.loads[best] += work;
        best as u32
    }

    /// Requests assigned to each shard so far.
    pub fn loads(&self) -> &[u64] {
        &self.loads
    }
}

/// The shard of every session of `works` (in schedule order).
pub fn assign_all(works: impl IntoIterator<Item = u64>, count: u32) -> Vec<u32> {
    let mut a = Assigner::new(count);
    works.into_iter().map(|w| a.assign(w)).collect()
}

/// Shard `index`'s share of `total` (a concurrency, a request count): `total / N`, the first
/// `total mod N` shards one more, so the shares add up to `total`.
pub fn share(total: u64, count: u32, index: u32) -> u64 {
    let n = u64::from(count.max(1));
    total / n + u64::from(u64::from(index) < total % n)
}

/// Shard `index`'s concurrency out of `total`: N independent closed loops of C/N. Every
/// shard needs at least one slot; the error names the flag.
pub fn split_concurrency(
    total: usize,
    count: u32,
    index: u32,
    flag: &str,
) -> Result<usize, String> {
    if (total as u64) < u64::from(count) {
        return Err(format!(
            "{flag} {total} with --shard-count {count}: every shard needs at least one slot"
        ));
    }
    Ok(share(total as u64, count, index) as usize)
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    #[test]
    fn single_turn_sessions_go_round_robin() {
        assert_eq!(assign_all([1; 7], 3), [0, 1, 2, 0, 1, 2, 0]);
    }

    #[test]
    fn a_long_conversation_keeps_its_shard_busy() {
        // Loads: 4 → shard 0; [4,0] → 1 gets 1; [4,1] → 1; [4,2] → 1; [4,3] → 1 (3 < 4);
        // [4,4] tie → 0.
        assert_eq!(assign_all([4, 1, 1, 1, 1, 1], 2), [0, 1, 1, 1, 1, 0]);
    }

    #[test]
    fn shares_add_up_and_differ_by_one_at_most() {
        assert_eq!(
            (0..4).map(|i| share(10, 4, i)).collect::<Vec<_>>(),
            [3, 3, 2, 2]
        );
        assert_eq!(split_concurrency(8, 3, 0, "--concurrency"), Ok(3));
        assert_eq!(split_concurrency(8, 3, 2, "--concurrency"), Ok(2));
        let e = split_concurrency(2, 3, 0, "--concurrency").unwrap_err();
        assert!(e.contains("--concurrency 2 with --shard-count 3"), "{e}");
    }

    proptest! {
        #[test]
        fn shards_are_disjoint_cover_the_schedule_and_balance(
            works in proptest::collection::vec(1u64..6, 0..200),
            n in 1u32..9,
        ) {
            let a = assign_all(works.iter().copied(), n);
            // Every session has exactly one shard, in range; the same input gives the same
            // assignment.
            prop_assert_eq!(a.len(), works.len());
            prop_assert!(a.iter().all(|&s| s < n));
            prop_assert_eq!(&a, &assign_all(works.iter().copied(), n));
            // Loads add up to the schedule's requests and differ by at most one session's
            // work (the greedy bound).
            let mut loads = vec![0u64; n as usize];
            for (w, s) in works.iter().zip(&a) {
                loads[*s as usize] += w;
            }
            prop_assert_eq!(loads.iter().sum::<u64>(), works.iter().sum::<u64>());
            let max_w = works.iter().copied().max().unwrap_or(0);
            let (lo, hi) = (loads.iter().min().unwrap(), loads.iter().max().unwrap());
            prop_assert!(hi - lo <= max_w, "{loads:?}");
        }

        #[test]
        fn unit_work_is_exactly_round_robin(k in 0usize..300, n in 1u32..9) {
            let a = assign_all(std::iter::repeat_n(1, k), n);
            for (i, s) in a.iter().enumerate() {
                prop_assert_eq!(*s as usize, i % n as usize);
            }
        }

        #[test]
        fn shares_sum_to_the_total(total in 0u64..10_000, n in 1u32..17) {
            let s: Vec<u64> = (0..n).map(|i| share(total, n, i)).collect();
            prop_assert_eq!(s.iter().sum::<u64>(), total);
            prop_assert!(s.iter().max().unwrap() - s.iter().min().unwrap() <= 1);
        }
    }
}
