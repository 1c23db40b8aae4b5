//! The client's own cgroup v2 (telemetry.md §4.2): found from `/proc/self/cgroup` (`0::/path`)
//! and the cgroup2 mount in `/proc/self/mountinfo` (on hybrid hosts, such as this one, it is
//! `/sys/fs/cgroup/unified`, not `/sys/fs/cgroup`). Every file is read best effort: a missing
//! or malformed one is `None`.

use std::path::{Path, PathBuf};

use serde::{Deserialize, Serialize};

use super::psi::{PressureFile, read_pressure};

/// `cpu.stat`. The first three are always there; the throttling counters only with the cpu
/// controller enabled for the group.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct CpuStat {
    pub usage_usec: u64,
    pub user_usec: u64,
    pub system_usec: u64,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub nr_periods: Option<u64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub nr_throttled: Option<u64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub throttled_usec: Option<u64>,
}

/// `cpu.max`: `$MAX $PERIOD [$BURST]`; `max_usec` None means `max` (no quota).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct CpuMax {
    pub max_usec: Option<u64>,
    pub period_usec: u64,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub burst_usec: Option<u64>,
}

impl CpuMax {
    /// The quota in CPUs (MAX/PERIOD); None without a quota.
    pub fn cpus(&self) -> Option<f64> {
        let max = self.max_usec?;
        (self.period_usec > 0).then(|| max as f64 / self.period_usec as f64)
    }
}

/// `memory.events` (cumulative counts).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct MemoryEvents {
    pub low: u64,
    pub high: u64,
    pub max: u64,
    pub oom: u64,
    pub oom_kill: u64,
    /// Socket buffers throttled by the memory controller (newer kernels).
    #[serde(default)]
    pub sock_throttled: u64,
}

/// One reading of the client's cgroup v2.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct CgroupSample {
    /// The group is the hierarchy's root (`0::/`, as on a host without systemd or in a
    /// container without a cgroup namespace of its own): its `cpu.stat` and pressure are
    /// the whole machine's, not the client's alone.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub is_root: bool,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cpu_stat: Option<CpuStat>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cpu_max: Option<CpuMax>,
    /// Number of CPUs in `cpuset.cpus.effective`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cpuset_cpus: Option<u32>,
    /// CPUs online on the host at this sample.
    #[serde(default)]
    pub online_cpus: u32,
    // cpu.pressure is `Pressure::cgroup_cpu` (where it was before this struct existed).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub memory_pressure: Option<PressureFile>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub io_pressure: Option<PressureFile>,
    /// `cgroup.pressure`: false when PSI accounting is switched off for the group (its
    /// `*.pressure` files then say nothing).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub pressure_enabled: Option<bool>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub memory_current: Option<u64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub memory_peak: Option<u64>,
    /// `memory.max` in bytes; None when missing or `max`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub memory_max: Option<u64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub memory_events: Option<MemoryEvents>,
    /// `memory.stat` `sock`: network buffer bytes.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub sock_bytes: Option<u64>,
}

impl CgroupSample {
    /// N_eff = min(MAX/PERIOD, |cpuset.cpus.effective|, online CPUs), over what is known.
    pub fn n_eff(&self) -> Option<f64> {
        [
            self.cpu_max.and_then(|m| m.cpus()),
            self.cpuset_cpus.map(f64::from),
            (self.online_cpus > 0).then_some(f64::from(self.online_cpus)),
        ]
        .into_iter()
        .flatten()
        .reduce(f64::min)
    }
}

/// The cgroup v2 path from `/proc/self/cgroup`, relative to the mount (`"0::/a/b"` → `"a/b"`).
pub fn cgroup_v2_path(text: &str) -> Option<&str> {
    text.lines()
        .find_map(|line| line.strip_prefix("0::"))
        .map(|p| p.trim().trim_start_matches('/'))
}

/// The cgroup2 mount in `/proc/self/mountinfo`: (mount point, root of the mount inside the
/// hierarchy). Fields: `id parent maj:min root mountpoint options [optional…] - fstype …`;
/// paths escape space, tab, newline and backslash in octal (`\040`).
pub fn cgroup2_mount(mountinfo: &str) -> Option<(PathBuf, String)> {
    mountinfo.lines().find_map(|line| {
        let (pre, post) = line.split_once(" - ")?;
        if post.split_ascii_whitespace().next()? != "cgroup2" {
            return None;
        }
        let f: Vec<&str> = pre.split_ascii_whitespace().collect();
        let (root, point) = (f.get(3)?, f.get(4)?);
        Some((PathBuf::from(unescape(point)), unescape(root)))
    })
}

fn unescape(s: &str) -> String {
    let b = s.as_bytes();
    let mut out = Vec::with_capacity(b.len());
    let mut i = 0;
    while i < b.len() {
        if b[i] == b'\\'
            && i + 3 < b.len()
            && b[i + 1..i + 4].iter().all(|c| (b'0'..=b'7').contains(c))
        {
            let v = (b[i + 1] - b'0') * 64 + (b[i + 2] - b'0') * 8 + (b[i + 3] - b'0');
            out.push(v);
            i += 4;
        } else {
            out.push(b[i]);
            i += 1;
        }
    }
    String::from_utf8_lossy(&out).into_owned()
}

/// The directory of the group: the mount point joined with the group's path, less the
/// mount's own root when the hierarchy is mounted from below its top (a bind mount).
pub fn cgroup_dir(cgroup: &str, mountinfo: &str) -> Option<PathBuf> {
    let rel = cgroup_v2_path(cgroup)?;
    let (point, root) = cgroup2_mount(mountinfo)?;
    let root = root.trim_start_matches('/');
    let rel = rel
        .strip_prefix(root)
        .map_or(rel, |r| r.trim_start_matches('/'));
    Some(if rel.is_empty() {
        point
    } else {
        point.join(rel)
    })
}

/// Flat-keyed files (`cpu.stat`, `memory.events`, `memory.stat`): `key value` lines. Lines
/// that are not `key count` are skipped (forward compatibility).
fn flat_keyed(text: &str) -> impl Iterator<Item = (&str, u64)> {
    text.lines().filter_map(|l| {
        let mut t = l.split_ascii_whitespace();
        let (k, v) = (t.next()?, t.next()?);
        Some((k, v.parse::<u64>().ok()?))
    })
}

/// `cpu.stat`; an error when one of the three always-present keys is missing.
pub fn parse_cpu_stat(text: &str) -> Result<CpuStat, String> {
    let (mut usage, mut user, mut system) = (None, None, None);
    let mut s = CpuStat::default();
    for (k, v) in flat_keyed(text) {
        match k {
            "usage_usec" => usage = Some(v),
            "user_usec" => user = Some(v),
            "system_usec" => system = Some(v),
            "nr_periods" => s.nr_periods = Some(v),
            "nr_throttled" => s.nr_throttled = Some(v),
            "throttled_usec" => s.throttled_usec = Some(v),
            _ => {}
        }
    }
    match (usage, user, system) {
        (Some(u), Some(us), Some(sy)) => {
            s.usage_usec = u;
            s.user_usec = us;
            s.system_usec = sy;
            Ok(s)
        }
        _ => Err("cpu.stat: lacks one of usage_usec, user_usec, system_usec".into()),
    }
}

/// `cpu.max`: 1 to 3 tokens (`max`, `max 100000`, `50000 100000`, `50000 100000 10000`); a
/// missing period is the kernel's default, 100000 µs.
pub fn parse_cpu_max(text: &str) -> Result<CpuMax, String> {
    let t: Vec<&str> = text.split_ascii_whitespace().collect();
    if t.is_empty() || t.len() > 3 {
        return Err(format!("cpu.max: {} tokens, expected 1 to 3", t.len()));
    }
    let num = |s: &str| {
        s.parse::<u64>()
            .map_err(|_| format!("cpu.max: `{s}` is not a count"))
    };
    let max_usec = match t[0] {
        "max" => None,
        s => Some(num(s)?),
    };
    let period_usec = t.get(1).map_or(Ok(100_000), |s| num(s))?;
    let burst_usec = t.get(2).map(|s| num(s)).transpose()?;
    Ok(CpuMax {
        max_usec,
        period_usec,
        burst_usec,
    })
}

/// The number of CPUs in a list such as `0-3,8,10-11` (7); an empty list is 0.
pub fn parse_cpu_list(text: &str) -> Result<u32, String> {
    let mut n = 0u32;
    for part in text.trim().split(',').filter(|p| !p.is_empty()) {
        let bad = || format!("cpu list: bad part `{part}`");
        let (a, b) = match part.split_once('-') {
            Some((a, b)) => (a, b),
            None => (part, part),
        };
        let a: u32 = a.parse().map_err(|_| bad())?;
        let b: u32 = b.parse().map_err(|_| bad())?;
        if b < a {
            return Err(bad());
        }
        n = n.saturating_add(b - a + 1);
    }
    Ok(n)
}

/// `memory.events`; keys it does not know are skipped, missing ones are 0.
pub fn parse_memory_events(text: &str) -> MemoryEvents {
    let mut e = MemoryEvents::default();
    for (k, v) in flat_keyed(text) {
        match k {
            "low" => e.low = v,
            "high" => e.high = v,
            "max" => e.max = v,
            "oom" => e.oom = v,
            "oom_kill" => e.oom_kill = v,
            "sock_throttled" => e.sock_throttled = v,
            _ => {}
        }
    }
    e
}

/// `sock` of `memory.stat`.
pub fn parse_memory_stat_sock(text: &str) -> Option<u64> {
    flat_keyed(text).find(|(k, _)| *k == "sock").map(|(_, v)| v)
}

/// A single number (`memory.current`), or None for `max` or junk.
fn parse_bytes(text: &str) -> Option<u64> {
    text.trim().parse().ok()
}

/// Where the group's files are, resolved once per run.
#[derive(Clone, Debug)]
pub(crate) struct CgroupProbe {
    pub(crate) dir: Option<PathBuf>,
    is_root: bool,
}

impl CgroupProbe {
    pub(crate) fn locate() -> Self {
        let cg = std::fs::read_to_string("/proc/self/cgroup").unwrap_or_default();
        let dir = std::fs::read_to_string("/proc/self/mountinfo")
            .ok()
            .and_then(|mi| cgroup_dir(&cg, &mi))
            .filter(|d| d.is_dir());
        CgroupProbe {
            is_root: cgroup_v2_path(&cg) == Some(""),
            dir,
        }
    }

    pub(crate) fn cpu_pressure(&self) -> Option<PressureFile> {
        read_pressure(&self.dir.as_ref()?.join("cpu.pressure"))
    }

    pub(crate) fn sample(&self, online_cpus: u32) -> Option<CgroupSample> {
        let dir = self.dir.as_deref()?;
        let read = |name: &str| std::fs::read_to_string(dir.join(name)).ok();
        let path = |name: &str| -> PathBuf { Path::new(dir).join(name) };
        Some(CgroupSample {
            is_root: self.is_root,
            cpu_stat: read("cpu.stat").and_then(|t| parse_cpu_stat(&t).ok()),
            cpu_max: read("cpu.max").and_then(|t| parse_cpu_max(&t).ok()),
            cpuset_cpus: read("cpuset.cpus.effective").and_then(|t| parse_cpu_list(&t).ok()),
            online_cpus,
            memory_pressure: read_pressure(&path("memory.pressure")),
            io_pressure: read_pressure(&path("io.pressure")),
            pressure_enabled: read("cgroup.pressure").and_then(|t| match t.trim() {
                "0" => Some(false),
                "1" => Some(true),
                _ => None,
            }),
            memory_current: read("memory.current").and_then(|t| parse_bytes(&t)),
            memory_peak: read("memory.peak").and_then(|t| parse_bytes(&t)),
            memory_max: read("memory.max").and_then(|t| parse_bytes(&t)),
            memory_events: read("memory.events").map(|t| parse_memory_events(&t)),
            sock_bytes: read("memory.stat").and_then(|t| parse_memory_stat_sock(&t)),
        })
    }
}
