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
