use super::*;

fn close(a: f64, b: f64) -> bool {
    (a - b).abs() < 1e-9
}

fn line(avg10: f64, total_us: u64) -> PressureLine {
    PressureLine {
        avg10,
        avg60: 0.0,
        avg300: 0.0,
        total_us,
    }
}

fn file(some: Option<PressureLine>, full: Option<PressureLine>) -> Option<PressureFile> {
    Some(PressureFile { some, full })
}

#[test]
fn summarize_three_samples() {
    const MB: u64 = 1 << 20;
    let samples = [
        ResourceSample {
            t_ns: 0,
            cpu_user_ns: 0,
            cpu_system_ns: 0,
            rss_bytes: 100 * MB,
            threads: 4,
            pressure: Pressure {
                cpu: file(Some(line(1.0, 1_000_000)), None),
                memory: file(Some(line(0.0, 500)), Some(line(0.0, 200))),
                io: None,
                cgroup_cpu: file(Some(line(0.0, 0)), Some(line(0.0, 0))),
            },
            ..ResourceSample::default()
        },
        ResourceSample {
            t_ns: 1_000_000_000,
            cpu_user_ns: 300_000_000,
            cpu_system_ns: 100_000_000,
            rss_bytes: 150 * MB,
            threads: 6,
            pressure: Pressure {
                cpu: file(Some(line(5.0, 1_050_000)), None),
                memory: file(Some(line(0.0, 500)), Some(line(0.0, 200))),
                io: None,
                cgroup_cpu: file(Some(line(3.0, 100_000)), Some(line(1.0, 20_000))),
            },
            ..ResourceSample::default()
        },
        ResourceSample {
            t_ns: 3_000_000_000,
            cpu_user_ns: 1_500_000_000,
            cpu_system_ns: 500_000_000,
            rss_bytes: 120 * MB,
            threads: 5,
            pressure: Pressure {
                cpu: file(Some(line(2.5, 1_110_000)), None),
                memory: file(Some(line(0.1, 800)), Some(line(0.0, 200))),
                io: None,
                // The cgroup file vanished for the last sample.
                cgroup_cpu: None,
            },
            ..ResourceSample::default()
        },
    ];
    let s = summarize(&samples);
    // Round-trips through JSON as the report stores it.
    let json = serde_json::to_string(&s).unwrap();
    assert_eq!(serde_json::from_str::<ResourceSummary>(&json).unwrap(), s);

    assert_eq!(s.samples, 3);
    assert!(close(s.wall_seconds, 3.0));
    // 1.5 s user + 0.5 s system.
    assert!(close(s.cpu_user_seconds, 1.5));
    assert!(close(s.cpu_system_seconds, 0.5));
    assert!(close(s.cpu_seconds, 2.0));
    // 2.0 s over 3 s.
    assert!(close(s.cpu_utilization_avg.unwrap(), 2.0 / 3.0));
    // Intervals: 0.4 s / 1 s = 0.4, then 1.6 s / 2 s = 0.8.
    assert!(close(s.cpu_utilization_max.unwrap(), 0.8));
    assert_eq!(s.rss_max_bytes, 150 * MB);
    assert_eq!(s.threads_max, 6);

    // cpu some: 1_110_000 − 1_000_000 = 110_000 µs over 3 s = 3.666…%.
    let cpu = s.pressure.cpu.unwrap();
    let some = cpu.some.unwrap();
    assert_eq!(some.stall_us, 110_000);
    assert!(close(
        some.stall_pct.unwrap(),
        110_000.0 / 3_000_000.0 * 100.0
    ));
    assert!(close(some.avg10_max, 5.0));
    assert_eq!(cpu.full, None);

    // memory some: 300 µs over 3 s = 0.01%; full did not grow.
    let mem = s.pressure.memory.unwrap();
    assert_eq!(mem.some.as_ref().unwrap().stall_us, 300);
    assert!(close(mem.some.as_ref().unwrap().stall_pct.unwrap(), 0.01));
    assert!(close(mem.some.as_ref().unwrap().avg10_max, 0.1));
    assert_eq!(mem.full.as_ref().unwrap().stall_us, 0);
    assert!(close(mem.full.as_ref().unwrap().stall_pct.unwrap(), 0.0));

    assert_eq!(s.pressure.io, None);

    // cgroup cpu read only over the first 1 s interval: 100_000 µs = 10%, 20_000 µs = 2%.
    let cg = s.pressure.cgroup_cpu.unwrap();
    assert_eq!(cg.some.as_ref().unwrap().stall_us, 100_000);
    assert!(close(cg.some.as_ref().unwrap().stall_pct.unwrap(), 10.0));
    assert!(close(cg.some.as_ref().unwrap().avg10_max, 3.0));
    assert_eq!(cg.full.as_ref().unwrap().stall_us, 20_000);
    assert!(close(cg.full.as_ref().unwrap().stall_pct.unwrap(), 2.0));
}

#[test]
fn summarize_empty_and_single() {
    let s = summarize(&[]);
    assert_eq!(s.samples, 0);
    assert_eq!(s.cpu_utilization_avg, None);

    let one = ResourceSample {
        t_ns: 5,
        rss_bytes: 10,
        threads: 2,
        pressure: Pressure {
            cpu: file(Some(line(1.5, 7)), None),
            ..Pressure::default()
        },
        ..ResourceSample::default()
    };
    let s = summarize(std::slice::from_ref(&one));
    assert_eq!(s.samples, 1);
    assert_eq!(s.cpu_utilization_avg, None);
    assert_eq!(s.cpu_utilization_max, None);
    assert_eq!(s.rss_max_bytes, 10);
    assert_eq!(s.threads_max, 2);
    let some = s.pressure.cpu.unwrap().some.unwrap();
    assert_eq!(some.stall_us, 0);
    assert_eq!(some.stall_pct, None);
    assert!(close(some.avg10_max, 1.5));
}

fn cg_sample(
    usage_usec: u64,
    throttled: (u64, u64, u64),
    cpu_some_us: u64,
    mem_some_us: u64,
    events: MemoryEvents,
    sock: u64,
) -> (Option<CgroupSample>, Option<PressureFile>) {
    let (nr_periods, nr_throttled, throttled_usec) = throttled;
    (
        Some(CgroupSample {
            cpu_stat: Some(CpuStat {
                usage_usec,
                user_usec: usage_usec,
                system_usec: 0,
                nr_periods: Some(nr_periods),
                nr_throttled: Some(nr_throttled),
                throttled_usec: Some(throttled_usec),
            }),
            cpu_max: Some(parse_cpu_max("50000 100000").unwrap()),
            cpuset_cpus: Some(4),
            online_cpus: 4,
            memory_pressure: file(Some(line(0.0, mem_some_us)), None),
            io_pressure: None,
            pressure_enabled: Some(true),
            memory_events: Some(events),
            sock_bytes: Some(sock),
            ..CgroupSample::default()
        }),
        file(Some(line(0.0, cpu_some_us)), None),
    )
}

fn worker(tid: u32, run_ns: u64, wait_ns: u64, timeslices: u64) -> WorkerSched {
    WorkerSched {
        name: format!("client-worker-{}", tid - 10),
        tid,
        sched: Some(SchedStat {
            run_ns,
            wait_ns,
            timeslices,
        }),
    }
}

/// Two samples 2 s apart of a group limited to 0.5 CPU (cpu.max 50000 100000, 4 CPUs).
fn quota_run() -> Vec<ResourceSample> {
    let (cg0, cgp0) = cg_sample(
        1_000_000,
        (100, 10, 50_000),
        500_000,
        0,
        MemoryEvents {
            high: 3,
            ..MemoryEvents::default()
        },
        8192,
    );
    let (cg1, cgp1) = cg_sample(
        1_800_000,
        (120, 15, 250_000),
        600_000,
        20_000,
        MemoryEvents {
            high: 5,
            oom_kill: 1,
            ..MemoryEvents::default()
        },
        4096,
    );
    vec![
        ResourceSample {
            t_ns: 1_000_000_000,
            pressure: Pressure {
                cpu: file(Some(line(0.0, 1_000_000)), None),
                cgroup_cpu: cgp0,
                ..Pressure::default()
            },
            cgroup: cg0,
            schedstat: Some(SchedStat {
                run_ns: 0,
                wait_ns: 1_000,
                timeslices: 1,
            }),
            workers: vec![worker(10, 0, 0, 0), worker(11, 0, 0, 0)],
            ctx_switches: Some(CtxSwitches {
                voluntary: 10,
                nonvoluntary: 2,
            }),
            sampler: Some(SchedStat {
                run_ns: 1_000_000,
                ..SchedStat::default()
            }),
            ..ResourceSample::default()
        },
        ResourceSample {
            t_ns: 3_000_000_000,
            pressure: Pressure {
                cpu: file(Some(line(0.0, 1_026_000)), None),
                cgroup_cpu: cgp1,
                ..Pressure::default()
            },
            cgroup: cg1,
            schedstat: Some(SchedStat {
                run_ns: 0,
                wait_ns: 20_001_000,
                timeslices: 9,
            }),
            workers: vec![
                worker(10, 800_000_000, 100_000_000, 40),
                worker(11, 400_000_000, 300_000_000, 30),
            ],
            ctx_switches: Some(CtxSwitches {
                voluntary: 110,
                nonvoluntary: 52,
            }),
            sampler: Some(SchedStat {
                run_ns: 3_000_000,
                ..SchedStat::default()
            }),
            ..ResourceSample::default()
        },
    ]
}

#[test]
fn cgroup_utilisation_with_half_a_cpu_and_stall_fractions_from_totals() {
    let s = summarize(&quota_run());
    let cg = s.cgroup.as_ref().unwrap();
    // N_eff = min(50000/100000, 4, 4) = 0.5.
    assert_eq!(cg.n_eff, Some(0.5));
    assert_eq!(cg.cpu_max_cpus, Some(0.5));
    // Δusage 800_000 µs over Δt 2_000_000 µs × 0.5 CPU = 0.8.
    assert!(close(cg.cpu_usage_seconds.unwrap(), 0.8));
    assert!(close(cg.utilization.unwrap(), 0.8));
    // Δthrottled 200_000 µs / 2_000_000 µs = 0.1; 5 of 20 periods throttled = 0.25.
    assert!(close(cg.throttled_fraction.unwrap(), 0.1));
    assert_eq!((cg.nr_throttled, cg.nr_periods), (Some(5), Some(20)));
    assert!(close(cg.throttled_periods_fraction.unwrap(), 0.25));
    // cpu.pressure some: 100_000 µs / 2 s = 0.05; memory: 20_000 µs / 2 s = 0.01.
    assert!(close(cg.stall.cpu.unwrap(), 0.05));
    assert!(close(cg.stall.memory.unwrap(), 0.01));
    assert_eq!(cg.stall.io, None);
    assert!(!cg.pressure_accounting_off);
    assert!(!cg.is_root);
    let ev = cg.memory_events.unwrap();
    assert_eq!((ev.high, ev.oom_kill, ev.oom), (2, 1, 0));
    assert_eq!(cg.sock_bytes_max, Some(8192));
    // Host cpu some: 26_000 µs / 2 s = 0.013.
    assert!(close(s.host_stall.cpu.unwrap(), 0.013));
    assert_eq!(s.host_stall.memory, None);
    // Main thread: 20 ms of run-queue wait in 2 s = 0.01.
    assert!(close(s.main_thread_wait_fraction.unwrap(), 0.01));
    // Workers: 0.1 s and 0.3 s of wait in 2 s.
    assert_eq!(s.workers.len(), 2);
    assert!(close(s.workers[0].wait_fraction.unwrap(), 0.05));
    assert!(close(s.workers[0].run_fraction.unwrap(), 0.4));
    assert_eq!(s.workers[0].timeslices, 40);
    assert!(close(s.workers[1].wait_fraction.unwrap(), 0.15));
    assert!(close(s.worker_wait_fraction_max.unwrap(), 0.15));
    assert_eq!(s.voluntary_ctxt_switches, Some(100));
    assert_eq!(s.nonvoluntary_ctxt_switches, Some(50));
    // The sampler: 2 ms of CPU in 2 s.
    assert!(close(s.sampler_cpu_fraction.unwrap(), 0.001));
    let json = serde_json::to_string(&s).unwrap();
    assert_eq!(serde_json::from_str::<ResourceSummary>(&json).unwrap(), s);
}

#[test]
fn cgroup_with_pressure_accounting_off_says_so() {
    let mut run = quota_run();
    run[1].cgroup.as_mut().unwrap().pressure_enabled = Some(false);
    run[1].cgroup.as_mut().unwrap().is_root = true;
    let cg = summarize(&run).cgroup.unwrap();
    assert!(cg.pressure_accounting_off);
    // The root group's numbers are the host's: said, from the last sample.
    assert!(cg.is_root);
}

fn sock(
    open: u32,
    opened: u64,
    reads: u64,
    nonzero: u64,
    recv_max: u32,
    rtt: Option<(u32, u32)>,
) -> Option<SocketSample> {
    Some(SocketSample {
        open,
        opened_total: opened,
        sweeps_total: reads,
        sweep_ns_total: reads * 1_000,
        reads_total: reads,
        recv_q_nonzero_total: nonzero,
        recv_q_persistent_total: nonzero / 2,
        retrans_total: nonzero / 2,
        recv_q_max: recv_max,
        out_q_max: 0,
        notsent_max: recv_max / 10,
        rtt_us_p50: rtt.map(|r| r.0),
        rtt_us_max: rtt.map(|r| r.1),
    })
}

#[test]
fn sockets_over_the_samples() {
    let at = |t_s: u64, sockets| ResourceSample {
        t_ns: t_s * 1_000_000_000,
        sockets,
        ..ResourceSample::default()
    };
    let samples = [
        // The first sample's maxima are from before the span: left out.
        at(0, sock(2, 2, 2, 2, 99_999, Some((1, 1_000)))),
        at(1, sock(3, 3, 12, 4, 70_000, Some((50, 90)))),
        at(2, sock(3, 3, 22, 4, 0, Some((40, 60)))),
        at(3, sock(3, 4, 32, 6, 100, Some((70, 80)))),
    ];
    let s = summarize(&samples).sockets.unwrap();
    // Open at the start (2) and opened since (4 − 2).
    assert_eq!(s.connections_seen, 4);
    assert_eq!(s.reads, 30);
    // (6 − 2) of 30 readings had bytes waiting.
    assert!(close(s.recv_q_nonzero_fraction.unwrap(), 4.0 / 30.0));
    // (3 − 1) of them had been waiting at the reading before too.
    assert!(close(s.recv_q_persistent_fraction.unwrap(), 2.0 / 30.0));
    assert_eq!(s.recv_q_max_bytes, 70_000);
    assert_eq!(s.notsent_max_bytes, 7_000);
    assert_eq!(s.retrans, 2);
    // Median of 50, 40, 70.
    assert_eq!(s.rtt_us_p50, Some(50));
    assert_eq!(s.rtt_us_max, Some(90));
    assert!(close(s.sweep_ns_mean.unwrap(), 1_000.0));
}

fn queue_run(depths: &[u64]) -> Vec<ResourceSample> {
    depths
        .iter()
        .enumerate()
        .map(|(i, &d)| ResourceSample {
            t_ns: i as u64 * 1_000_000_000,
            queues: Some(QueueSample {
                planned_not_sent: d,
                planned_not_sent_max: d + 1,
                records_sent: 10 * i as u64,
                records_written: 10 * i as u64 - (i as u64 % 2),
                writer_backlog: i as u64 % 2,
                ..QueueSample::default()
            }),
            ..ResourceSample::default()
        })
        .collect()
}

#[test]
fn read_lag_shares_over_the_samples() {
    // Cumulative counters at three samples; the first sample's max (900 µs) was before the
    // window and is left out.
    let at = |i: u64, reads, stamped, o100, o1ms, max| ResourceSample {
        t_ns: i * 1_000_000_000,
        queues: Some(QueueSample {
            reads,
            reads_kernel_stamped: stamped,
            read_lag_over_100us: o100,
            read_lag_over_1ms: o1ms,
            read_lag_max_ns: max,
            ..QueueSample::default()
        }),
        ..ResourceSample::default()
    };
    let q = summarize(&[
        at(0, 100, 100, 5, 1, 900_000),
        at(1, 600, 580, 15, 2, 400_000),
        at(2, 1_100, 1_060, 25, 5, 2_500_000),
    ])
    .queues
    .unwrap();
    // 1,000 reads, 960 of them stamped; 20 of those over 100 µs, 4 over 1 ms.
    assert_eq!(q.reads, 1_000);
    assert_eq!(q.kernel_stamped_fraction, Some(0.96));
    assert_eq!(q.read_lag_over_100us_fraction, Some(20.0 / 960.0));
    assert_eq!(q.read_lag_over_1ms_fraction, Some(4.0 / 960.0));
    assert_eq!(q.read_lag_max_ns, Some(2_500_000));
    // No kernel stamp at all: no shares, no max.
    let q = summarize(&[at(0, 0, 0, 0, 0, 0), at(1, 50, 0, 0, 0, 0)])
        .queues
        .unwrap();
    assert_eq!(q.reads, 50);
    assert_eq!(q.kernel_stamped_fraction, Some(0.0));
    assert_eq!(q.read_lag_over_100us_fraction, None);
    assert_eq!(q.read_lag_max_ns, None);
}

#[test]
fn planned_not_sent_growth_rule() {
    // First third (0, 0) mean 0; last third (5, 8) mean 6.5 > 0 + 1: growing.
    let q = summarize(&queue_run(&[0, 0, 1, 3, 5, 8])).queues.unwrap();
    assert_eq!(q.planned_not_sent_first_third, Some(0.0));
    assert_eq!(q.planned_not_sent_last_third, Some(6.5));
    assert!(q.planned_not_sent_growing);
    assert_eq!(q.planned_not_sent_max, 9);
    assert_eq!(q.writer_backlog_max, 1);
    assert_eq!(q.growth_rule, GROWTH_RULE);
    // Bounded: first third (0, 2) mean 1, last third (0, 1) mean 0.5.
    let q = summarize(&queue_run(&[0, 2, 0, 1, 0, 1])).queues.unwrap();
    assert!(!q.planned_not_sent_growing);
    // Up by exactly 1 is not growth; two samples are too few to say.
    assert!(
        !summarize(&queue_run(&[1, 0, 2]))
            .queues
            .unwrap()
            .planned_not_sent_growing
    );
    let q = summarize(&queue_run(&[0, 50])).queues.unwrap();
    assert_eq!(q.planned_not_sent_first_third, None);
    assert!(!q.planned_not_sent_growing);
}

#[test]
fn window_uses_the_bracketing_samples() {
    let samples: Vec<ResourceSample> = (0..5u64)
        .map(|i| ResourceSample {
            t_ns: i * 1_000_000_000,
            cpu_user_ns: i * i * 100_000_000,
            ..ResourceSample::default()
        })
        .collect();
    // [1.5 s, 2.5 s] is bracketed by the samples at 1 s and 3 s.
    let w = summarize_window(&samples, 1_500_000_000, 2_500_000_000);
    assert_eq!(w.samples, 3);
    assert_eq!((w.first_t_ns, w.last_t_ns), (1_000_000_000, 3_000_000_000));
    // user CPU 0.9 s − 0.1 s = 0.8 s over 2 s.
    assert!(close(w.cpu_user_seconds, 0.8));
    assert!(close(w.cpu_utilization_avg.unwrap(), 0.4));
    // Exactly on samples: those samples.
    let w = summarize_window(&samples, 1_000_000_000, 2_000_000_000);
    assert_eq!((w.first_t_ns, w.last_t_ns), (1_000_000_000, 2_000_000_000));
    // Past both ends: every sample.
    let w = summarize_window(&samples, 0, 9_000_000_000);
    assert_eq!(w.samples, 5);
    assert_eq!(summarize_window(&[], 0, 1).samples, 0);
}

#[test]
fn an_older_file_reads_back() {
    // A summary and a sample as written before the cgroup, thread, socket and queue fields.
    let summary = r#"{"samples":2,"wall_seconds":1.0,"cpu_seconds":0.5,"cpu_user_seconds":0.4,
        "cpu_system_seconds":0.1,"cpu_utilization_avg":0.5,"cpu_utilization_max":0.5,
        "rss_max_bytes":10,"threads_max":3,"pressure":{"cpu":null,"memory":null,"io":null,
        "cgroup_cpu":null}}"#;
    let s: ResourceSummary = serde_json::from_str(summary).unwrap();
    assert_eq!((s.samples, s.threads_max, s.cgroup.is_none()), (2, 3, true));
    let sample = r#"{"t_ns":5,"cpu_user_ns":1,"cpu_system_ns":2,"rss_bytes":3,"threads":4,
        "pressure":{"cpu":null,"memory":null,"io":null,"cgroup_cpu":null}}"#;
    let s: ResourceSample = serde_json::from_str(sample).unwrap();
    assert_eq!((s.t_ns, s.threads, s.workers.len()), (5, 4, 0));
}

#[test]
fn writer_backlog_growth_rule() {
    let run = |backlogs: &[u64]| {
        let samples: Vec<ResourceSample> = backlogs
            .iter()
            .enumerate()
            .map(|(i, &b)| ResourceSample {
                t_ns: i as u64 * 1_000_000_000,
                queues: Some(QueueSample {
                    writer_backlog: b,
                    ..QueueSample::default()
                }),
                ..ResourceSample::default()
            })
            .collect();
        summarize(&samples).queues.unwrap()
    };
    // First third (0, 10) mean 5; last third (300, 900) mean 600 > 5 + 64: fell behind.
    let q = run(&[0, 10, 40, 100, 300, 900]);
    assert!(q.writer_backlog_growing);
    assert_eq!(q.writer_backlog_max, 900);
    // Up by exactly 64 (mean 0 → 64) is the writer's batch, not growth.
    assert!(!run(&[0, 0, 30, 30, 64, 64]).writer_backlog_growing);
    // Too few samples to say.
    assert!(!run(&[0, 5000]).writer_backlog_growing);
}
