//! The built-in simulated OpenAI-compatible inference server.
//!
//! It answers every endpoint type of AIPerf's core set (chat, completions, the OpenAI Responses
//! API, the Anthropic Messages API, embeddings, three rankings APIs, TGI `/generate` and
//! `/generate_stream`), streaming where the API streams, with
//! deterministic token text on an absolute-deadline timing model (token *i* is due at
//! arrival + TTFT + *i* × ITL), can inject HTTP 500s and cut streams, and keeps server-side
//! counters (`GET /sim/stats`). A batched scheduler ([`Serving`]: a running limit, prefill
//! per input token, a shared decode budget) gives it a real capacity; it serves vLLM's
//! Prometheus page (`GET /metrics`, with a counter-reset fault) and a DCGM exporter's page
//! for simulated GPUs (`GET /dcgm/metrics`). It is the target of `inferbench mock-server` and of
//! `inferbench profile` without `--url`. See `docs/simulated-server.md`.
//!
//! ```no_run
//! # async fn run() -> std::io::Result<()> {
//! use inferbench_sim::{SimConfig, SimServer};
//! let server = SimServer::start(SimConfig::default(), "127.0.0.1:0".parse().unwrap()).await?;
//! let url = format!("http://{}", server.local_addr());
//! # let _ = url;
//! let stats = server.run_until(async { let _ = tokio::signal::ctrl_c().await; }).await;
//! # let _ = stats;
//! # Ok(()) }
//! ```

mod answers;
mod api;
mod arrival;
mod body;
mod config;
mod dcgm;
mod faults;
mod media;
mod metrics;
mod pacing;
mod render;
mod request;
mod sched;
mod server;
mod stats;
pub mod tls;

pub use answers::{AnswerKey, KeyAnswer, answers_right, question_text};
pub use body::StreamCut;
pub use config::{
    MAX_OUTPUT_TOKENS, ReasoningField, Serving, SimConfig, SimConfigError, default_words,
};
pub use dcgm::{BLANK_INT64, EnergyMeter, gpu_uuid, power_mw};
pub use faults::{FaultKind, SLOW_HEAD, TRICKLE_GAP, parse_fault};
pub use metrics::CONTENT_TYPE as METRICS_CONTENT_TYPE;
pub use server::{SimServer, serve_until};
pub use stats::{SimStats, TimingStats};
pub use tls::SimTls;
