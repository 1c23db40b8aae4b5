//! Running a qualification: the same frozen workload at each client worker count of a
//! ladder, repeated and interleaved (1, 2, 4, 1, 2, 4, …) against one server, each run an
//! ordinary run directory; then each run's measurements are read back from its files and
//! [`crate::qualify::decide`] gives the verdict (docs/qualify.md).

use std::path::{Path, PathBuf};
use std::sync::Arc;

use serde_json::Value;

use crate::observer::Observer;
use crate::qualify::{Qualification, QualifySpec, RunEvidence, StepRun, Verdict};
use crate::sweep::{CellPlan, SweepPlan};
use crate::{Failure, exit};

/// The qualification's own files, at the root of its directory.
pub const QUALIFICATION_JSON: &str = "qualification.json";
pub const QUALIFICATION_MD: &str = "qualification.md";
pub const QUALIFICATION_TXT: &str = "qualification.txt";

/// What to run.
#[derive(Clone, Debug)]
pub struct LadderPlan {
    /// The run every step repeats (one cell; its `workers_max` is replaced by each step's).
    pub base: CellPlan,
    /// Worker counts, ascending, without repeats.
    pub ladder: Vec<usize>,
    /// Runs per worker count (interleaved).
    pub repeats: usize,
    pub spec: QualifySpec,
    /// Where the runs and the verdict go.
    pub root: PathBuf,
    pub cooldown_s: f64,
}

#[derive(Clone, Debug)]
pub struct QualifyOutcome {
    pub qualification: Qualification,
    pub root: PathBuf,
    /// 0 CLIENT_SUFFICIENT / SERVER_SATURATED, 1 CLIENT_LIMITED, 5 INCONCLUSIVE; a run
    /// that failed or was interrupted gives its own code.
    pub code: u8,
    pub console: String,
}

/// The ladder `1, 2, 4, …` up to `max` (always ending with `max`).
pub fn ladder_up_to(max: usize) -> Vec<usize> {
    let mut v = Vec::new();
    let mut w = 1;
    while w < max {
        v.push(w);
        w *= 2;
    }
    v.push(max.max(1));
    v
}

/// The directory name of one run of the ladder.
pub fn run_dir_name(workers: usize, repeat: usize) -> String {
    format!("workers_{workers}_run_{:02}", repeat + 1)
}

/// Runs every step and decides.
pub fn run_ladder(
    l: &LadderPlan,
    declared: &[inferbench_core::identity::Declaration],
    observer: Arc<dyn Observer>,
) -> Result<QualifyOutcome, Failure> {
    if l.ladder.len() < 2 {
        return Err(Failure::input(
            "qualify: the ladder needs at least two worker counts (--workers-ladder, or --workers-max 2 or more)",
        ));
    }
    if !(1..=20).contains(&l.repeats) {
        return Err(Failure::input(format!("--repeats {}: 1 to 20", l.repeats)));
    }
    let mut cells = Vec::new();
    for r in 0..l.repeats {
        for &w in &l.ladder {
            let mut c = l.base.clone();
            c.plan.workers_max = Some(w);
            c.parameters = vec![
                ("workers".into(), Value::from(w)),
                ("run".into(), Value::from(r + 1)),
            ];
            c.dir_name = Some(run_dir_name(w, r));
            let dir = l.root.join(run_dir_name(w, r));
            c.plan.artifacts.dir = l.root.to_string_lossy().into_owned();
            c.plan.artifacts.run_dir = dir.to_string_lossy().into_owned();
            cells.push(c);
        }
    }
    let sweep = SweepPlan {
        cells,
        runs: 1,
        confidence_level: l.base.plan.confidence_level,
        profile_run_cooldown_s: 0.0,
        parameter_sweep_cooldown_s: l.cooldown_s,
        disable_warmup_after_first: false,
        artifact_dir_given: true,
        sweep_mode: crate::SweepMode::Repeated,
        vary_seed_per_trial: false,
        convergence: None,
    };
    let ran = crate::sweep::run_sweep_declared(&sweep, declared, observer)?;
    let mut runs = Vec::new();
    for r in 0..l.repeats {
        for &w in &l.ladder {
            let dir = l.root.join(run_dir_name(w, r));
            if dir.join("inferbench_manifest.json").is_file() {
                runs.push(step_run(&dir, w, r)?);
            }
        }
    }
    let q = crate::qualify::decide(&l.spec, &runs);
    let console = crate::qualify::render_console(&q);
    write(&l.root, QUALIFICATION_TXT, console.as_bytes())?;
    write(
        &l.root,
        QUALIFICATION_MD,
        crate::qualify::render_markdown(&q).as_bytes(),
    )?;
    let json = serde_json::to_vec_pretty(&crate::qualify::to_json(&q))
        .map_err(|e| Failure::run(e.to_string()))?;
    write(&l.root, QUALIFICATION_JSON, &json)?;
    let code = if ran.code != exit::OK {
        ran.code
    } else {
        verdict_code(q.verdict)
    };
    Ok(QualifyOutcome {
        qualification: q,
        root: l.root.clone(),
        code,
        console,
    })
}

/// The exit code of a verdict.
pub fn verdict_code(v: Verdict) -> u8 {
    match v {
        Verdict::ClientSufficient | Verdict::ServerSaturated => exit::OK,
        Verdict::ClientLimited => exit::FAILED,
        Verdict::Inconclusive => exit::GATE_INCONCLUSIVE,
    }
}

fn write(dir: &Path, name: &str, bytes: &[u8]) -> Result<(), Failure> {
    let mut f = inferbench_artifacts::AtomicFile::create(dir, name)?;
    f.write_all(bytes)?;
    f.commit()?;
    Ok(())
}

fn read_json(path: &Path) -> Result<Option<Value>, Failure> {
    match std::fs::read_to_string(path) {
        Ok(t) => serde_json::from_str(&t)
            .map(Some)
            .map_err(|e| Failure::input(format!("{}: {e}", path.display()))),
        Err(_) => Ok(None),
    }
}

fn num(v: &Value, path: &[&str]) -> Option<f64> {
    let mut cur = v;
    for p in path {
        cur = cur.get(*p)?;
    }
    cur.as_f64()
}

/// One run's measurements, read back from its directory: the server's output-token rate
/// from `inferbench_server_metrics.json`, the client's from the summary, the evidence from
/// the summary's schedule rows and `inferbench_client_resources.json`.
pub fn step_run(dir: &Path, workers: usize, repeat: usize) -> Result<StepRun, Failure> {
    let summary = read_json(&dir.join("profile_export_aiperf.json"))?.unwrap_or(Value::Null);
    let manifest = read_json(&dir.join("inferbench_manifest.json"))?.unwrap_or(Value::Null);
    let server = crate::telemetry::read(dir)?;
    let view = server.as_ref().and_then(|f| f.servers.first().cloned());
    let rate = num(&manifest, &["plan", "load", "request_rate", "rate"]);
    // Achieved against what the schedule planned (a Poisson schedule's realised rate differs
    // from the nominal one), as MLPerf's "scheduled" vs "completed" pair.
    let target = num(&summary, &["scheduled_request_rate", "avg"])
        .or(num(&summary, &["target_request_rate", "avg"]))
        .or(rate);
    let (lag_slope, lag_p) = if rate.is_some() {
        lag_trend(dir)?.unzip()
    } else {
        (None, None)
    };
    let achieved = num(&summary, &["achieved_request_rate", "avg"]);
    // The client's evidence over the profiling window alone (warmup left out).
    let samples = read_json(&dir.join(crate::side_files::CLIENT_RESOURCES))?
        .and_then(|v| serde_json::from_value::<crate::live::ClientResources>(v).ok())
        .map(|r| r.samples)
        .unwrap_or_default();
    let window = server.as_ref().map(|f| f.windows.profiling);
    let res = match window {
        Some(w) => inferbench_client::resources::summarize_window(&samples, w.start_ns, w.end_ns),
        None => inferbench_client::resources::summarize(&samples),
    };
    let cg = res.cgroup.as_ref();
    let events = cg.and_then(|c| c.memory_events.as_ref());
    let evidence = RunEvidence {
        rate_mode: rate.is_some(),
        lag_p99_ms: num(&summary, &["schedule_lag", "p99"]),
        lag_max_ms: num(&summary, &["schedule_lag", "max"]),
        lag_slope_ms_per_s: lag_slope,
        lag_slope_p: lag_p,
        mean_interarrival_ms: target.filter(|r| *r > 0.0).map(|r| 1000.0 / r),
        achieved_pct: achieved
            .zip(target)
            .filter(|(_, t)| *t > 0.0)
            .map(|(a, t)| 100.0 * a / t),
        cpu_util: cg.and_then(|c| c.utilization),
        cpu_pressure_some: cg.and_then(|c| c.stall.cpu),
        nr_throttled: cg.and_then(|c| c.nr_throttled),
        throttle_fraction: cg.and_then(|c| c.throttled_fraction),
        memory_pressure_some: cg.and_then(|c| c.stall.memory),
        memory_events: events.map(|e| e.high + e.max + e.oom + e.oom_kill),
        memory_oom_events: events.map(|e| e.oom + e.oom_kill),
        runq_wait_max: res.worker_wait_fraction_max,
        // Persistent: non-zero at two consecutive readings of a connection (100 ms apart), so
        // that bytes that had just arrived do not count as bytes the client left unread.
        recvq_nonzero_fraction: res
            .sockets
            .as_ref()
            .and_then(|s| s.recv_q_persistent_fraction),
        recvq_max_bytes: res.sockets.as_ref().map(|s| u64::from(s.recv_q_max_bytes)),
        recvq_growing: None,
        backlog_growing: res.queues.as_ref().map(|q| q.planned_not_sent_growing),
        writer_backlog_growing: res.queues.as_ref().map(|q| q.writer_backlog_growing),
        server_waiting_mean: view
            .as_ref()
            .and_then(|v| v.waiting.and_then(|g| g.time_weighted_mean)),
        server_waiting_change: view.as_ref().and_then(|v| v.waiting.and_then(|g| g.change)),
        server_kv_usage_max: view.as_ref().and_then(|v| v.kv_usage.and_then(|g| g.max)),
        server_preemptions: view.as_ref().and_then(|v| v.preemptions),
        host_cpu_pressure_some: res.host_stall.cpu,
    };
    Ok(StepRun {
        concurrency: if rate.is_some() {
            num(&summary, &["in_flight_requests", "avg"])
        } else {
            num(&manifest, &["plan", "load", "concurrency"])
        },
        mean_osl_tokens: num(&summary, &["output_sequence_length", "avg"]),
        window_s: window.map(|w| (w.end_ns - w.start_ns) as f64 / 1e9),
        workers,
        repeat,
        dir: dir.to_string_lossy().into_owned(),
        server_tokens_per_s: view.as_ref().and_then(|v| v.output_tokens_per_s),
        client_tokens_per_s: num(&summary, &["output_token_throughput", "avg"]),
        client_output_tokens: server.as_ref().and_then(|f| f.client.output_tokens),
        server_output_tokens: view.as_ref().and_then(|v| v.output_tokens),
        evidence,
    })
}

/// The trend of dispatch lag over the profiling phase: the least-squares slope of lag (ms)
/// against planned send time (s) over every sent request, and the one-sided p-value of
/// "slope > 0" (t = b / SE(b), n − 2 degrees of freedom). None with fewer than 3 requests.
pub fn lag_trend(dir: &Path) -> Result<Option<(f64, f64)>, Failure> {
    let rd = crate::rundir::RunDir::open(dir)?;
    let mut pts: Vec<(f64, f64)> = Vec::new();
    for line in rd.evidence()? {
        let line = line.map_err(|e| Failure::input(e.to_string()))?;
        if let inferbench_core::EvidenceLine::Record(r) = line
            && r.phase.0 == inferbench_core::Phase::Profiling
            && let Some(sent) = r.sent_ns
        {
            pts.push((
                r.planned_ns as f64 / 1e9,
                (sent as f64 - r.planned_ns as f64) / 1e6,
            ));
        }
    }
    Ok(slope_and_p(&pts))
}

fn slope_and_p(pts: &[(f64, f64)]) -> Option<(f64, f64)> {
    use statrs::distribution::{ContinuousCDF, StudentsT};
    let n = pts.len();
    if n < 3 {
        return None;
    }
    let nf = n as f64;
    let mx = pts.iter().map(|p| p.0).sum::<f64>() / nf;
    let my = pts.iter().map(|p| p.1).sum::<f64>() / nf;
    let sxx: f64 = pts.iter().map(|p| (p.0 - mx).powi(2)).sum();
    if sxx <= 0.0 {
        return None;
    }
    let sxy: f64 = pts.iter().map(|p| (p.0 - mx) * (p.1 - my)).sum();
    let b = sxy / sxx;
    let a = my - b * mx;
    let ssr: f64 = pts.iter().map(|p| (p.1 - a - b * p.0).powi(2)).sum();
    let se = (ssr / (nf - 2.0) / sxx).sqrt();
    let p = if se == 0.0 {
        if b > 0.0 { 0.0 } else { 1.0 }
    } else {
        let t = StudentsT::new(0.0, 1.0, nf - 2.0).ok()?;
        1.0 - t.cdf(b / se)
    };
    Some((b, p))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_lag_trend_is_an_ordinary_least_squares_slope() {
        // y = 2x exactly: slope 2, no residual, p = 0.
        let (b, p) = slope_and_p(&[(0.0, 0.0), (1.0, 2.0), (2.0, 4.0)]).unwrap();
        assert!((b - 2.0).abs() < 1e-12 && p == 0.0);
        // (0,1) (1,0) (2,1) (3,0): x̄ 1.5, ȳ 0.5, Sxx 5, Sxy −1 → b = −0.2, a = 0.8;
        // residuals 0.2, −0.6, 0.6, −0.2 → SSR 0.8, SE = √(0.8/2/5) = 0.283, t = −0.707,
        // p = P(T₂ > −0.707) ≈ 0.72.
        let (b, p) = slope_and_p(&[(0.0, 1.0), (1.0, 0.0), (2.0, 1.0), (3.0, 0.0)]).unwrap();
        assert!((b + 0.2).abs() < 1e-12);
        assert!(p > 0.5 && p < 0.8, "{p}");
        assert!(slope_and_p(&[(0.0, 1.0), (1.0, 2.0)]).is_none());
    }

    #[test]
    fn the_ladder_doubles_up_to_the_maximum() {
        assert_eq!(ladder_up_to(8), vec![1, 2, 4, 8]);
        assert_eq!(ladder_up_to(6), vec![1, 2, 4, 6]);
        assert_eq!(ladder_up_to(1), vec![1]);
    }

    #[test]
    fn verdicts_map_to_exit_codes() {
        assert_eq!(verdict_code(Verdict::ClientSufficient), 0);
        assert_eq!(verdict_code(Verdict::ServerSaturated), 0);
        assert_eq!(verdict_code(Verdict::ClientLimited), 1);
        assert_eq!(verdict_code(Verdict::Inconclusive), 5);
    }
}
