//! Per-process and per-thread files of procfs: `/proc/self/stat`, `/proc/self/status`,
//! `/proc/self/schedstat` and `/proc/self/task/<tid>/schedstat` (proc(5), telemetry.md §4.3).

use serde::{Deserialize, Serialize};

/// Parses `/proc/self/stat` (proc(5)) into `(utime ticks, stime ticks, num_threads, rss pages)`.
///
/// `comm` (field 2) is in parentheses and may itself contain spaces and `)`, so the fixed fields
/// are taken after the *last* `)`.
pub fn parse_proc_stat(text: &str) -> Result<(u64, u64, u32, u64), String> {
    let close = text
        .rfind(')')
        .ok_or_else(|| "stat: no `)` closing comm".to_string())?;
    // rest[0] is field 3 (state), so field n is rest[n - 3].
    let rest: Vec<&str> = text[close + 1..].split_ascii_whitespace().collect();
    let field = |n: usize| -> Result<&str, String> {
        rest.get(n - 3)
            .copied()
            .ok_or_else(|| format!("stat: field {n} missing"))
    };
    let unsigned = |n: usize| -> Result<u64, String> {
        let s = field(n)?;
        s.parse::<u64>()
            .map_err(|_| format!("stat: field {n} `{s}` is not a count"))
    };
    // num_threads and rss are printed as signed longs; a negative value would be a kernel
    // oddity, not a reason to lose the sample, so it clamps to 0.
    let signed = |n: usize| -> Result<u64, String> {
        let s = field(n)?;
        s.parse::<i64>()
            .map(|v| v.max(0) as u64)
            .map_err(|_| format!("stat: field {n} `{s}` is not a number"))
    };
    let utime = unsigned(14)?;
    let stime = unsigned(15)?;
    let threads = u32::try_from(signed(20)?).unwrap_or(u32::MAX);
    let rss = signed(24)?;
    Ok((utime, stime, threads, rss))
}

/// The context-switch counts of `/proc/self/status`. A rising non-voluntary count means the
/// scheduler preempted us: a CPU-contention hint.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct CtxSwitches {
    pub voluntary: u64,
    pub nonvoluntary: u64,
}

/// Parses the `voluntary_ctxt_switches` and `nonvoluntary_ctxt_switches` lines of
/// `/proc/self/status`; an error when either is missing or not a count.
pub fn parse_status(text: &str) -> Result<CtxSwitches, String> {
    let (mut vol, mut nonvol) = (None, None);
    for line in text.lines() {
        let Some((key, value)) = line.split_once(':') else {
            continue;
        };
        let slot = match key.trim() {
            "voluntary_ctxt_switches" => &mut vol,
            "nonvoluntary_ctxt_switches" => &mut nonvol,
            _ => continue,
        };
        let v = value.trim();
        *slot = Some(
            v.parse::<u64>()
                .map_err(|_| format!("status: {} `{v}` is not a count", key.trim()))?,
        );
    }
    match (vol, nonvol) {
        (Some(voluntary), Some(nonvoluntary)) => Ok(CtxSwitches {
            voluntary,
            nonvoluntary,
        }),
        _ => Err("status: no voluntary_ctxt_switches / nonvoluntary_ctxt_switches".into()),
    }
}

/// A `schedstat` file: time on CPU, time waiting on a run queue (both ns), timeslices run.
/// The wait is "the client wanted CPU and did not get it" (needs `CONFIG_SCHED_INFO`).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct SchedStat {
    pub run_ns: u64,
    pub wait_ns: u64,
    pub timeslices: u64,
}

/// Parses `332502957 135879 25`: exactly three counts.
pub fn parse_schedstat(text: &str) -> Result<SchedStat, String> {
    let v = text
        .split_ascii_whitespace()
        .map(|t| {
            t.parse::<u64>()
                .map_err(|_| format!("schedstat: `{t}` is not a count"))
        })
        .collect::<Result<Vec<u64>, String>>()?;
    match v[..] {
        [run_ns, wait_ns, timeslices] => Ok(SchedStat {
            run_ns,
            wait_ns,
            timeslices,
        }),
        _ => Err(format!("schedstat: {} fields, expected 3", v.len())),
    }
}

pub(crate) fn read_schedstat(path: &str) -> Option<SchedStat> {
    std::fs::read_to_string(path)
        .ok()
        .and_then(|t| parse_schedstat(&t).ok())
}

pub(crate) fn read_status() -> Option<CtxSwitches> {
    std::fs::read_to_string("/proc/self/status")
        .ok()
        .and_then(|t| parse_status(&t).ok())
}

/// Clock ticks per second (USER_HZ, the unit of utime/stime) and the page size (the unit of
/// rss), with the usual values as fallbacks.
#[cfg(unix)]
pub(crate) fn sys_units() -> (u64, u64) {
    // SAFETY: sysconf only reads a configuration value; it has no preconditions.
    let (tck, page) = unsafe {
        (
            libc::sysconf(libc::_SC_CLK_TCK),
            libc::sysconf(libc::_SC_PAGESIZE),
        )
    };
    let tck = if tck > 0 { tck as u64 } else { 100 };
    let page = if page > 0 { page as u64 } else { 4096 };
    (tck, page)
}

#[cfg(not(unix))]
pub(crate) fn sys_units() -> (u64, u64) {
    (100, 4096)
}

/// CPUs online now (0 when unknown).
pub(crate) fn online_cpus() -> u32 {
    #[cfg(unix)]
    {
        // SAFETY: as in `sys_units`.
        let n = unsafe { libc::sysconf(libc::_SC_NPROCESSORS_ONLN) };
        if n > 0 {
            return u32::try_from(n).unwrap_or(u32::MAX);
        }
    }
    std::thread::available_parallelism().map_or(0, |n| n.get() as u32)
}

/// The calling thread's Linux thread id (0 elsewhere).
pub fn current_tid() -> u32 {
    #[cfg(target_os = "linux")]
    {
        // SAFETY: gettid has no preconditions and cannot fail.
        let tid = unsafe { libc::gettid() };
        u32::try_from(tid).unwrap_or(0)
    }
    #[cfg(not(target_os = "linux"))]
    {
        0
    }
}

/// The process's context switches, all threads (`getrusage(RUSAGE_SELF)`).
pub(crate) fn rusage_ctx_switches() -> Option<CtxSwitches> {
    #[cfg(unix)]
    {
        // SAFETY: rusage is plain integers; getrusage fills it and has no other effect.
        let mut ru: libc::rusage = unsafe { std::mem::zeroed() };
        if unsafe { libc::getrusage(libc::RUSAGE_SELF, &mut ru) } == 0 {
            return Some(CtxSwitches {
                voluntary: ru.ru_nvcsw.max(0) as u64,
                nonvoluntary: ru.ru_nivcsw.max(0) as u64,
            });
        }
    }
    None
}
