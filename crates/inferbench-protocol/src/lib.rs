//! The pure protocol code of inferbench, shared by the client, the importers and the
//! workload: the incremental SSE parser, every endpoint's response decoder, the `<think>`
//! splitter, and what a request body says (its input texts and its output limit). No I/O,
//! no runtime, no tokenizer: it is what an offline reader of a run needs.

pub mod body;
pub mod decode;
pub mod media;
pub mod multipart;
pub mod sse;
pub mod text;
pub mod think;
