//! Sharding flags (docs/scale-out.md): `profile --shard-index/--shard-count`, the shared
//! start and the clock evidence; `merge`, `time-server` and `kube render`. Not AIPerf's
//! (its `aiperf kube` runs a live controller instead).

use std::path::PathBuf;

use clap::{Args, Subcommand};
use inferbench_core::shard::{DEFAULT_CLOCK_SAMPLES, ShardPlan};

#[derive(Args, Debug, Clone, Default)]
pub struct ShardArgs {
    /// Split the frozen schedule into N shards (sessions whole, assigned from the seed) and
    /// run one of them; `inferbench merge` joins the shards' directories.
    #[arg(long = "shard-count", value_name = "N")]
    pub shard_count: Option<u32>,
    /// The shard this process runs, 0 to N−1 (default: $JOB_COMPLETION_INDEX, as a
    /// Kubernetes Indexed Job sets it).
    #[arg(long = "shard-index", value_name = "I")]
    pub shard_index: Option<u32>,
    /// T0: start the profiling phase at this wall time, in the time reference's clock when
    /// --time-reference is given: Unix seconds (`1767225600.25`) or UTC
    /// (`2026-01-01T00:00:00.250Z`). Converted once into a monotonic deadline.
    #[arg(long = "start-at", value_name = "T0")]
    pub start_at: Option<String>,
    /// A shard that reaches T0 later than this (ms) runs nothing and exits 6.
    #[arg(long = "start-tolerance", value_name = "MS", default_value_t = 50.0)]
    pub start_tolerance_ms: f64,
    /// HOST:PORT of an `inferbench time-server` (UDP): this shard's clock offset is measured
    /// against it at the start and the end (4-timestamp exchanges, the minimum-delay one
    /// kept).
    #[arg(long = "time-reference", value_name = "HOST:PORT")]
    pub time_reference: Option<String>,
    /// Exchanges with the time reference at each end of the run.
    #[arg(long = "clock-samples", value_name = "K", default_value_t = DEFAULT_CLOCK_SAMPLES)]
    pub clock_samples: u32,
    /// Tests only: read this host's wall clock this many ms off.
    #[arg(
        long = "test-clock-offset-ms",
        value_name = "MS",
        hide = true,
        allow_hyphen_values = true
    )]
    pub test_clock_offset_ms: Option<f64>,
}

/// The shard part of the plan (None without --shard-count); every error names its flag.
pub fn shard_plan(a: &super::ProfileArgs) -> Result<Option<ShardPlan>, String> {
    shard_plan_with(&a.shard, a.num_profile_runs, |k| std::env::var(k).ok())
}

fn shard_plan_with(
    a: &ShardArgs,
    runs: usize,
    env: impl Fn(&str) -> Option<String>,
) -> Result<Option<ShardPlan>, String> {
    let Some(count) = a.shard_count else {
        for (given, flag) in [
            (a.shard_index.is_some(), "--shard-index"),
            (a.start_at.is_some(), "--start-at"),
            (a.time_reference.is_some(), "--time-reference"),
            (a.test_clock_offset_ms.is_some(), "--test-clock-offset-ms"),
        ] {
            if given {
                return Err(format!("{flag} applies to a shard: add --shard-count N"));
            }
        }
        return Ok(None);
    };
    if count == 0 {
        return Err("--shard-count 0: must be at least 1".into());
    }
    let index = match a.shard_index {
        Some(i) => i,
        None => {
            let v = env("JOB_COMPLETION_INDEX").ok_or(
                "--shard-count needs --shard-index I (or JOB_COMPLETION_INDEX in the environment)",
            )?;
            v.trim().parse().map_err(|_| {
                format!("JOB_COMPLETION_INDEX {v:?}: not a shard index (a whole number)")
            })?
        }
    };
    if index >= count {
        return Err(format!(
            "--shard-index {index}: must be below --shard-count {count}"
        ));
    }
    if runs > 1 {
        return Err(
            "--num-profile-runs with --shard-count: each repeat would need its own start; run the set again instead"
                .into(),
        );
    }
    if !(a.start_tolerance_ms.is_finite() && a.start_tolerance_ms >= 0.0) {
        return Err(format!(
            "--start-tolerance {}: must be a number of ms ≥ 0",
            a.start_tolerance_ms
        ));
    }
    if a.clock_samples == 0 {
        return Err("--clock-samples 0: must be at least 1".into());
    }
    let start_at_unix_ns = a
        .start_at
        .as_deref()
        .map(|s| parse_start_at(s).map_err(|e| format!("--start-at {s:?}: {e}")))
        .transpose()?;
    let test_clock_offset_ns = match a.test_clock_offset_ms {
        Some(ms) if ms.is_finite() && ms.abs() <= 86_400_000.0 => (ms * 1e6).round() as i64,
        Some(ms) => return Err(format!("--test-clock-offset-ms {ms}: out of range")),
        None => 0,
    };
    Ok(Some(ShardPlan {
        index,
        count,
        start_at_unix_ns,
        start_tolerance_ns: (a.start_tolerance_ms * 1e6).round() as u64,
        time_reference: a.time_reference.clone(),
        clock_samples: a.clock_samples,
        test_clock_offset_ns,
    }))
}

/// Unix seconds (fractions allowed) or `YYYY-MM-DDTHH:MM:SS[.frac]Z`, as Unix ns.
pub fn parse_start_at(s: &str) -> Result<u64, String> {
    let s = s.trim();
    if let Ok(secs) = s.parse::<f64>() {
        if !(secs.is_finite() && secs > 0.0 && secs < 1e10) {
            return Err("Unix seconds must be a positive number before the year 2286".into());
        }
        return Ok((secs * 1e9).round() as u64);
    }
    let bad = || "not Unix seconds nor a UTC time like 2026-01-01T00:00:00Z".to_string();
    let body = s.strip_suffix('Z').ok_or_else(bad)?;
    let (date, time) = body.split_once('T').ok_or_else(bad)?;
    let d: Vec<&str> = date.split('-').collect();
    let (hms, frac) = time.split_once('.').unwrap_or((time, ""));
    let t: Vec<&str> = hms.split(':').collect();
    if d.len() != 3 || t.len() != 3 || !frac.chars().all(|c| c.is_ascii_digit()) || frac.len() > 9 {
        return Err(bad());
    }
    let num = |x: &str| x.parse::<i64>().map_err(|_| bad());
    let (y, mo, da) = (num(d[0])?, num(d[1])?, num(d[2])?);
    let (h, mi, se) = (num(t[0])?, num(t[1])?, num(t[2])?);
    if !(1970..=2200).contains(&y)
        || !(1..=12).contains(&mo)
        || !(1..=31).contains(&da)
        || h > 23
        || mi > 59
        || se > 60
    {
        return Err(bad());
    }
    // Days from the civil date (Howard Hinnant's algorithm).
    let yy = if mo <= 2 { y - 1 } else { y };
    let era = yy.div_euclid(400);
    let yoe = yy - era * 400;
    let mp = (mo + 9) % 12;
    let doy = (153 * mp + 2) / 5 + da - 1;
    let doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;
    let days = era * 146_097 + doe - 719_468;
    let frac_ns = if frac.is_empty() {
        0
    } else {
        num(frac)? * 10i64.pow(9 - frac.len() as u32)
    };
    Ok(((days * 86_400 + h * 3600 + mi * 60 + se) * 1_000_000_000 + frac_ns) as u64)
}

/// `inferbench merge SHARD_DIR... --output-dir DIR`.
#[derive(Args, Debug)]
pub struct MergeArgs {
    /// The shards' run directories (every shard of the set, once).
    #[arg(value_name = "SHARD_DIR", required = true, num_args = 1..)]
    pub dirs: Vec<PathBuf>,
    /// The merged run directory (new).
    #[arg(long = "output-dir", value_name = "DIR")]
    pub output_dir: PathBuf,
}

/// `inferbench time-server`.
#[derive(Args, Debug)]
pub struct TimeServerArgs {
    /// UDP address to answer on (`127.0.0.1:0` picks a free port; the address is printed).
    #[arg(long, value_name = "ADDR", default_value = "0.0.0.0:9123")]
    pub listen: String,
}

/// `inferbench kube …`.
#[derive(Args, Debug)]
pub struct KubeArgs {
    #[command(subcommand)]
    pub command: KubeCommand,
}

#[derive(Subcommand, Debug)]
pub enum KubeCommand {
    /// Print the manifests of a sharded run (an Indexed Job, its headless Service, the
    /// frozen inputs as a ConfigMap) for `kubectl apply -f -`.
    Render(Box<KubeRenderArgs>),
    /// Bring a finished run's shard directories back and merge them: without --from, print
    /// the `kubectl` commands that copy them off the results volume; with --from DIR (the
    /// copy), check that every shard is there once and run `merge`.
    Collect(Box<KubeCollectArgs>),
}

/// `inferbench kube collect --shard-count N [--from DIR --output-dir DIR]`.
#[derive(Args, Debug)]
pub struct KubeCollectArgs {
    /// The run's shard count (as given to `kube render`).
    #[arg(long = "shard-count", value_name = "N")]
    pub shard_count: u32,
    /// The run's name (`kube render --name`).
    #[arg(long, default_value = "inferbench")]
    pub name: String,
    #[arg(long, default_value = "default")]
    pub namespace: String,
    /// The results claim (`kube render --results-pvc`).
    #[arg(
        long = "results-pvc",
        value_name = "CLAIM",
        default_value = "inferbench-results"
    )]
    pub results_pvc: String,
    /// The helper pod's image for `kubectl cp`: it needs `tar` and `sleep`.
    #[arg(long, value_name = "IMAGE", default_value = "busybox:1.36")]
    pub image: String,
    /// The local copy of the run's results (`<name>/`, holding `shard-<I>/`). Default in
    /// the printed commands: ./<name>.
    #[arg(long, value_name = "DIR")]
    pub from: Option<PathBuf>,
    /// The merged run directory. Default: ./<name>-merged.
    #[arg(long = "output-dir", value_name = "DIR")]
    pub output_dir: Option<PathBuf>,
}

/// `inferbench kube render --shard-count N --image IMAGE [...] -- profile FLAGS...`.
#[derive(Args, Debug)]
pub struct KubeRenderArgs {
    /// Pods, one shard each.
    #[arg(long = "shard-count", value_name = "N")]
    pub shard_count: u32,
    /// The container image holding `inferbench`.
    #[arg(long, value_name = "IMAGE")]
    pub image: String,
    /// The Job's name (and the Service's, and the ConfigMap's prefix).
    #[arg(long, default_value = "inferbench")]
    pub name: String,
    #[arg(long, default_value = "default")]
    pub namespace: String,
    /// A ReadWriteMany PersistentVolumeClaim the shards write their directories to.
    #[arg(
        long = "results-pvc",
        value_name = "CLAIM",
        default_value = "inferbench-results"
    )]
    pub results_pvc: String,
    /// CPU request and limit of each pod (Kubernetes quantity).
    #[arg(long, default_value = "2")]
    pub cpu: String,
    /// Memory request and limit of each pod.
    #[arg(long, default_value = "4Gi")]
    pub memory: String,
    /// KEY=VALUE node selector (repeatable).
    #[arg(long = "node-selector", value_name = "KEY=VALUE")]
    pub node_selector: Vec<String>,
    /// KEY[=VALUE]:EFFECT toleration (repeatable), e.g. dedicated=bench:NoSchedule.
    #[arg(long = "toleration", value_name = "KEY[=VALUE]:EFFECT")]
    pub toleration: Vec<String>,
    /// The Job's hard deadline (s).
    #[arg(long = "active-deadline-seconds", default_value_t = 7200)]
    pub active_deadline_seconds: i64,
    /// How long the finished Job (and its pods, for `kubectl cp`) are kept (s).
    #[arg(long = "ttl-seconds-after-finished", default_value_t = 86_400)]
    pub ttl_seconds_after_finished: i32,
    /// A file to mount for the run (e.g. `--input-file`) as a ConfigMap (repeatable);
    /// mounted under /inferbench/inputs/.
    #[arg(long = "config-file", value_name = "FILE")]
    pub config_file: Vec<PathBuf>,
    /// T0 for every shard (`profile --start-at`): Unix seconds or a UTC time; leave it out
    /// to start each shard when it is ready.
    #[arg(long = "start-at", value_name = "T0")]
    pub start_at: Option<String>,
    /// `yaml` or `json`.
    #[arg(long, default_value = "yaml")]
    pub output: String,
    /// NAME/KEY: a Secret key holding the API key; the shard container gets it as
    /// INFERBENCH_API_KEY (which `profile --api-key` reads). Never give --api-key after --.
    #[arg(long = "api-key-secret", value_name = "NAME/KEY")]
    pub api_key_secret: Option<String>,
    /// HEADER=NAME/KEY: a secret header's value from a Secret key, through an env variable
    /// Kubernetes expands in the args (repeatable). The header's name must mark it secret.
    #[arg(long = "header-secret", value_name = "HEADER=NAME/KEY")]
    pub header_secret: Vec<String>,
    /// `profile` and its flags, after `--` (the shard and start flags are added per pod).
    #[arg(last = true, value_name = "PROFILE FLAGS", required = true)]
    pub profile: Vec<String>,
}

#[cfg(test)]
mod tests {
    use super::*;

    fn args(count: Option<u32>, index: Option<u32>) -> ShardArgs {
        ShardArgs {
            shard_count: count,
            shard_index: index,
            start_tolerance_ms: 50.0,
            clock_samples: 32,
            ..Default::default()
        }
    }

    #[test]
    fn the_index_comes_from_the_flag_or_the_job() {
        let env =
            |v: &'static str| move |k: &str| (k == "JOB_COMPLETION_INDEX").then(|| v.to_string());
        let p = shard_plan_with(&args(Some(4), None), 1, env("2"))
            .unwrap()
            .unwrap();
        assert_eq!((p.index, p.count, p.start_tolerance_ns), (2, 4, 50_000_000));
        let p = shard_plan_with(&args(Some(4), Some(1)), 1, env("2"))
            .unwrap()
            .unwrap();
        assert_eq!(p.index, 1);
        let e = shard_plan_with(&args(Some(4), None), 1, env("x")).unwrap_err();
        assert!(e.contains("JOB_COMPLETION_INDEX \"x\""), "{e}");
        let e = shard_plan_with(&args(Some(4), None), 1, |_| None).unwrap_err();
        assert!(e.contains("--shard-index"), "{e}");
        let e = shard_plan_with(&args(Some(4), Some(4)), 1, |_| None).unwrap_err();
        assert!(
            e.contains("--shard-index 4: must be below --shard-count 4"),
            "{e}"
        );
        let e = shard_plan_with(&args(None, Some(1)), 1, |_| None).unwrap_err();
        assert!(e.contains("--shard-index applies to a shard"), "{e}");
        assert_eq!(shard_plan_with(&args(None, None), 1, |_| None), Ok(None));
    }

    #[test]
    fn start_times_parse_by_hand() {
        // 2026-01-01T00:00:00Z = 20454 days after 1970-01-01 = 1 767 225 600 s.
        assert_eq!(
            parse_start_at("2026-01-01T00:00:00Z"),
            Ok(1_767_225_600_000_000_000)
        );
        assert_eq!(
            parse_start_at("2026-01-01T00:00:01.25Z"),
            Ok(1_767_225_601_250_000_000)
        );
        // 2024-02-29 (leap day): 19782 days.
        assert_eq!(
            parse_start_at("2024-02-29T12:00:00Z"),
            Ok((19_782 * 86_400 + 43_200) * 1_000_000_000)
        );
        assert_eq!(
            parse_start_at("1767225600.5"),
            Ok(1_767_225_600_500_000_000)
        );
        assert!(parse_start_at("2026-01-01 00:00:00").is_err());
        assert!(parse_start_at("-5").is_err());
    }
}
