//! The client's own resource use during a run: CPU time, RSS and thread count of this process,
//! and Linux pressure stall information (PSI), sampled about once a second so that a report can
//! show whether the client machine itself was busy or stalled while it measured the server.
//!
//! Everything here is best effort: a file that is missing or unreadable (not Linux, PSI disabled,
//! no cgroup v2) yields `None` or zeros, never an error or a panic.

use std::path::{Path, PathBuf};
use std::time::Duration;

use serde::{Deserialize, Serialize};
use tokio::sync::watch;
use tokio::time::{Instant, MissedTickBehavior};

use crate::clock::Clock;

/// One reading of the client's resources.
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
}

/// One line of a PSI file. `avg*` are the % of time stalled over the last 10/60/300 s, as the
/// kernel computes them; `total_us` is the cumulative stall time in µs.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct PressureLine {
    pub avg10: f64,
    pub avg60: f64,
    pub avg300: f64,
    pub total_us: u64,
}

/// A PSI file: `some` = at least one task stalled, `full` = all non-idle tasks stalled.
/// `full` is absent from `/proc/pressure/cpu` on kernels before 5.13.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct PressureFile {
    pub some: Option<PressureLine>,
    pub full: Option<PressureLine>,
}

/// The PSI files read at one sample; `None` when the file is missing or unreadable.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct Pressure {
    /// `/proc/pressure/cpu`
    pub cpu: Option<PressureFile>,
    /// `/proc/pressure/memory`
    pub memory: Option<PressureFile>,
    /// `/proc/pressure/io`
    pub io: Option<PressureFile>,
    /// `cpu.pressure` of this process's cgroup v2.
    pub cgroup_cpu: Option<PressureFile>,
}

/// Parses a PSI file (`/proc/pressure/*`, `<cgroup>/*.pressure`):
/// `some avg10=0.00 avg60=0.00 avg300=0.00 total=0\nfull avg10=...`.
///
/// Lines of an unknown kind are skipped (forward compatibility); a `some`/`full` line missing a
/// field or with an unparsable value, a repeated line, or text without any `some`/`full` line is
/// an error.
pub fn parse_pressure(text: &str) -> Result<PressureFile, String> {
    let mut file = PressureFile::default();
    for line in text.lines() {
        let mut tokens = line.split_ascii_whitespace();
        let Some(kind) = tokens.next() else {
            continue;
        };
        let slot = match kind {
            "some" => &mut file.some,
            "full" => &mut file.full,
            _ => continue,
        };
        if slot.is_some() {
            return Err(format!("pressure: repeated `{kind}` line"));
        }
        *slot = Some(parse_pressure_line(kind, tokens)?);
    }
    if file.some.is_none() && file.full.is_none() {
        return Err("pressure: no `some` or `full` line".to_string());
    }
    Ok(file)
}

fn parse_pressure_line<'a>(
    kind: &str,
    tokens: impl Iterator<Item = &'a str>,
) -> Result<PressureLine, String> {
    let (mut avg10, mut avg60, mut avg300, mut total) = (None, None, None, None);
    for token in tokens {
        let (key, value) = token
            .split_once('=')
            .ok_or_else(|| format!("pressure: `{kind}` line: `{token}` is not key=value"))?;
        let avg = || -> Result<f64, String> {
            value
                .parse::<f64>()
                .ok()
                .filter(|v| v.is_finite() && *v >= 0.0)
                .ok_or_else(|| format!("pressure: `{kind}` line: bad {key} `{value}`"))
        };
        match key {
            "avg10" => avg10 = Some(avg()?),
            "avg60" => avg60 = Some(avg()?),
            "avg300" => avg300 = Some(avg()?),
            "total" => {
                total = Some(
                    value
                        .parse::<u64>()
                        .map_err(|_| format!("pressure: `{kind}` line: bad total `{value}`"))?,
                )
            }
            // Unknown keys are tolerated, as unknown line kinds are.
            _ => {}
        }
    }
    match (avg10, avg60, avg300, total) {
        (Some(avg10), Some(avg60), Some(avg300), Some(total_us)) => Ok(PressureLine {
            avg10,
            avg60,
            avg300,
            total_us,
        }),
        _ => Err(format!(
            "pressure: `{kind}` line lacks one of avg10, avg60, avg300, total"
        )),
    }
}

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

/// Reads this process's CPU time, RSS and threads, and the PSI files. Missing or unreadable
/// files give zeros / `None`, never an error.
pub fn sample(t_ns: u64) -> ResourceSample {
    Probe::new().sample(t_ns)
}

/// What [`sample`] needs that does not change during a run, resolved once by the sampler task.
struct Probe {
    ticks_per_s: u64,
    page_size: u64,
    cgroup_cpu_pressure: Option<PathBuf>,
}

impl Probe {
    fn new() -> Self {
        let (ticks_per_s, page_size) = sys_units();
        Probe {
            ticks_per_s,
            page_size,
            cgroup_cpu_pressure: cgroup_cpu_pressure_path(),
        }
    }

    fn ticks_to_ns(&self, ticks: u64) -> u64 {
        // u128 because USER_HZ need not divide 1e9 (1024 on alpha).
        let ns = u128::from(ticks) * 1_000_000_000 / u128::from(self.ticks_per_s);
        u64::try_from(ns).unwrap_or(u64::MAX)
    }

    fn sample(&self, t_ns: u64) -> ResourceSample {
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
            cpu: read_pressure(Path::new("/proc/pressure/cpu")),
            memory: read_pressure(Path::new("/proc/pressure/memory")),
            io: read_pressure(Path::new("/proc/pressure/io")),
            cgroup_cpu: self.cgroup_cpu_pressure.as_deref().and_then(read_pressure),
        };
        s
    }
}

fn read_pressure(path: &Path) -> Option<PressureFile> {
    // With PSI compiled in but disabled (psi=0), the files exist and reads fail: also `None`.
    std::fs::read_to_string(path)
        .ok()
        .and_then(|text| parse_pressure(&text).ok())
}

/// Clock ticks per second (USER_HZ, the unit of utime/stime) and the page size (the unit of
/// rss), with the usual values as fallbacks.
#[cfg(unix)]
fn sys_units() -> (u64, u64) {
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
fn sys_units() -> (u64, u64) {
    (100, 4096)
}

/// The `cpu.pressure` of this process's cgroup v2, from the `0::/path` line of
/// `/proc/self/cgroup`. Tries the unified mount and the hybrid layout's `unified/` mount.
fn cgroup_cpu_pressure_path() -> Option<PathBuf> {
    let text = std::fs::read_to_string("/proc/self/cgroup").ok()?;
    let rel = cgroup_v2_path(&text)?;
    ["/sys/fs/cgroup", "/sys/fs/cgroup/unified"]
        .iter()
        .map(|root| Path::new(root).join(rel).join("cpu.pressure"))
        .find(|p| p.is_file())
}

/// The cgroup v2 path from `/proc/self/cgroup`, relative to the mount (`"0::/a/b"` → `"a/b"`).
fn cgroup_v2_path(text: &str) -> Option<&str> {
    text.lines()
        .find_map(|line| line.strip_prefix("0::"))
        .map(|p| p.trim().trim_start_matches('/'))
}

/// Samples at start, then every `interval` on absolute deadlines, and once more when `stop`
/// becomes true (or its sender is dropped). The result is ordered by `t_ns`.
pub async fn run_sampler(
    clock: Clock,
    interval: Duration,
    mut stop: watch::Receiver<bool>,
) -> Vec<ResourceSample> {
    // tokio's interval panics on a zero period; anything below 10 ms would only measure itself.
    let interval = interval.max(Duration::from_millis(10));
    let probe = Probe::new();
    // Reading procfs is a few µs of in-memory work, cheap enough to do on the runtime thread.
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

/// Summarizes samples ordered by `t_ns` (as [`run_sampler`] returns them).
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

#[cfg(test)]
mod tests {
    use super::*;

    fn close(a: f64, b: f64) -> bool {
        (a - b).abs() < 1e-9
    }

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
}
