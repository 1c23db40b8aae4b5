//! The client's resource use over a run or a window of it: deltas of the cumulative
//! counters between samples, divided by the time they cover (telemetry.md §4, §5.2).

use serde::{Deserialize, Serialize};

use super::{MemoryEvents, Pressure, PressureFile, PressureLine, ResourceSample};

/// The client's resource use over a run.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct ResourceSummary {
    pub samples: usize,
    /// Last `t_ns` − first `t_ns`, in s.
    pub wall_seconds: f64,
    /// User + system CPU time of the process over the run, in s.
    pub cpu_seconds: f64,
    pub cpu_user_seconds: f64,
    pub cpu_system_seconds: f64,
    /// `cpu_seconds / wall_seconds`, in cores; `None` with fewer than 2 samples.
    pub cpu_utilization_avg: Option<f64>,
    /// The highest CPU time / wall time over one interval between consecutive samples, in cores.
    pub cpu_utilization_max: Option<f64>,
    pub rss_max_bytes: u64,
    pub threads_max: u32,
    pub pressure: PressureSummary,
    /// First and last `t_ns` of the samples summarised (a window's bracketing samples).
    #[serde(default)]
    pub first_t_ns: u64,
    #[serde(default)]
    pub last_t_ns: u64,
    /// Host PSI `some` stall fractions (0–1) from `total` deltas.
    #[serde(default)]
    pub host_stall: StallFractions,
    /// The client's cgroup v2; None when it could not be found.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cgroup: Option<CgroupSummary>,
    /// Run-queue wait of the main thread (`/proc/self/schedstat`) as a fraction of wall time.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub main_thread_wait_fraction: Option<f64>,
    /// Each client worker thread's schedstat over the samples.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub workers: Vec<ThreadSummary>,
    /// The highest `wait_fraction` of the worker threads.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub worker_wait_fraction_max: Option<f64>,
    /// Context switches of the process over the samples; a rising non-voluntary count means
    /// the scheduler preempted the client.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub voluntary_ctxt_switches: Option<u64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub nonvoluntary_ctxt_switches: Option<u64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub sockets: Option<SocketSummary>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub queues: Option<QueueSummary>,
    /// CPU time of the sampler thread itself, as a fraction of wall time.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub sampler_cpu_fraction: Option<f64>,
}

#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct PressureSummary {
    pub cpu: Option<PressureFileSummary>,
    pub memory: Option<PressureFileSummary>,
    pub io: Option<PressureFileSummary>,
    pub cgroup_cpu: Option<PressureFileSummary>,
}

#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct PressureFileSummary {
    pub some: Option<PressureLineSummary>,
    pub full: Option<PressureLineSummary>,
}

#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct PressureLineSummary {
    /// Growth of `total` over the run, in µs of stall.
    pub stall_us: u64,
    /// `stall_us` as % of the wall time over which the line was read; `None` if it was read in
    /// fewer than 2 consecutive samples.
    pub stall_pct: Option<f64>,
    /// The highest `avg10` seen, in %.
    pub avg10_max: f64,
}

/// Summarizes samples ordered by `t_ns` (as the sampler returns them).
pub fn summarize(samples: &[ResourceSample]) -> ResourceSummary {
    let mut out = ResourceSummary {
        samples: samples.len(),
        ..ResourceSummary::default()
    };
    let (Some(first), Some(last)) = (samples.first(), samples.last()) else {
        return out;
    };
    let secs = |ns: u64| ns as f64 / 1e9;
    let wall_ns = last.t_ns.saturating_sub(first.t_ns);
    let user_ns = last.cpu_user_ns.saturating_sub(first.cpu_user_ns);
    let system_ns = last.cpu_system_ns.saturating_sub(first.cpu_system_ns);
    out.wall_seconds = secs(wall_ns);
    out.cpu_user_seconds = secs(user_ns);
    out.cpu_system_seconds = secs(system_ns);
    out.cpu_seconds = secs(user_ns + system_ns);
    if wall_ns > 0 {
        out.cpu_utilization_avg = Some((user_ns + system_ns) as f64 / wall_ns as f64);
    }
    out.cpu_utilization_max = samples
        .windows(2)
        .filter_map(|w| {
            let dt = w[1].t_ns.saturating_sub(w[0].t_ns);
            (dt > 0).then(|| cpu_ns(&w[1]).saturating_sub(cpu_ns(&w[0])) as f64 / dt as f64)
        })
        .reduce(f64::max);
    out.rss_max_bytes = samples.iter().map(|s| s.rss_bytes).max().unwrap_or(0);
    out.threads_max = samples.iter().map(|s| s.threads).max().unwrap_or(0);
    out.pressure = PressureSummary {
        cpu: summarize_file(samples, |p| p.cpu.as_ref()),
        memory: summarize_file(samples, |p| p.memory.as_ref()),
        io: summarize_file(samples, |p| p.io.as_ref()),
        cgroup_cpu: summarize_file(samples, |p| p.cgroup_cpu.as_ref()),
    };
    out.first_t_ns = first.t_ns;
    out.last_t_ns = last.t_ns;
    extend(&mut out, samples);
    out
}

fn cpu_ns(s: &ResourceSample) -> u64 {
    s.cpu_user_ns.saturating_add(s.cpu_system_ns)
}

fn summarize_file(
    samples: &[ResourceSample],
    file: impl Fn(&Pressure) -> Option<&PressureFile>,
) -> Option<PressureFileSummary> {
    if !samples.iter().any(|s| file(&s.pressure).is_some()) {
        return None;
    }
    Some(PressureFileSummary {
        some: summarize_line(samples, |s| file(&s.pressure)?.some.as_ref()),
        full: summarize_line(samples, |s| file(&s.pressure)?.full.as_ref()),
    })
}

/// Stall growth is summed over consecutive pairs where both samples have the line, so a file
/// that appears, vanishes, or resets (the process moved to another cgroup) only loses the
/// intervals it was not read over, and the % is taken over the intervals it was read over.
fn summarize_line(
    samples: &[ResourceSample],
    line: impl Fn(&ResourceSample) -> Option<&PressureLine>,
) -> Option<PressureLineSummary> {
    let avg10_max = samples
        .iter()
        .filter_map(|s| line(s).map(|l| l.avg10))
        .reduce(f64::max)?;
    let (mut stall_us, mut covered_ns) = (0u64, 0u64);
    for w in samples.windows(2) {
        if let (Some(a), Some(b)) = (line(&w[0]), line(&w[1])) {
            stall_us = stall_us.saturating_add(b.total_us.saturating_sub(a.total_us));
            covered_ns = covered_ns.saturating_add(w[1].t_ns.saturating_sub(w[0].t_ns));
        }
    }
    let stall_pct = (covered_ns > 0).then(|| stall_us as f64 * 1e3 / covered_ns as f64 * 100.0);
    Some(PressureLineSummary {
        stall_us,
        stall_pct,
        avg10_max,
    })
}

/// `some` stall fractions (0–1: stall time over wall time), from the growth of `total`.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct StallFractions {
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cpu: Option<f64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub memory: Option<f64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub io: Option<f64>,
}

/// The client's cgroup v2 over the samples (telemetry.md §4.2).
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct CgroupSummary {
    /// The group is the root: every number here is the whole machine's (see
    /// `CgroupSample::is_root`), so it cannot tell the client's own load from others'.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub is_root: bool,
    /// min(cpu.max quota in CPUs, |cpuset.cpus.effective|, online CPUs), at the last sample.
    pub n_eff: Option<f64>,
    /// `cpu.max` MAX/PERIOD; None without a quota (`max`).
    pub cpu_max_cpus: Option<f64>,
    pub cpuset_cpus: Option<u32>,
    pub online_cpus: u32,
    /// Growth of `cpu.stat` usage_usec, in s.
    pub cpu_usage_seconds: Option<f64>,
    /// U = Δusage_usec / (Δt_µs × N_eff).
    pub utilization: Option<f64>,
    /// Δthrottled_usec / Δt_µs (None without the cpu controller).
    pub throttled_fraction: Option<f64>,
    pub nr_throttled: Option<u64>,
    pub nr_periods: Option<u64>,
    /// Δnr_throttled / Δnr_periods.
    pub throttled_periods_fraction: Option<f64>,
    /// The group's `cpu.pressure`, `memory.pressure`, `io.pressure` `some` fractions.
    pub stall: StallFractions,
    /// `cgroup.pressure` was 0 at some sample: PSI accounting off, so the stall fractions
    /// above say nothing.
    pub pressure_accounting_off: bool,
    /// Growth of `memory.events` (high, max, oom, oom_kill, …).
    pub memory_events: Option<MemoryEvents>,
    /// The highest `memory.stat` `sock` (socket buffer bytes).
    pub sock_bytes_max: Option<u64>,
    pub memory_current_max: Option<u64>,
    pub memory_peak: Option<u64>,
    pub memory_max: Option<u64>,
}

/// One worker thread's `schedstat` over the samples.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct ThreadSummary {
    pub name: String,
    pub tid: u32,
    pub run_seconds: f64,
    pub wait_seconds: f64,
    pub timeslices: u64,
    /// Δwait / Δt: the share of wall time it was runnable but not running.
    pub wait_fraction: Option<f64>,
    /// Δrun / Δt: the share of one CPU it used.
    pub run_fraction: Option<f64>,
}

/// The client's connections over the samples (telemetry.md §4.5).
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct SocketSummary {
    /// Open at the first sample, plus those opened after it.
    pub connections_seen: u64,
    /// Per-connection readings (1 Hz and the faster socket rate).
    pub reads: u64,
    /// Readings with Recv-Q > 0 over all readings: bytes had arrived that the client had
    /// not read yet.
    pub recv_q_nonzero_fraction: Option<f64>,
    /// Readings whose Recv-Q was > 0 at this reading and at the connection's previous one
    /// (a persistent receive queue: the client-bound signal), over all readings.
    #[serde(default)]
    pub recv_q_persistent_fraction: Option<f64>,
    pub recv_q_max_bytes: u32,
    pub out_q_max_bytes: u32,
    pub notsent_max_bytes: u32,
    pub retrans: u64,
    /// The median of the per-sample rtt medians, µs.
    pub rtt_us_p50: Option<u32>,
    pub rtt_us_max: Option<u32>,
    /// Mean cost of one sweep over every open connection, ns.
    pub sweep_ns_mean: Option<f64>,
}

/// The engine's queues over the samples.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct QueueSummary {
    /// The highest number of requests due and not yet written.
    pub planned_not_sent_max: u64,
    /// Mean `planned_not_sent` over the first and the last third of the samples.
    pub planned_not_sent_first_third: Option<f64>,
    pub planned_not_sent_last_third: Option<f64>,
    /// See `growth_rule`.
    pub planned_not_sent_growing: bool,
    pub growth_rule: String,
    /// The highest number of records waiting for the writer thread.
    pub writer_backlog_max: u64,
    /// The evidence writer fell behind: see [`GROWTH_RULE`]. A writer slower than
    /// the client keeps every waiting record in memory, so the run is limited by the
    /// client's disk or CPU.
    #[serde(default)]
    pub writer_backlog_growing: bool,
    /// Socket reads over the samples (the last sample's count minus the first's).
    #[serde(default)]
    pub reads: u64,
    /// The share of those reads timed by the kernel's arrival stamp (docs/timing.md).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub kernel_stamped_fraction: Option<f64>,
    /// The shares of the kernel-stamped reads made more than 100 µs, and more than 1 ms,
    /// after their bytes arrived: the client's own read lag, kept out of every timestamp.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub read_lag_over_100us_fraction: Option<f64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub read_lag_over_1ms_fraction: Option<f64>,
    /// The longest read lag, ns.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub read_lag_max_ns: Option<u64>,
}

/// The rules for `planned_not_sent_growing` and `writer_backlog_growing`, as printed in the
/// summary.
pub const GROWTH_RULE: &str = "growing when the mean over the last third of the samples exceeds \
the mean over the first third by more than 1 request (needs at least 3 samples); the writer's \
backlog by more than 64 records";

/// Records the writer may let wait before it writes without yielding (its batch); a backlog
/// growing by less is the normal jitter of its yields.
pub const WRITER_SLACK: f64 = 64.0;

/// [`summarize`] over the samples that bracket `[start_ns, end_ns]` (a profiling window):
/// the last sample at or before `start_ns` to the first at or after `end_ns`, so that the
/// deltas cover the whole window (and a little more, at most one interval each side). With
/// no sample before (after) it, the first (last) sample is used.
pub fn summarize_window(samples: &[ResourceSample], start_ns: u64, end_ns: u64) -> ResourceSummary {
    if samples.is_empty() {
        return summarize(samples);
    }
    let lo = samples
        .iter()
        .rposition(|s| s.t_ns <= start_ns)
        .unwrap_or(0);
    let hi = samples
        .iter()
        .position(|s| s.t_ns >= end_ns)
        .unwrap_or(samples.len() - 1)
        .max(lo);
    summarize(&samples[lo..=hi])
}

/// The growth of a cumulative counter and the ns it was read over, summed over consecutive
/// pairs of samples that both have it; a pair where it went down (a reset, another group)
/// counts neither.
fn growth(
    samples: &[ResourceSample],
    get: impl Fn(&ResourceSample) -> Option<u64>,
) -> Option<(u64, u64)> {
    let mut acc: Option<(u64, u64)> = None;
    for w in samples.windows(2) {
        if let (Some(a), Some(b)) = (get(&w[0]), get(&w[1]))
            && b >= a
        {
            let (d, t) = acc.unwrap_or((0, 0));
            acc = Some((d + (b - a), t + w[1].t_ns.saturating_sub(w[0].t_ns)));
        }
    }
    acc
}

/// Growth in µs over covered ns, as a fraction of wall time.
fn us_fraction(g: Option<(u64, u64)>) -> Option<f64> {
    g.and_then(|(us, ns)| (ns > 0).then(|| us as f64 * 1e3 / ns as f64))
}

fn ns_fraction(g: Option<(u64, u64)>) -> Option<f64> {
    g.and_then(|(d, ns)| (ns > 0).then(|| d as f64 / ns as f64))
}

fn some_total(f: Option<&PressureFile>) -> Option<u64> {
    f?.some.as_ref().map(|l: &PressureLine| l.total_us)
}

fn extend(out: &mut ResourceSummary, samples: &[ResourceSample]) {
    let host = |f: fn(&Pressure) -> Option<&PressureFile>| {
        us_fraction(growth(samples, |s| some_total(f(&s.pressure))))
    };
    out.host_stall = StallFractions {
        cpu: host(|p| p.cpu.as_ref()),
        memory: host(|p| p.memory.as_ref()),
        io: host(|p| p.io.as_ref()),
    };
    out.cgroup = cgroup_summary(samples);
    out.main_thread_wait_fraction = ns_fraction(growth(samples, |s| Some(s.schedstat?.wait_ns)));
    out.workers = worker_summaries(samples);
    out.worker_wait_fraction_max = out
        .workers
        .iter()
        .filter_map(|w| w.wait_fraction)
        .reduce(f64::max);
    out.voluntary_ctxt_switches = growth(samples, |s| Some(s.ctx_switches?.voluntary)).map(|g| g.0);
    out.nonvoluntary_ctxt_switches =
        growth(samples, |s| Some(s.ctx_switches?.nonvoluntary)).map(|g| g.0);
    out.sockets = socket_summary(samples);
    out.queues = queue_summary(samples);
    out.sampler_cpu_fraction = ns_fraction(growth(samples, |s| Some(s.sampler?.run_ns)));
}

fn cgroup_summary(samples: &[ResourceSample]) -> Option<CgroupSummary> {
    let last = samples.iter().rev().find_map(|s| s.cgroup.as_ref())?;
    let cpu = |f: fn(&super::CpuStat) -> Option<u64>| {
        growth(samples, move |s| f(s.cgroup.as_ref()?.cpu_stat.as_ref()?))
    };
    let usage = cpu(|c| Some(c.usage_usec));
    let n_eff = last.n_eff();
    let throttled = cpu(|c| c.throttled_usec);
    let nr_throttled = cpu(|c| c.nr_throttled).map(|g| g.0);
    let nr_periods = cpu(|c| c.nr_periods).map(|g| g.0);
    let pressure = |f: fn(&super::CgroupSample) -> Option<&PressureFile>| {
        us_fraction(growth(samples, move |s| {
            some_total(f(s.cgroup.as_ref()?))
        }))
    };
    let events: Vec<MemoryEvents> = samples
        .iter()
        .filter_map(|s| s.cgroup.as_ref()?.memory_events)
        .collect();
    let memory_events = match (events.first(), events.last()) {
        (Some(a), Some(b)) => Some(MemoryEvents {
            low: b.low.saturating_sub(a.low),
            high: b.high.saturating_sub(a.high),
            max: b.max.saturating_sub(a.max),
            oom: b.oom.saturating_sub(a.oom),
            oom_kill: b.oom_kill.saturating_sub(a.oom_kill),
            sock_throttled: b.sock_throttled.saturating_sub(a.sock_throttled),
        }),
        _ => None,
    };
    let max_of = |f: fn(&super::CgroupSample) -> Option<u64>| {
        samples.iter().filter_map(|s| f(s.cgroup.as_ref()?)).max()
    };
    Some(CgroupSummary {
        is_root: last.is_root,
        n_eff,
        cpu_max_cpus: last.cpu_max.and_then(|m| m.cpus()),
        cpuset_cpus: last.cpuset_cpus,
        online_cpus: last.online_cpus,
        cpu_usage_seconds: usage.map(|(us, _)| us as f64 / 1e6),
        utilization: match (usage, n_eff) {
            (Some((us, ns)), Some(n)) if ns > 0 && n > 0.0 => {
                Some(us as f64 * 1e3 / (ns as f64 * n))
            }
            _ => None,
        },
        throttled_fraction: us_fraction(throttled),
        nr_throttled,
        nr_periods,
        throttled_periods_fraction: match (nr_throttled, nr_periods) {
            (Some(t), Some(p)) if p > 0 => Some(t as f64 / p as f64),
            _ => None,
        },
        stall: StallFractions {
            cpu: us_fraction(growth(samples, |s| {
                s.cgroup.as_ref()?;
                some_total(s.pressure.cgroup_cpu.as_ref())
            })),
            memory: pressure(|c| c.memory_pressure.as_ref()),
            io: pressure(|c| c.io_pressure.as_ref()),
        },
        pressure_accounting_off: samples
            .iter()
            .any(|s| s.cgroup.as_ref().and_then(|c| c.pressure_enabled) == Some(false)),
        memory_events,
        sock_bytes_max: max_of(|c| c.sock_bytes),
        memory_current_max: max_of(|c| c.memory_current),
        memory_peak: max_of(|c| c.memory_peak),
        memory_max: last.memory_max,
    })
}

fn worker_summaries(samples: &[ResourceSample]) -> Vec<ThreadSummary> {
    let mut out: Vec<ThreadSummary> = Vec::new();
    for s in samples {
        for w in &s.workers {
            if !out.iter().any(|t| t.tid == w.tid) {
                out.push(ThreadSummary {
                    name: w.name.clone(),
                    tid: w.tid,
                    ..ThreadSummary::default()
                });
            }
        }
    }
    for t in &mut out {
        let sched = |s: &ResourceSample| s.workers.iter().find(|w| w.tid == t.tid)?.sched;
        let run = growth(samples, |s| Some(sched(s)?.run_ns));
        let wait = growth(samples, |s| Some(sched(s)?.wait_ns));
        t.run_seconds = run.map_or(0.0, |g| g.0 as f64 / 1e9);
        t.wait_seconds = wait.map_or(0.0, |g| g.0 as f64 / 1e9);
        t.timeslices = growth(samples, |s| Some(sched(s)?.timeslices)).map_or(0, |g| g.0);
        t.wait_fraction = ns_fraction(wait);
        t.run_fraction = ns_fraction(run);
    }
    out
}

fn socket_summary(samples: &[ResourceSample]) -> Option<SocketSummary> {
    let with: Vec<&super::SocketSample> =
        samples.iter().filter_map(|s| s.sockets.as_ref()).collect();
    let (first, last) = (*with.first()?, *with.last()?);
    let tail = if with.len() > 1 {
        &with[1..]
    } else {
        &with[..]
    };
    let reads = last.reads_total.saturating_sub(first.reads_total);
    let nonzero = last
        .recv_q_nonzero_total
        .saturating_sub(first.recv_q_nonzero_total);
    let persistent = last
        .recv_q_persistent_total
        .saturating_sub(first.recv_q_persistent_total);
    let sweeps = last.sweeps_total.saturating_sub(first.sweeps_total);
    let sweep_ns = last.sweep_ns_total.saturating_sub(first.sweep_ns_total);
    let mut p50s: Vec<u32> = tail.iter().filter_map(|s| s.rtt_us_p50).collect();
    p50s.sort_unstable();
    Some(SocketSummary {
        connections_seen: u64::from(first.open)
            + last.opened_total.saturating_sub(first.opened_total),
        reads,
        recv_q_nonzero_fraction: (reads > 0).then(|| nonzero as f64 / reads as f64),
        recv_q_persistent_fraction: (reads > 0).then(|| persistent as f64 / reads as f64),
        recv_q_max_bytes: tail.iter().map(|s| s.recv_q_max).max().unwrap_or(0),
        out_q_max_bytes: tail.iter().map(|s| s.out_q_max).max().unwrap_or(0),
        notsent_max_bytes: tail.iter().map(|s| s.notsent_max).max().unwrap_or(0),
        retrans: last.retrans_total.saturating_sub(first.retrans_total),
        rtt_us_p50: (!p50s.is_empty()).then(|| p50s[(p50s.len() - 1) / 2]),
        rtt_us_max: tail.iter().filter_map(|s| s.rtt_us_max).max(),
        sweep_ns_mean: (sweeps > 0).then(|| sweep_ns as f64 / sweeps as f64),
    })
}

fn queue_summary(samples: &[ResourceSample]) -> Option<QueueSummary> {
    let with: Vec<super::QueueSample> = samples.iter().filter_map(|s| s.queues).collect();
    if with.is_empty() {
        return None;
    }
    let tail = if with.len() > 1 {
        &with[1..]
    } else {
        &with[..]
    };
    let n = with.len();
    let third = n / 3;
    let mean = |q: &[super::QueueSample], f: fn(&super::QueueSample) -> u64| {
        q.iter().map(|s| f(s) as f64).sum::<f64>() / q.len() as f64
    };
    let thirds = |f: fn(&super::QueueSample) -> u64| {
        if third > 0 {
            (
                Some(mean(&with[..third], f)),
                Some(mean(&with[n - third..], f)),
            )
        } else {
            (None, None)
        }
    };
    let (first_third, last_third) = thirds(|s| s.planned_not_sent);
    let writer = thirds(|s| s.writer_backlog);
    Some(QueueSummary {
        planned_not_sent_max: tail
            .iter()
            .map(|s| s.planned_not_sent_max.max(s.planned_not_sent))
            .max()
            .unwrap_or(0),
        planned_not_sent_first_third: first_third,
        planned_not_sent_last_third: last_third,
        planned_not_sent_growing: matches!((first_third, last_third), (Some(a), Some(b)) if b > a + 1.0),
        growth_rule: GROWTH_RULE.to_string(),
        writer_backlog_max: with.iter().map(|s| s.writer_backlog).max().unwrap_or(0),
        writer_backlog_growing: matches!(writer, (Some(a), Some(b)) if b > a + WRITER_SLACK),
        ..read_lag(&with)
    })
}

/// The read-lag fields of [`QueueSummary`]: counter growth from the first sample to the last
/// (the first sample's `read_lag_max_ns` covers the time before it, so it is left out).
fn read_lag(with: &[super::QueueSample]) -> QueueSummary {
    let (first, last) = (with[0], with[with.len() - 1]);
    let d = |f: fn(&super::QueueSample) -> u64| f(&last).saturating_sub(f(&first));
    let reads = d(|q| q.reads);
    let stamped = d(|q| q.reads_kernel_stamped);
    let share = |n: u64, of: u64| (of > 0).then(|| n as f64 / of as f64);
    QueueSummary {
        reads,
        kernel_stamped_fraction: share(stamped, reads),
        read_lag_over_100us_fraction: share(d(|q| q.read_lag_over_100us), stamped),
        read_lag_over_1ms_fraction: share(d(|q| q.read_lag_over_1ms), stamped),
        read_lag_max_ns: (stamped > 0).then(|| {
            with[1..]
                .iter()
                .map(|q| q.read_lag_max_ns)
                .max()
                .unwrap_or(0)
        }),
        ..QueueSummary::default()
    }
}
