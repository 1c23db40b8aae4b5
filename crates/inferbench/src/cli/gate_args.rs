//! `inferbench gate`'s flags.

use clap::Args;

#[derive(Args, Debug)]
pub struct GateArgs {
    /// The gate specification (TOML; docs/gate.md).
    #[arg(long, value_name = "FILE")]
    pub spec: std::path::PathBuf,
    /// Candidate runs: run directories, --num-profile-runs roots, imports, or ledger packet
    /// cids (with --ledger).
    #[arg(value_name = "RUN", required = true)]
    pub runs: Vec<String>,
    /// Baseline runs for compare = "baseline" rules and the correctness reference
    /// (repeatable; default with --ledger: the spec's epoch's pinned baseline).
    #[arg(long = "baseline", value_name = "RUN")]
    pub baseline: Vec<String>,
    /// A ledger: RUN may be a packet cid, the spec's epoch is resolved there, and the
    /// verdict is recorded as a gate.verdict entry.
    #[arg(long, value_name = "DIR")]
    pub ledger: Option<std::path::PathBuf>,
    /// Who writes the ledger entry (default: $USER).
    #[arg(long)]
    pub by: Option<String>,
    /// Write the verdict JSON (docs/schemas/gate-verdict.schema.json).
    #[arg(long, value_name = "FILE")]
    pub json: Option<std::path::PathBuf>,
    /// Write the Markdown acceptance packet.
    #[arg(long, value_name = "FILE")]
    pub markdown: Option<std::path::PathBuf>,
    /// Tokenizer for imported runs whose files keep texts but no counts.
    #[arg(long)]
    pub tokenizer: Option<String>,
}
