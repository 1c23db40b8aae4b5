use super::*;

#[test]
fn parse_pressure_with_and_without_full() {
    let both = "some avg10=1.61 avg60=2.21 avg300=10.80 total=824371324\n\
                full avg10=0.50 avg60=0.00 avg300=0.25 total=12\n";
    let f = parse_pressure(both).unwrap();
    assert_eq!(
        f.some,
        Some(PressureLine {
            avg10: 1.61,
            avg60: 2.21,
            avg300: 10.80,
            total_us: 824_371_324
        })
    );
    assert_eq!(
        f.full,
        Some(PressureLine {
            avg10: 0.5,
            avg60: 0.0,
            avg300: 0.25,
            total_us: 12
        })
    );

    // /proc/pressure/cpu before Linux 5.13 has no `full` line.
    let some_only = parse_pressure("some avg10=0.00 avg60=0.00 avg300=0.00 total=0\n").unwrap();
    assert_eq!(some_only.some, Some(PressureLine::default()));
    assert_eq!(some_only.full, None);
}

#[test]
fn parse_pressure_rejects_malformed() {
    for bad in [
        "",
        "\n",
        "hello world",
        "some avg10=0.00 avg60=0.00 avg300=0.00",
        "some avg10=x avg60=0.00 avg300=0.00 total=0",
        "some avg10=0.00 avg60=0.00 avg300=0.00 total=-1",
        "some avg10=nan avg60=0.00 avg300=0.00 total=0",
        "some avg10 avg60=0.00 avg300=0.00 total=0",
        "some avg10=0 avg60=0 avg300=0 total=0\nsome avg10=0 avg60=0 avg300=0 total=0",
    ] {
        assert!(parse_pressure(bad).is_err(), "accepted {bad:?}");
    }
}

#[test]
fn parse_proc_stat_comm_with_spaces_and_paren() {
    // Fields 3.. after the last ')': 3 state=S, 4 ppid=1, 5 pgrp=2, 6 session=3, 7 tty=4,
    // 8 tpgid=5, 9 flags=6, 10 minflt=7, 11 cminflt=8, 12 majflt=9, 13 cmajflt=10,
    // 14 utime=1234, 15 stime=567, 16 cutime=11, 17 cstime=12, 18 priority=20, 19 nice=0,
    // 20 num_threads=17, 21 itrealvalue=0, 22 starttime=99, 23 vsize=8192000, 24 rss=2048.
    let line = "4242 ((a b) c)) S 1 2 3 4 5 6 7 8 9 10 1234 567 11 12 20 0 17 0 99 8192000 \
                2048 18446744073709551615 1 2 3 4 5 0 0 0 0 0 0 0 17 1 0 0 0 0 0\n";
    assert_eq!(parse_proc_stat(line), Ok((1234, 567, 17, 2048)));

    assert!(parse_proc_stat("4242 (x S 1 2").is_err());
    assert!(parse_proc_stat("4242 (x) S 1 2 3").is_err());
    assert!(parse_proc_stat("").is_err());
}

#[test]
fn cgroup_v2_path_from_proc_self_cgroup() {
    assert_eq!(cgroup_v2_path("0::/\n"), Some(""));
    assert_eq!(
        cgroup_v2_path("4:memory:/x\n0::/user.slice/a.scope\n"),
        Some("user.slice/a.scope")
    );
    assert_eq!(cgroup_v2_path("1:cpu:/\n"), None);
}

#[cfg(target_os = "linux")]
#[test]
fn sample_reads_this_process() {
    let s = sample(42);
    assert_eq!(s.t_ns, 42);
    assert!(s.threads >= 1);
    assert!(s.rss_bytes > 0);
    let json = serde_json::to_string(&s).unwrap();
    assert_eq!(serde_json::from_str::<ResourceSample>(&json).unwrap(), s);
}

#[cfg(target_os = "linux")]
#[tokio::test]
async fn sampler_samples_at_start_every_interval_and_at_stop() {
    let clock = Clock::start();
    let (tx, rx) = watch::channel(false);
    let task = tokio::spawn(run_sampler(clock, Duration::from_millis(20), rx));
    tokio::time::sleep(Duration::from_millis(110)).await;
    let stop_ns = clock.now_ns();
    tx.send(true).unwrap();
    let samples = task.await.unwrap();
    // Start, about 5 ticks, stop; a slow CI machine may delay ticks, so only a floor.
    assert!(samples.len() >= 3, "{} samples", samples.len());
    assert!(samples.windows(2).all(|w| w[0].t_ns <= w[1].t_ns));
    assert!(samples[0].t_ns < 20_000_000);
    assert!(samples.last().unwrap().t_ns >= stop_ns);
    assert!(samples.iter().all(|s| s.threads >= 1));
}

#[tokio::test]
async fn sampler_with_stop_already_set_and_zero_interval() {
    let (_tx, rx) = watch::channel(true);
    let samples = run_sampler(Clock::start(), Duration::ZERO, rx).await;
    assert_eq!(samples.len(), 2);

    // A dropped sender ends the sampler too, rather than leaving it running forever.
    let (tx, rx) = watch::channel(false);
    drop(tx);
    let samples = run_sampler(Clock::start(), Duration::from_secs(3600), rx).await;
    assert_eq!(samples.len(), 2);
}

/// This machine's layout: v1 controllers under /sys/fs/cgroup, the v2 hierarchy at
/// /sys/fs/cgroup/unified.
const HYBRID_MOUNTINFO: &str = "\
31 23 0:28 / /sys/fs/cgroup rw,relatime - tmpfs tmpfs rw,mode=755
32 31 0:29 / /sys/fs/cgroup/cpu rw,relatime - cgroup cgroup rw,cpu
35 31 0:32 / /sys/fs/cgroup/memory rw,relatime - cgroup cgroup rw,memory
41 31 0:38 / /sys/fs/cgroup/unified rw,relatime shared:9 - cgroup2 cgroup2 rw
";

#[test]
fn cgroup2_mount_and_dir_on_hybrid_unified_and_bind_mounted_hosts() {
    assert_eq!(
        cgroup2_mount(HYBRID_MOUNTINFO),
        Some((
            std::path::PathBuf::from("/sys/fs/cgroup/unified"),
            "/".to_string()
        ))
    );
    assert_eq!(
        cgroup_dir("4:memory:/x\n0::/\n", HYBRID_MOUNTINFO),
        Some(std::path::PathBuf::from("/sys/fs/cgroup/unified"))
    );
    assert_eq!(
        cgroup_dir("0::/user.slice/a.scope\n", HYBRID_MOUNTINFO),
        Some(std::path::PathBuf::from(
            "/sys/fs/cgroup/unified/user.slice/a.scope"
        ))
    );
    // A unified host, with the mount point escaped (`\040` is a space) and mounted from
    // /user.slice: the group's path is relative to that root.
    let unified = "25 1 0:22 /user.slice /sys/fs/my\\040cg rw - cgroup2 cgroup2 rw,nsdelegate\n";
    assert_eq!(
        cgroup_dir("0::/user.slice/b.service\n", unified),
        Some(std::path::PathBuf::from("/sys/fs/my cg/b.service"))
    );
    // No cgroup2 mount, or no v2 line: nothing.
    let v1_only = "32 31 0:29 / /sys/fs/cgroup/cpu rw - cgroup cgroup rw,cpu\n";
    assert_eq!(cgroup_dir("0::/\n", v1_only), None);
    assert_eq!(cgroup_dir("1:cpu:/\n", HYBRID_MOUNTINFO), None);
}

#[test]
fn cpu_stat_with_and_without_the_cpu_controller() {
    let without = "usage_usec 45113105271\nuser_usec 39675566704\nsystem_usec 5437538567\n\
                   nice_usec 1109950912\n";
    let s = parse_cpu_stat(without).unwrap();
    assert_eq!(
        s,
        CpuStat {
            usage_usec: 45_113_105_271,
            user_usec: 39_675_566_704,
            system_usec: 5_437_538_567,
            nr_periods: None,
            nr_throttled: None,
            throttled_usec: None,
        }
    );
    let with = "usage_usec 100\nuser_usec 60\nsystem_usec 40\nnr_periods 20\nnr_throttled 5\n\
                throttled_usec 2000\nnr_bursts 0\nburst_usec 0\n";
    let s = parse_cpu_stat(with).unwrap();
    assert_eq!(
        (s.usage_usec, s.nr_periods, s.nr_throttled, s.throttled_usec),
        (100, Some(20), Some(5), Some(2000))
    );
    assert!(parse_cpu_stat("user_usec 1\nsystem_usec 2\n").is_err());
    assert!(parse_cpu_stat("").is_err());
}

#[test]
fn cpu_max_with_one_two_and_three_tokens() {
    let m = parse_cpu_max("max\n").unwrap();
    assert_eq!(
        (m.max_usec, m.period_usec, m.burst_usec),
        (None, 100_000, None)
    );
    assert_eq!(m.cpus(), None);
    let m = parse_cpu_max("max 100000\n").unwrap();
    assert_eq!((m.max_usec, m.period_usec), (None, 100_000));
    let m = parse_cpu_max("50000 100000\n").unwrap();
    assert_eq!(m.cpus(), Some(0.5));
    let m = parse_cpu_max("150000 50000 10000\n").unwrap();
    assert_eq!(
        (m.max_usec, m.period_usec, m.burst_usec),
        (Some(150_000), 50_000, Some(10_000))
    );
    assert_eq!(m.cpus(), Some(3.0));
    for bad in ["", "a 100000", "1 2 3 4", "50000 -1"] {
        assert!(parse_cpu_max(bad).is_err(), "accepted {bad:?}");
    }
}

#[test]
fn cpu_lists() {
    assert_eq!(parse_cpu_list("0-3,8,10-11\n"), Ok(7));
    assert_eq!(parse_cpu_list("0"), Ok(1));
    assert_eq!(parse_cpu_list("\n"), Ok(0));
    for bad in ["3-1", "a", "0-", "1,,x"] {
        assert!(parse_cpu_list(bad).is_err(), "accepted {bad:?}");
    }
}

#[test]
fn memory_events_and_stat_sock() {
    let e = parse_memory_events("low 1\nhigh 2\nmax 3\noom 4\noom_kill 5\noom_group_kill 0\n");
    assert_eq!(
        e,
        MemoryEvents {
            low: 1,
            high: 2,
            max: 3,
            oom: 4,
            oom_kill: 5,
            sock_throttled: 0
        }
    );
    assert_eq!(parse_memory_events("sock_throttled 7\n").sock_throttled, 7);
    let stat = "anon 1000\nfile 2000\nkernel 300\nsock 4096\nshmem 0\n";
    assert_eq!(parse_memory_stat_sock(stat), Some(4096));
    assert_eq!(parse_memory_stat_sock("anon 1\n"), None);
}

#[test]
fn n_eff_is_the_smallest_cap() {
    let mut c = CgroupSample {
        cpu_max: Some(parse_cpu_max("50000 100000").unwrap()),
        cpuset_cpus: Some(4),
        online_cpus: 2,
        ..CgroupSample::default()
    };
    assert_eq!(c.n_eff(), Some(0.5));
    c.cpu_max = Some(parse_cpu_max("max 100000").unwrap());
    assert_eq!(c.n_eff(), Some(2.0));
    c.cpuset_cpus = Some(1);
    assert_eq!(c.n_eff(), Some(1.0));
    assert_eq!(CgroupSample::default().n_eff(), None);
}

#[test]
fn schedstat_and_status() {
    assert_eq!(
        parse_schedstat("332502957 135879 25\n"),
        Ok(SchedStat {
            run_ns: 332_502_957,
            wait_ns: 135_879,
            timeslices: 25
        })
    );
    for bad in ["", "1 2", "1 2 3 4", "1 x 3"] {
        assert!(parse_schedstat(bad).is_err(), "accepted {bad:?}");
    }
    let status = "Name:\tinferbench\nThreads:\t5\nvoluntary_ctxt_switches:\t150\n\
                  nonvoluntary_ctxt_switches:\t7\n";
    assert_eq!(
        parse_status(status),
        Ok(CtxSwitches {
            voluntary: 150,
            nonvoluntary: 7
        })
    );
    assert!(parse_status("voluntary_ctxt_switches:\t1\n").is_err());
    assert!(parse_status("voluntary_ctxt_switches:\tx\nnonvoluntary_ctxt_switches:\t1").is_err());
}

#[test]
fn queues_count_due_until_sent_or_dropped() {
    let q = InternalQueues::new();
    let mut a = q.due();
    let b = q.due();
    let c = q.due();
    assert_eq!(q.sample().planned_not_sent, 3);
    a.sent();
    a.sent(); // once only
    drop(b);
    let s = q.sample();
    assert_eq!((s.planned_not_sent, s.planned_not_sent_max), (1, 3));
    // The peak restarts at the current depth.
    assert_eq!(q.sample().planned_not_sent_max, 1);
    drop(c);
    drop(a);
    assert_eq!(q.sample().planned_not_sent, 0);
    for _ in 0..5 {
        q.record_sent();
    }
    q.record_written();
    q.record_written();
    let s = q.sample();
    assert_eq!(
        (s.records_sent, s.records_written, s.writer_backlog),
        (5, 2, 3)
    );
    drop(DueGuard::none());
    assert_eq!(q.sample().planned_not_sent, 0);
}

#[cfg(target_os = "linux")]
#[test]
fn loopback_recv_q_is_seen_until_the_client_reads() {
    use std::io::{Read, Write};
    use std::os::fd::AsRawFd;

    let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let mut client = std::net::TcpStream::connect(listener.local_addr().unwrap()).unwrap();
    let (mut server, _) = listener.accept().unwrap();
    let registry = SocketRegistry::new();
    let reg = registry.register(client.as_raw_fd());
    let first = registry.sample();
    assert_eq!(
        (first.open, first.opened_total, first.recv_q_max),
        (1, 1, 0)
    );
    assert_eq!(first.recv_q_nonzero_total, 0);

    server.write_all(&[7u8; 1000]).unwrap();
    // Loopback delivers at once, but give the kernel a moment on a loaded machine.
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(5);
    while read_socket(client.as_raw_fd()).recv_q != Some(1000) {
        assert!(std::time::Instant::now() < deadline, "bytes never queued");
        std::thread::sleep(std::time::Duration::from_millis(5));
    }
    let queued = registry.sample();
    assert_eq!(queued.recv_q_max, 1000);
    assert!(queued.recv_q_nonzero_total >= 1);
    // Still unread at the next reading: now it is persistent.
    let before = queued.recv_q_persistent_total;
    let again = registry.sample();
    assert_eq!(again.recv_q_persistent_total, before + 1);
    let queued = again;
    assert!(queued.reads_total >= 2);
    assert!(queued.rtt_us_p50.is_some(), "TCP_INFO read");

    let mut buf = [0u8; 1000];
    client.read_exact(&mut buf).unwrap();
    let read = registry.sample();
    assert_eq!(read.recv_q_max, 0, "the maxima restart each sample");
    assert_eq!(read.recv_q_nonzero_total, queued.recv_q_nonzero_total);
    assert_eq!(read.recv_q_persistent_total, queued.recv_q_persistent_total);
    assert_eq!(read.reads_total, queued.reads_total + 1);

    drop(reg);
    let closed = registry.sample();
    assert_eq!((closed.open, closed.reads_total), (0, read.reads_total));
    let conns = registry.connections();
    assert_eq!(conns.len(), 1);
    assert_eq!(conns[0].recv_q_max, 1000);
    assert!(conns[0].recv_q_nonzero >= 1);
}

#[cfg(target_os = "linux")]
#[test]
fn multi_thread_runtime_registers_its_workers_and_not_its_blocking_threads() {
    let rt = ClientRuntime::new(Some(2)).unwrap();
    let guard = rt.enter();
    // A blocking-pool thread: it must not count as a worker.
    rt.runtime()
        .block_on(rt.runtime().spawn_blocking(|| 1))
        .unwrap();
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(5);
    while rt.workers().list().len() < 2 {
        assert!(std::time::Instant::now() < deadline, "{:?}", rt.workers());
        std::thread::sleep(std::time::Duration::from_millis(5));
    }
    let mut w = rt.workers().list();
    w.sort_by(|a, b| a.name.cmp(&b.name));
    assert_eq!(w.len(), 2, "{w:?}");
    assert_eq!(w[0].name, "client-worker-0");
    assert_eq!(w[1].name, "client-worker-1");
    assert_ne!(w[0].tid, w[1].tid);
    for t in &w {
        let comm = std::fs::read_to_string(format!("/proc/self/task/{}/comm", t.tid)).unwrap();
        assert_eq!(comm.trim(), t.name);
    }
    // The thread inside `enter` sees the registry; a worker does too.
    assert_eq!(WorkerThreads::current().unwrap().list().len(), 2);
    let seen = rt
        .runtime()
        .block_on(
            rt.runtime()
                .spawn(async { WorkerThreads::current().map(|w| w.list().len()) }),
        )
        .unwrap();
    assert_eq!(seen, Some(2));
    drop(guard);
    assert!(WorkerThreads::current().is_none());
}

#[cfg(target_os = "linux")]
#[test]
fn current_thread_runtime_has_its_driver_as_the_one_worker() {
    let rt = ClientRuntime::new(None).unwrap();
    let guard = rt.enter();
    let w = WorkerThreads::current().unwrap().list();
    assert_eq!(w.len(), 1);
    assert_eq!(
        (w[0].name.as_str(), w[0].tid),
        ("client-worker-0", current_tid())
    );
    drop(guard);
    assert!(rt.workers().list().is_empty());
    // Without a ClientRuntime, the asking thread is the one worker.
    let alone = WorkerThreads::current_or_this_thread().list();
    assert_eq!(alone.len(), 1);
    assert_eq!(alone[0].tid, current_tid());
}

#[cfg(target_os = "linux")]
#[test]
fn sampler_thread_samples_files_threads_sockets_and_queues() {
    let clock = Clock::start();
    let probes = Probes {
        workers: WorkerThreads::current_or_this_thread(),
        ..Probes::default()
    };
    let _due = probes.queues.due();
    let sampler = Sampler::start_with(
        clock,
        Duration::from_millis(40),
        Duration::from_millis(10),
        probes,
    );
    std::thread::sleep(Duration::from_millis(200));
    let stop_ns = clock.now_ns();
    let samples = sampler.stop();
    // Start, about 5 ticks, stop; a slow machine may delay ticks, so only a floor.
    assert!(samples.len() >= 3, "{} samples", samples.len());
    assert!(samples.windows(2).all(|w| w[0].t_ns <= w[1].t_ns));
    assert!(samples.last().unwrap().t_ns >= stop_ns);
    let last = samples.last().unwrap();
    assert_eq!(last.queues.unwrap().planned_not_sent, 1);
    let sockets = last.sockets.as_ref().unwrap();
    // Socket sweeps ran between the whole samples too.
    assert!(
        sockets.sweeps_total > samples.len() as u64,
        "{} sweeps, {} samples",
        sockets.sweeps_total,
        samples.len()
    );
    assert_eq!(last.workers.len(), 1);
    assert_eq!(last.workers[0].tid, current_tid());
    assert!(last.workers[0].sched.is_some_and(|s| s.run_ns > 0));
    assert!(last.sampler.is_some_and(|s| s.run_ns > 0));
    let json = serde_json::to_string(&samples).unwrap();
    assert_eq!(
        serde_json::from_str::<Vec<ResourceSample>>(&json).unwrap(),
        samples
    );
}

#[cfg(target_os = "linux")]
#[test]
fn this_process_cgroup_is_found_where_a_cgroup2_mount_exists() {
    let mi = std::fs::read_to_string("/proc/self/mountinfo").unwrap();
    let s = sample(0);
    if cgroup2_mount(&mi).is_some() {
        let cg = s.cgroup.expect("a cgroup2 mount, so the group's directory");
        // usage_usec is always in cpu.stat.
        assert!(cg.cpu_stat.is_some_and(|c| c.usage_usec > 0), "{cg:?}");
        assert!(cg.online_cpus >= 1);
    }
    assert!(s.ctx_switches.is_some());
    assert!(s.schedstat.is_some_and(|x| x.run_ns > 0));
}
