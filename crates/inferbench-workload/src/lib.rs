//! The workload side of inferbench: the client tokenizer, the bundled prompt corpus,
//! synthetic prompts of exact token length, the frozen request bodies (and AIPerf's
//! `inputs.json` view of them), the payload sampler, and the single-token words the simulated
//! server streams. See `docs/workload.md`.

pub mod chat_template;
pub mod corpus;
pub mod dataset;
pub mod error;
pub mod media;
mod o200k;
pub mod render;
pub mod sampler;
pub mod sim_vocab;
pub mod synthetic;
pub mod tokenizer;
pub mod tokenizer_revision;

pub use corpus::Corpus;
pub use error::WorkloadError;
pub use render::{RenderedWorkload, inputs_json, render_workload};
pub use sampler::{Sampler, SamplingStrategy};
pub use sim_vocab::single_token_words;
pub use synthetic::{PromptGenerator, resolve_seed, sample_positive_normal_integer};
pub use tokenizer::Tokenizer;
