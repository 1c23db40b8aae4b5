//! The client's own resource use during a run, sampled about once a second so that a report
//! can show whether the client itself was busy, starved or behind while it measured the
//! server (telemetry.md §4, §5.2): CPU time, RSS and threads of this process; host PSI; the
//! client's cgroup v2 (`cpu.stat`, `cpu.max`, cpuset, pressure, memory); run-queue wait of
//! every client worker thread (`schedstat`); the receive and send queues of every open
//! connection; and the engine's own queues.
//!
//! Everything here is best effort: a file that is missing or unreadable (not Linux, PSI
//! disabled, no cgroup v2) yields `None` or zeros, never an error or a panic.
//!
//! The [`Sampler`] runs on its own OS thread, off the client's runtime, so that its file
//! reads never delay the stamping of a response frame.

mod cgroup;
mod procfs;
mod psi;
mod queues;
mod sampler;
mod sockets;
mod summary;
mod workers;

#[cfg(test)]
mod tests;
#[cfg(test)]
mod tests_summary;

use std::path::Path;
use std::sync::Arc;
use std::time::Duration;

use serde::{Deserialize, Serialize};
use tokio::sync::watch;
use tokio::time::{Instant, MissedTickBehavior};

use crate::clock::Clock;

pub use cgroup::{
    CgroupSample, CpuMax, CpuStat, MemoryEvents, cgroup_dir, cgroup_v2_path, cgroup2_mount,
    parse_cpu_list, parse_cpu_max, parse_cpu_stat, parse_memory_events, parse_memory_stat_sock,
};
pub use procfs::{
    CtxSwitches, SchedStat, current_tid, parse_proc_stat, parse_schedstat, parse_status,
};
pub use psi::{Pressure, PressureFile, PressureLine, parse_pressure};
pub use queues::{DueGuard, InternalQueues, QueueSample};
pub use sampler::Sampler;
pub use sockets::{
    ConnectionStats, Fd, SocketReading, SocketRegistration, SocketRegistry, SocketSample,
    read_socket,
};
pub use summary::{
    CgroupSummary, GROWTH_RULE, PressureFileSummary, PressureLineSummary, PressureSummary,
    QueueSummary, ResourceSummary, SocketSummary, StallFractions, ThreadSummary, summarize,
    summarize_window,
};
pub use workers::{ClientRuntime, EnterGuard, WorkerThread, WorkerThreads};

/// One reading of the client's resources. Fields after `pressure` came with the cgroup,
/// thread, socket and queue evidence; an older file reads back with them empty.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct ResourceSample {
    /// ns since the run anchor, as given by the caller.
    pub t_ns: u64,
    /// CPU time of the whole process (all threads) in user mode since it started.
    pub cpu_user_ns: u64,
    /// CPU time of the whole process in kernel mode since it started.
    pub cpu_system_ns: u64,
    pub rss_bytes: u64,
    pub threads: u32,
    pub pressure: Pressure,
    /// The client's cgroup v2 (its `cpu.pressure` is `pressure.cgroup_cpu`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cgroup: Option<CgroupSample>,
    /// `/proc/self/schedstat`: the kernel keeps it per task, so this is the main thread's.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub schedstat: Option<SchedStat>,
    /// `/proc/self/task/<tid>/schedstat` of each client worker thread.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub workers: Vec<WorkerSched>,
    /// Context switches of the whole process (`getrusage`, every thread's summed; the
    /// counts in `/proc/self/status` are the main thread's alone, the fallback).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub ctx_switches: Option<CtxSwitches>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub sockets: Option<SocketSample>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub queues: Option<QueueSample>,
    /// The sampler thread's own `schedstat`: what sampling costs.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub sampler: Option<SchedStat>,
}

/// One worker thread's `schedstat` at a sample (None: the thread is gone or the file is
/// unreadable).
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct WorkerSched {
    pub name: String,
    pub tid: u32,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub sched: Option<SchedStat>,
}

/// What the sampler reads besides files: the worker threads, the open connections and the
/// engine's queues. Cheap to clone (shared handles).
#[derive(Clone, Debug, Default)]
pub struct Probes {
    pub workers: WorkerThreads,
    pub sockets: SocketRegistry,
    pub queues: Arc<InternalQueues>,
}

/// Reads this process's CPU time, RSS and threads, the PSI files and the cgroup. Missing or
/// unreadable files give zeros / `None`, never an error.
pub fn sample(t_ns: u64) -> ResourceSample {
    Probe::new().sample(t_ns)
}

/// What a sample needs that does not change during a run, resolved once by the sampler.
pub(crate) struct Probe {
    ticks_per_s: u64,
    page_size: u64,
    cgroup: cgroup::CgroupProbe,
}

impl Probe {
    pub(crate) fn new() -> Self {
        let (ticks_per_s, page_size) = procfs::sys_units();
        Probe {
            ticks_per_s,
            page_size,
            cgroup: cgroup::CgroupProbe::locate(),
        }
    }

    fn ticks_to_ns(&self, ticks: u64) -> u64 {
        // u128 because USER_HZ need not divide 1e9 (1024 on alpha).
        let ns = u128::from(ticks) * 1_000_000_000 / u128::from(self.ticks_per_s);
        u64::try_from(ns).unwrap_or(u64::MAX)
    }

    /// The file-based part of a sample.
    pub(crate) fn sample(&self, t_ns: u64) -> ResourceSample {
        let mut s = ResourceSample {
            t_ns,
            ..ResourceSample::default()
        };
        if let Some((utime, stime, threads, rss_pages)) = std::fs::read_to_string("/proc/self/stat")
            .ok()
            .and_then(|text| parse_proc_stat(&text).ok())
        {
            s.cpu_user_ns = self.ticks_to_ns(utime);
            s.cpu_system_ns = self.ticks_to_ns(stime);
            s.threads = threads;
            s.rss_bytes = rss_pages.saturating_mul(self.page_size);
        }
        s.pressure = Pressure {
            cpu: psi::read_pressure(Path::new("/proc/pressure/cpu")),
            memory: psi::read_pressure(Path::new("/proc/pressure/memory")),
            io: psi::read_pressure(Path::new("/proc/pressure/io")),
            cgroup_cpu: self.cgroup.cpu_pressure(),
        };
        s.cgroup = self.cgroup.sample(procfs::online_cpus());
        s.schedstat = procfs::read_schedstat("/proc/self/schedstat");
        s.ctx_switches = procfs::rusage_ctx_switches().or_else(procfs::read_status);
        s
    }

    /// A whole sample: the files, then the worker threads, sockets and queues.
    pub(crate) fn sample_with(&self, t_ns: u64, probes: &Probes) -> ResourceSample {
        let mut s = self.sample(t_ns);
        s.workers = probes
            .workers
            .list()
            .into_iter()
            .map(|w| WorkerSched {
                sched: procfs::read_schedstat(&format!("/proc/self/task/{}/schedstat", w.tid)),
                name: w.name,
                tid: w.tid,
            })
            .collect();
        s.sockets = Some(probes.sockets.sample());
        s.queues = Some(probes.queues.sample());
        s
    }
}

/// Samples at start, then every `interval` on absolute deadlines, and once more when `stop`
/// becomes true (or its sender is dropped). The result is ordered by `t_ns`. This runs on
/// the caller's runtime; a live run uses [`Sampler`], on its own thread, instead.
pub async fn run_sampler(
    clock: Clock,
    interval: Duration,
    mut stop: watch::Receiver<bool>,
) -> Vec<ResourceSample> {
    // tokio's interval panics on a zero period; anything below 10 ms would only measure itself.
    let interval = interval.max(Duration::from_millis(10));
    let probe = Probe::new();
    let mut samples = vec![probe.sample(clock.now_ns())];
    let mut ticks = tokio::time::interval_at(Instant::now() + interval, interval);
    ticks.set_missed_tick_behavior(MissedTickBehavior::Delay);
    let mut stopped = *stop.borrow_and_update();
    while !stopped {
        tokio::select! {
            biased;
            changed = stop.changed() => {
                stopped = changed.is_err() || *stop.borrow_and_update();
            }
            _ = ticks.tick() => samples.push(probe.sample(clock.now_ns())),
        }
    }
    samples.push(probe.sample(clock.now_ns()));
    samples
}
