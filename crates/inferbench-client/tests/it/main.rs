//! Every integration test of this crate, in one binary: one link instead of one per file.
mod endpoints;
mod engine;
mod h1_wire;
mod sessions;

use std::time::Duration;

use inferbench_client::engine::{PhaseSpec, PreparedPayload};
use inferbench_client::{Clock, Engine, EngineConfig, EngineEvent, StopSignal};
use inferbench_core::endpoint_plan::EndpointPlan;
use inferbench_core::plan::EndpointType;
use inferbench_core::record::Record;

/// The tests' run configuration: `endpoint` at `path` on `addr` with these phases, no headers
/// of their own, a 10 s timeout, no cancellation, seed 1, and the endpoint's decoder
/// (`<think>` split out when `reasoning_tags`). A test changes what it needs with `..`.
pub fn test_config(
    addr: std::net::SocketAddr,
    path: &str,
    endpoint: EndpointType,
    streaming: bool,
    phases: Vec<PhaseSpec>,
    reasoning_tags: bool,
) -> EngineConfig {
    EngineConfig {
        uri: format!("http://{addr}{path}").parse().unwrap(),
        endpoint_type: endpoint,
        streaming,
        headers: Vec::new(),
        timeout: Duration::from_secs(10),
        phases,
        cancellation: None,
        keep_raw: false,
        seed: 1,
        decoder: inferbench_client::decode::Decoder::new(
            endpoint,
            &EndpointPlan {
                reasoning_tags: reasoning_tags.then(|| "think".to_string()),
                ..Default::default()
            },
        )
        .unwrap(),
    }
}

/// Runs `n` requests, each of `payload`, under `cfg` (within 30 s) and returns their
/// records by id, after checking that the run made exactly `n`.
pub async fn run_payload(cfg: EngineConfig, payload: PreparedPayload, n: u64) -> Vec<Record> {
    let engine = Engine::new(
        cfg,
        Clock::start(),
        vec![payload],
        Box::new(|| 0),
        None,
        StopSignal::new(),
    );
    let (tx, mut rx) = tokio::sync::mpsc::unbounded_channel();
    let outcome = tokio::time::timeout(Duration::from_secs(30), engine.run(tx))
        .await
        .expect("the run ends");
    assert_eq!(outcome.records, n);
    let mut recs = Vec::new();
    while let Ok(ev) = rx.try_recv() {
        if let EngineEvent::Record(r, _) = ev {
            recs.push(*r);
        }
    }
    assert_eq!(recs.len(), n as usize);
    recs.sort_by_key(|r| r.id);
    recs
}
