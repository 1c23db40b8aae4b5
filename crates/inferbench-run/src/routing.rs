//! Several URLs and models in a live run (docs/routing.md): the engine's targets, each
//! payload's model, and the reachability check of every URL before anything is written.

use std::sync::Arc;
use std::time::Duration;

use inferbench_client::clock::Clock;
use inferbench_client::engine::{Engine, PreparedPayload};
use inferbench_core::plan::RunPlan;

use crate::Failure;

/// The full request URI of each of the plan's URLs (the endpoint path appended), in order;
/// empty when the run has one target (the engine's own).
pub fn uris(plan: &RunPlan) -> Result<Vec<http::Uri>, Failure> {
    if plan.routing.urls.len() < 2 {
        return Ok(Vec::new());
    }
    plan.routing
        .urls
        .iter()
        .enumerate()
        .map(|(i, u)| {
            inferbench_core::endpoint_url::join(u, &plan.endpoint_path)
                .parse()
                .map_err(|e| Failure::input(format!("--url #{} {u}: invalid URL: {e}", i + 1)))
        })
        .collect()
}

/// Each payload's model (its body's `model`), when the plan names several; empty otherwise.
pub fn payload_models(plan: &RunPlan, payloads: &[PreparedPayload]) -> Vec<Option<Arc<str>>> {
    if plan.models.len() < 2 {
        return Vec::new();
    }
    let mut names: Vec<Arc<str>> = plan.models.iter().map(|m| Arc::from(m.as_str())).collect();
    payloads
        .iter()
        .map(|p| {
            let v: serde_json::Value = serde_json::from_slice(&p.body).ok()?;
            let m = v.get("model")?.as_str()?;
            // Share one allocation per model name.
            Some(match names.iter().find(|n| &***n == m) {
                Some(n) => n.clone(),
                None => {
                    let n: Arc<str> = Arc::from(m);
                    names.push(n.clone());
                    n
                }
            })
        })
        .collect()
}

/// Points the engine at every URL and tells it each payload's model.
pub fn apply(engine: &mut Engine, uris: &[http::Uri], models: Vec<Option<Arc<str>>>) {
    engine.set_targets(uris);
    engine.set_models(models);
}

/// The URLs after the first (which the `/v1/models` probe reaches) must answer too: a wrong
/// one fails in one line naming it, before anything is written. With the run's configured
/// headers, as every request: the probe went out without them, so a server that needs auth
/// saw an unauthenticated request from the run.
pub async fn check_reachable(
    plan: &RunPlan,
    headers: &[inferbench_client::ConfiguredHeader],
    clock: Clock,
) -> Result<(), Failure> {
    for (i, u) in plan.routing.urls.iter().enumerate().skip(1) {
        inferbench_client::probe::fetch_models_with(clock, u, headers, Duration::from_secs(10))
            .await
            .map_err(|e| Failure::run(format!("--url #{} {u}: {e}", i + 1)))?;
    }
    Ok(())
}
