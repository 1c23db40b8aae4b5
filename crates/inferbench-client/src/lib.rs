//! The client side of inferbench: HTTP transport, the incremental SSE parser, endpoint
//! response decoders, and the engine that runs a plan and turns every scheduled request into
//! exactly one [`inferbench_core::Record`].

pub mod clock;
pub mod decode;
pub mod engine;
pub mod resources;
pub mod sse;
pub mod think;
pub mod transport;

pub use clock::Clock;
pub use engine::{
    Engine, EngineConfig, EngineEvent, Progress, RunOutcome, StopSignal, TokenCounter,
};
