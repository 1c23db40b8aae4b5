//! Errors of the workload crate. Every message names the file, field or value at fault.

#[derive(Debug, thiserror::Error)]
pub enum WorkloadError {
    #[error("tokenizer {path}: no such file or directory")]
    TokenizerNotFound { path: String },
    #[error("tokenizer {path}: directory has no tokenizer.json")]
    NoTokenizerJson { path: String },
    #[error("tokenizer {path}: cannot read: {source}")]
    TokenizerRead {
        path: String,
        #[source]
        source: std::io::Error,
    },
    #[error("tokenizer {path}: not a Hugging Face tokenizer.json: {message}")]
    NotATokenizer { path: String, message: String },
    #[error("tokenizer {path}: cannot disable truncation: {message}")]
    TokenizerSetup { path: String, message: String },
    /// `--apply-chat-template`: the template file at fault.
    #[error("chat template {path}: {message}")]
    ChatTemplate { path: String, message: String },
    #[error("corpus: tokenizer {tokenizer} produced no tokens")]
    EmptyCorpus { tokenizer: String },
    #[error(
        "synthetic prompt: no text of exactly {tokens} tokens found with tokenizer {tokenizer}"
    )]
    ExactLength { tokens: usize, tokenizer: String },
    #[error("plan.{field}: {message}")]
    Plan {
        field: &'static str,
        message: String,
    },
    #[error("sampler: the dataset has no entries")]
    EmptyDataset,
    /// A dataset file (or a dataset option) at fault: names the file, line and field.
    #[error(transparent)]
    Dataset(#[from] crate::dataset::DatasetError),
}
