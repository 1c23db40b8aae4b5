//! `--server-profiler` (AIPerf's control hook): `POST {origin}{start_path}` at every unique
//! origin of the run's URLs right before the profiling phase, `POST {origin}{stop_path}`
//! right after it (never around the warmup). As in AIPerf: empty-body POSTs, any 2xx is
//! success; a failed start is fatal (the profiling phase does not begin, and origins already
//! started are stopped); a failed stop is a warning. The requests go on connections of their
//! own with the run's headers, and are never records.

use std::sync::{Arc, Mutex};
use std::time::Duration;

use inferbench_client::engine::PhaseGate;
use inferbench_client::{Clock, ConfiguredHeader};
use inferbench_core::Phase;
use inferbench_core::controls_plan::{ServerProfilerPlan, ServerProfilerRecord};
use inferbench_core::plan::RunPlan;

use crate::Failure;
use crate::wait_model::{origins, send_with};

/// The gate to set on the engine, and the record it fills (for the manifest).
pub struct ServerProfiler {
    pub gate: PhaseGate,
    pub record: Arc<Mutex<ServerProfilerRecord>>,
    /// Warnings (a failed stop), to report once the engine has stopped.
    pub warnings: Arc<Mutex<Vec<String>>>,
}

/// One POST; `Ok(status line)` on 2xx, `Err(status line)` otherwise.
async fn post(
    clock: Clock,
    url: &str,
    headers: &[ConfiguredHeader],
    timeout: Duration,
) -> Result<String, String> {
    match send_with(clock, url, Some(b""), headers, timeout).await {
        Ok(a) if (200..300).contains(&a.status) => Ok(format!("POST {url}: {}", a.status)),
        Ok(a) => Err(format!("POST {url}: answered {}", a.status)),
        Err(e) => Err(format!("POST {url}: {e}")),
    }
}

/// The profiler's gate for this plan, or None without `--server-profiler`.
pub fn gate(
    plan: &RunPlan,
    headers: &[ConfiguredHeader],
    clock: Clock,
) -> Result<Option<ServerProfiler>, Failure> {
    let Some(sp) = plan.controls.server_profiler.clone() else {
        return Ok(None);
    };
    let origins = Arc::new(origins(plan)?);
    let headers: Arc<Vec<ConfiguredHeader>> = Arc::new(headers.to_vec());
    let record = Arc::new(Mutex::new(ServerProfilerRecord::default()));
    let warnings = Arc::new(Mutex::new(Vec::new()));
    let (rec, warn) = (record.clone(), warnings.clone());
    let gate: PhaseGate = Arc::new(move |phase, start| {
        let (sp, origins, headers) = (sp.clone(), origins.clone(), headers.clone());
        let (rec, warn) = (rec.clone(), warn.clone());
        Box::pin(async move {
            if phase != Phase::Profiling {
                return Ok(());
            }
            if start {
                start_all(&sp, &origins, &headers, clock, &rec).await
            } else {
                let failed = stop_all(&sp, &origins, &headers, clock, &rec).await;
                if let Ok(mut w) = warn.lock() {
                    w.extend(failed);
                }
                Ok(())
            }
        })
    });
    Ok(Some(ServerProfiler {
        gate,
        record,
        warnings,
    }))
}

fn log(rec: &Mutex<ServerProfilerRecord>, line: String) {
    if let Ok(mut r) = rec.lock() {
        r.requests.push(line);
    }
}

async fn start_all(
    sp: &ServerProfilerPlan,
    origins: &[String],
    headers: &[ConfiguredHeader],
    clock: Clock,
    rec: &Mutex<ServerProfilerRecord>,
) -> Result<(), String> {
    let timeout = Duration::from_secs_f64(sp.timeout_s);
    for (i, o) in origins.iter().enumerate() {
        let url = format!("{o}{}", sp.start_path);
        match post(clock, &url, headers, timeout).await {
            Ok(line) => log(rec, line),
            Err(line) => {
                log(rec, line.clone());
                // Best effort: stop the origins already started, then fail.
                let started = &origins[..i];
                let _ = stop_all(sp, started, headers, clock, rec).await;
                return Err(format!(
                    "--server-profiler: the profiler did not start ({line}); the profiling phase was not run"
                ));
            }
        }
    }
    if let Ok(mut r) = rec.lock() {
        r.started = true;
    }
    Ok(())
}

/// Stops every origin; the failures, as warning lines.
async fn stop_all(
    sp: &ServerProfilerPlan,
    origins: &[String],
    headers: &[ConfiguredHeader],
    clock: Clock,
    rec: &Mutex<ServerProfilerRecord>,
) -> Vec<String> {
    let timeout = Duration::from_secs_f64(sp.timeout_s);
    let mut failed = Vec::new();
    for o in origins {
        let url = format!("{o}{}", sp.stop_path);
        match post(clock, &url, headers, timeout).await {
            Ok(line) => log(rec, line),
            Err(line) => {
                log(rec, line.clone());
                failed.push(format!(
                    "--server-profiler: the profiler did not stop ({line})"
                ));
            }
        }
    }
    if failed.is_empty()
        && !origins.is_empty()
        && let Ok(mut r) = rec.lock()
    {
        r.stopped = true;
    }
    failed
}
