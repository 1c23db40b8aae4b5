//! Sharding a frozen schedule across processes (Kubernetes Indexed Job pods), pure: which
//! session goes to which shard ([`assign`]), how a shared start instant becomes a local
//! deadline and when a shard is late ([`start`]), the 4-timestamp clock-offset estimator and
//! the merged window's uncertainty ([`clock`]), and the plan and evidence types the manifest
//! records. `docs/scale-out.md` gives the rules.

pub mod assign;
pub mod clock;
pub mod start;

use serde::{Deserialize, Serialize};

/// `--start-tolerance` default: a shard that reaches T0 more than this late exits.
pub const DEFAULT_START_TOLERANCE_NS: u64 = 50_000_000;
/// `--clock-samples` default: 4-timestamp exchanges at each end of the run.
pub const DEFAULT_CLOCK_SAMPLES: u32 = 32;

/// One shard's part of a run: `profile --shard-index I --shard-count N` and its start and
/// clock options. Recorded in the manifest's plan.
#[derive(Serialize, Deserialize, Clone, Debug, PartialEq)]
pub struct ShardPlan {
    pub index: u32,
    pub count: u32,
    /// `--start-at`: T0 as Unix ns, in the time reference's clock when there is one (else
    /// this host's wall clock).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub start_at_unix_ns: Option<u64>,
    /// `--start-tolerance`: later than this past T0 is a late start (exit 6).
    pub start_tolerance_ns: u64,
    /// `--time-reference HOST:PORT`: the `inferbench time-server` the offsets are measured
    /// against (UDP).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub time_reference: Option<String>,
    /// `--clock-samples`: exchanges at the start and at the end; the minimum-delay one counts.
    pub clock_samples: u32,
    /// Hidden test flag: this process reads its wall clock this far off (ns), so that a
    /// local simulation has clocks that disagree.
    #[serde(default, skip_serializing_if = "is_zero")]
    pub test_clock_offset_ns: i64,
}

fn is_zero(v: &i64) -> bool {
    *v == 0
}

/// What a shard records in its manifest (`shard`): which part it ran, the digest of the
/// whole schedule it was cut from, its start and its clock evidence.
#[derive(Serialize, Deserialize, Clone, Debug, PartialEq)]
pub struct ShardEvidence {
    pub index: u32,
    pub count: u32,
    /// `sha256:` of the unsharded frozen schedule (load mode, counts, every session's
    /// conversation, offset and shard): equal on every shard of one run.
    pub schedule_sha256: String,
    /// Sessions and requests of the whole schedule, and this shard's share (None when the
    /// schedule is open-ended: a `--benchmark-duration` run in concurrency mode).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub total_sessions: Option<u64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub sessions: Option<u64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub requests: Option<u64>,
    /// This shard's concurrency (or rate ceiling) after the split.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub concurrency: Option<usize>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub start: Option<StartEvidence>,
    pub clock_start: ClockEvidence,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub clock_end: Option<ClockEvidence>,
    /// The shard reached T0 too late and ran nothing: merge refuses the set.
    pub late: bool,
}

/// How a shard started against `--start-at`.
#[derive(Serialize, Deserialize, Clone, Debug, PartialEq)]
pub struct StartEvidence {
    /// T0 (Unix ns, the reference's clock when there is one).
    pub start_at_unix_ns: u64,
    pub tolerance_ns: u64,
    /// Whether T0 was read in the reference's clock (a `--time-reference` was measured) or
    /// this host's wall clock.
    pub reference_clock: bool,
    /// Actual start of the profiling phase minus T0, both in the reference's clock (ns;
    /// negative: early). Known to ± this shard's ε.
    pub start_lag_ns: i64,
}

/// One clock measurement: the kernel's own estimate and the exchange with the reference.
#[derive(Serialize, Deserialize, Clone, Debug, PartialEq)]
pub struct ClockEvidence {
    /// This host's wall clock when it was taken (Unix ns, the test offset included).
    pub taken_at_unix_ns: u64,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub kernel: Option<KernelClock>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub reference: Option<clock::OffsetEstimate>,
    /// Why the exchange is missing or failed, when it is.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub reference_error: Option<String>,
}

/// The kernel's read-only `adjtimex` (`modes = 0`): what chronyd or ntpd told it.
#[derive(Serialize, Deserialize, Clone, Debug, PartialEq)]
pub struct KernelClock {
    /// The call's return value: `TIME_OK` 0 … `TIME_ERROR` 5 (clock not synchronized).
    pub state: i32,
    /// `STA_UNSYNC` clear and the state not `TIME_ERROR`.
    pub synchronized: bool,
    /// The raw `status` bits.
    pub status: i64,
    /// Estimated error to UTC (µs): the ± bound when the clock is synchronized.
    pub esterror_us: i64,
    /// Maximum error (µs).
    pub maxerror_us: i64,
}

impl KernelClock {
    /// The ± bound to UTC this host's clock claims (ns), when synchronized.
    pub fn bound_ns(&self) -> Option<u64> {
        (self.synchronized && self.esterror_us >= 0).then(|| self.esterror_us as u64 * 1000)
    }
}

/// What `inferbench merge` records in the merged run's manifest (`merge`).
#[derive(Serialize, Deserialize, Clone, Debug, PartialEq)]
pub struct MergeEvidence {
    pub shard_count: u32,
    pub schedule_sha256: String,
    /// The merged window W (first start → last end over every shard, reference clock, ns).
    pub window_ns: u64,
    /// |ΔW| ≤ ε_a + ε_b: the shards that define the window's start (a) and end (b); None when
    /// a shard's offset has no bound (no reference and an unsynchronized kernel clock).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub window_bound_ns: Option<u64>,
    /// The same bound relative to W (ppm): the bound on every throughput of the run.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub window_bound_ppm: Option<f64>,
    /// 2·max εᵢ: the bound whatever shards define the edges.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub max_bound_ns: Option<u64>,
    /// The window without the offsets applied (each shard's own wall clock).
    pub raw_window_ns: u64,
    pub start_shard: u32,
    pub end_shard: u32,
    pub shards: Vec<MergedShard>,
}

/// One shard as the merge used it.
#[derive(Serialize, Deserialize, Clone, Debug, PartialEq)]
pub struct MergedShard {
    pub index: u32,
    pub dir: String,
    pub benchmark_id: String,
    pub records: u64,
    /// θ at the start and at the end (ns added to the shard's clock to read the reference's).
    pub offset_start_ns: i64,
    pub offset_end_ns: i64,
    /// ε (ns), None when unbounded.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub epsilon_ns: Option<u64>,
    /// (θ_end − θ_start) / elapsed, in ppm.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub drift_ppm: Option<f64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub start_lag_ns: Option<i64>,
    /// The host the shard ran on (its manifest's `host`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub host: Option<crate::manifest::HostIdentity>,
    /// The shard's clock evidence at its start and end, as its manifest recorded it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub clock_start: Option<ClockEvidence>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub clock_end: Option<ClockEvidence>,
}
