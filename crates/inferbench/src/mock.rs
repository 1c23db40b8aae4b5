//! `inferbench mock-server`: the simulated server, standalone, until Ctrl-C.

use std::net::SocketAddr;
use std::sync::Arc;
use std::time::Duration;

use inferbench_core::plan::TokenizerSpec;
use inferbench_sim::{ReasoningField, SimConfig, SimServer};
use inferbench_workload::Tokenizer;

use crate::Failure;
use crate::cli::MockServerArgs;

fn ms(name: &str, v: f64) -> Result<Duration, Failure> {
    crate::cli::millis(name, v).map_err(Failure::input)
}

pub fn run(a: &MockServerArgs) -> Result<u8, Failure> {
    let spec = TokenizerSpec::from_flag(a.tokenizer.as_deref());
    let tok = Tokenizer::load(&spec).map_err(|e| Failure::input(format!("--tokenizer: {e}")))?;
    let reasoning_field = ReasoningField::parse(&a.reasoning_field).ok_or_else(|| {
        Failure::input(format!(
            "--reasoning-field {:?}: expected reasoning_content, reasoning or think",
            a.reasoning_field
        ))
    })?;
    let (ttft, itl) = if a.fast {
        (Duration::ZERO, Duration::ZERO)
    } else {
        (ms("--ttft-ms", a.ttft_ms)?, ms("--itl-ms", a.itl_ms)?)
    };
    let cfg = SimConfig {
        ttft,
        itl,
        tokens_per_chunk: a.tokens_per_chunk,
        role_first_chunk: a.role_first_chunk,
        reasoning_tokens: a.reasoning_tokens,
        reasoning_field,
        error_rate: a.error_rate,
        cut_rate: a.cut_rate,
        seed: a.random_seed,
        model: a.model.clone(),
        default_output_tokens: a.default_output_tokens,
        words: Arc::new(inferbench_run::sim::sim_words(&tok)),
    };
    cfg.validate()
        .map_err(|e| Failure::input(format!("mock-server: {e}")))?;
    let addr: SocketAddr = format!("{}:{}", a.host, a.port)
        .parse()
        .map_err(|e| Failure::input(format!("--host {} --port {}: {e}", a.host, a.port)))?;
    let mut rt = tokio::runtime::Builder::new_multi_thread();
    if let Some(w) = a.workers {
        if w == 0 {
            return Err(Failure::input("--workers 0: must be ≥ 1"));
        }
        rt.worker_threads(w);
    }
    let rt = rt
        .enable_all()
        .build()
        .map_err(|e| Failure::run(format!("cannot start the runtime: {e}")))?;
    rt.block_on(async move {
        let server = SimServer::start(cfg, addr)
            .await
            .map_err(|e| Failure::run(format!("mock-server: cannot listen on {addr}: {e}")))?;
        eprintln!(
            "inferbench mock-server: listening on http://{} (ttft {:?}, itl {:?}, tokenizer {}); Ctrl-C stops",
            server.local_addr(),
            ttft,
            itl,
            tok.name()
        );
        let _ = tokio::signal::ctrl_c().await;
        let stats = server.stats();
        server.shutdown().await;
        eprintln!(
            "inferbench mock-server: stopped; {}",
            serde_json::to_string(&stats).unwrap_or_default()
        );
        Ok(0)
    })
}
