//! The client side of inferbench: HTTP transport and the engine that runs a plan and turns
//! every scheduled request into exactly one [`inferbench_core::Record`]. The protocol code
//! (SSE parser, endpoint decoders, `<think>` splitter) lives in `inferbench-protocol`; it is
//! re-exported here under its old paths.

pub mod clock;
pub mod engine;
pub mod h1;
pub mod headers;
pub mod probe;
pub mod resources;
pub mod rx_stamp;
pub mod scrape;
pub mod tls;
mod tls_self_signed;
pub mod transport;

pub use inferbench_protocol::{decode, multipart, sse, think};

pub use clock::Clock;
pub use engine::{
    Engine, EngineConfig, EngineEvent, Progress, RunOutcome, StopSignal, TokenCounter,
};
pub use headers::{ConfiguredHeader, configured_headers, request_headers};
