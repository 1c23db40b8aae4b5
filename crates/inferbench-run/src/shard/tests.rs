use std::sync::Arc;

use inferbench_client::engine::LoadMode;
use inferbench_core::plan::{ArrivalKind, RatePlan};
use inferbench_core::schedule::{ArrivalPattern, RateSchedule};
use inferbench_core::shard::{DEFAULT_CLOCK_SAMPLES, DEFAULT_START_TOLERANCE_NS, ShardPlan};
use inferbench_workload::Tokenizer;

use crate::prepare::prepare;

fn tok() -> Arc<Tokenizer> {
    Arc::new(Tokenizer::builtin().unwrap())
}

fn shard(index: u32, count: u32) -> ShardPlan {
    ShardPlan {
        index,
        count,
        start_at_unix_ns: None,
        start_tolerance_ns: DEFAULT_START_TOLERANCE_NS,
        time_reference: None,
        clock_samples: DEFAULT_CLOCK_SAMPLES,
        test_clock_offset_ns: 0,
    }
}

fn rate_plan() -> inferbench_core::RunPlan {
    let mut plan = crate::test_plan::plan();
    plan.load.request_count = 10;
    plan.load.request_count_given = true;
    plan.load.request_rate = Some(RatePlan {
        rate: 100.0,
        pattern: ArrivalKind::Poisson,
        smoothness: None,
        ramp_s: None,
        ceiling: None,
        series: None,
    });
    plan
}

fn sharded(mut plan: inferbench_core::RunPlan, i: u32, n: u32) -> crate::Prepared {
    plan.shard = Some(shard(i, n));
    prepare(&plan, tok()).unwrap()
}

#[test]
fn a_rate_schedule_is_dealt_round_robin_and_its_union_is_the_schedule() {
    let plan = rate_plan();
    let whole = prepare(&plan, tok()).unwrap();
    // The unsharded schedule, computed here as the engine does: the phase's generator and
    // the sampler's draws, session k at offset k.
    let mut sched = RateSchedule::new(
        ArrivalPattern::Poisson,
        100.0,
        None,
        whole.seed,
        "arrivals.profiling",
    )
    .unwrap();
    let offsets: Vec<u64> = (0..10).map(|_| sched.next_offset_ns()).collect();
    let mut order = whole.order().unwrap();
    let convs: Vec<usize> = (0..10).map(|_| order()).collect();
    let mut digests = Vec::new();
    for i in 0..3u32 {
        let p = sharded(plan.clone(), i, 3);
        let ph = p.engine.phases.last().unwrap();
        let LoadMode::Fixed {
            offsets_ns,
            conversations,
            ceiling,
        } = &ph.mode
        else {
            panic!("a sharded rate run is a fixed list: {:?}", ph.mode)
        };
        let mine: Vec<usize> = (0..10).filter(|k| k % 3 == i as usize).collect();
        assert_eq!(
            **offsets_ns,
            mine.iter().map(|&k| offsets[k]).collect::<Vec<_>>()
        );
        assert_eq!(
            **conversations,
            mine.iter().map(|&k| convs[k]).collect::<Vec<_>>()
        );
        assert_eq!(*ceiling, None);
        // 10 = 4 + 3 + 3.
        assert_eq!(ph.request_count, Some([4, 3, 3][i as usize]));
        let s = p.shard.as_ref().unwrap();
        assert_eq!(
            (s.total_sessions, s.sessions, s.requests),
            (
                Some(10),
                Some([4, 3, 3][i as usize]),
                Some([4, 3, 3][i as usize])
            )
        );
        digests.push(s.schedule_sha256.clone());
    }
    assert!(digests.iter().all(|d| d == &digests[0]));
    // Another seed is another schedule.
    let mut other = plan.clone();
    other.random_seed = Some(8);
    assert_ne!(
        sharded(other, 0, 3).shard.unwrap().schedule_sha256,
        digests[0]
    );
}

#[test]
fn a_concurrency_run_splits_its_slots_and_deals_its_sessions() {
    let mut plan = crate::test_plan::plan();
    plan.load.concurrency = 5;
    plan.load.request_count = 9;
    let whole = prepare(&plan, tok()).unwrap();
    let mut order = whole.order().unwrap();
    let draws: Vec<usize> = (0..9).map(|_| order()).collect();
    for (i, (slots, count)) in [(3, 5), (2, 4)].into_iter().enumerate() {
        let p = sharded(plan.clone(), i as u32, 2);
        let ph = p.engine.phases.last().unwrap();
        assert_eq!(
            ph.mode,
            LoadMode::Burst {
                concurrency: slots,
                ramp: None
            }
        );
        assert_eq!(ph.request_count, Some(count));
        // The shard's order: the shared draws at its own positions.
        let mut o = p.order().unwrap();
        let got: Vec<usize> = (0..count).map(|_| o()).collect();
        let want: Vec<usize> = draws.iter().copied().skip(i).step_by(2).collect();
        assert_eq!(got, want);
    }
}

#[test]
fn what_cannot_be_sharded_is_refused_by_name() {
    let mut plan = crate::test_plan::plan();
    plan.load.warmup_request_count = 2;
    plan.shard = Some(shard(0, 2));
    let e = prepare(&plan, tok()).err().unwrap();
    assert!(e.message.contains("--warmup-request-count"), "{e}");

    let mut plan = crate::test_plan::plan();
    plan.load.concurrency = 2;
    plan.shard = Some(shard(0, 3));
    let e = prepare(&plan, tok()).err().unwrap();
    assert!(
        e.message.contains("--concurrency 2 with --shard-count 3"),
        "{e}"
    );

    let mut plan = crate::test_plan::plan();
    plan.shard = Some(shard(3, 3));
    let e = prepare(&plan, tok()).err().unwrap();
    assert!(e.message.contains("--shard-index 3"), "{e}");
}

mod multi_turn {
    use super::super::frozen;
    use inferbench_core::shard::assign::assign_all;
    use proptest::prelude::*;

    proptest! {
        /// A count-limited multi-turn schedule: the shards' sessions, whole, add up to
        /// exactly the count (only the schedule's last session is cut, to the turns left),
        /// every session once, in schedule order, assigned as the whole-session rule says.
        #[test]
        fn the_shards_add_up_to_exactly_the_request_count(
            turns in prop::collection::vec(1u64..6, 1..20),
            limit in 1u64..200,
            count in 1u32..5,
        ) {
            let n = turns.len();
            let mut k = 0usize;
            let mut draw = || {
                let c = k % n;
                k += 1;
                Some((Some(k as u64 * 1000), c))
            };
            let list = frozen(count, &turns, &mut draw, Some(limit), None).unwrap();
            let total: u64 = list.iter().map(|s| s.turns).sum();
            prop_assert_eq!(total, limit);
            let per_shard: u64 = (0..count)
                .map(|i| list.iter().filter(|s| s.shard == i).map(|s| s.turns).sum::<u64>())
                .sum();
            prop_assert_eq!(per_shard, limit);
            // Every session but the last whole; the last cut to what was left, never empty.
            let (last, rest) = list.split_last().unwrap();
            for (i, s) in rest.iter().enumerate() {
                prop_assert_eq!(s.conversation, i % n);
                prop_assert_eq!(s.turns, turns[s.conversation]);
            }
            let before: u64 = rest.iter().map(|s| s.turns).sum();
            prop_assert_eq!(last.turns, limit - before);
            prop_assert!(last.turns >= 1 && last.turns <= turns[last.conversation]);
            // The shards are the whole-session assignment of the same draws.
            let works: Vec<u64> = list.iter().map(|s| turns[s.conversation]).collect();
            let shards: Vec<u32> = list.iter().map(|s| s.shard).collect();
            prop_assert_eq!(shards, assign_all(works, count));
        }
    }

    #[test]
    fn a_worked_case_two_shards_of_three_turn_sessions() {
        // 3 turns each, count 10: sessions 0..3 whole (9 requests), session 3 cut to 1.
        // Whole-session loads: 0→s0 (3), 1→s1 (3), 2→s0 (6), 3→s1 (6).
        let turns = [3u64; 4];
        let mut k = 0usize;
        let mut draw = || {
            k += 1;
            Some((None, k - 1))
        };
        let list = frozen(2, &turns, &mut draw, Some(10), None).unwrap();
        let got: Vec<(usize, u32, u64)> = list
            .iter()
            .map(|s| (s.conversation, s.shard, s.turns))
            .collect();
        assert_eq!(got, [(0, 0, 3), (1, 1, 3), (2, 0, 3), (3, 1, 1)]);
    }
}
