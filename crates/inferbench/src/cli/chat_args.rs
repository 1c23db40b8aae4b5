//! `chat` flags: AIPerf 0.13's `aiperf chat` (names, short forms, defaults), with the
//! project's rule that no `--url` means the built-in simulated server (docs/chat.md).

use clap::{ArgAction, Args};

use super::tls_args::TlsArgs;

#[derive(Args, Debug)]
pub struct ChatArgs {
    /// Model name served by the endpoint. Required with --url; without it, the simulated
    /// server's model (mock-model) by default.
    #[arg(short = 'm', long)]
    pub model: Option<String>,
    /// Base URL of the OpenAI-compatible server: a host (http://localhost:8000), a /v1 base
    /// or a full /chat/completions path; http:// is assumed without a scheme. Default: the
    /// built-in simulated server, started for the session on 127.0.0.1.
    #[arg(short = 'u', long)]
    pub url: Option<String>,
    /// A system prompt sent first in every turn.
    #[arg(long = "system-prompt", value_name = "TEXT")]
    pub system_prompt: Option<String>,
    /// Send this one message, print the reply and its stats, and exit.
    #[arg(short = 'q', long, value_name = "MESSAGE")]
    pub quick: Option<String>,
    /// Keep the conversation and resend it with every turn (the default).
    #[arg(long, overrides_with = "no_history")]
    pub history: bool,
    /// Stateless turns: each message is sent alone (after the system prompt).
    #[arg(long = "no-history", overrides_with = "history")]
    pub no_history: bool,
    /// Sent as `Authorization: Bearer <key>`; never printed.
    #[arg(long = "api-key", env = "OPENAI_API_KEY", hide_env_values = true)]
    pub api_key: Option<String>,
    /// Tokenizer for the client-side output token counts: `builtin` (tiktoken o200k_base,
    /// the default) or the path of a Hugging Face tokenizer.
    #[arg(long)]
    pub tokenizer: Option<String>,
    /// Extra header, `Name:Value` or a JSON object. Repeatable. Not an `aiperf chat` flag.
    #[arg(short = 'H', long = "header", action = ArgAction::Append, num_args = 1..)]
    pub header: Vec<String>,
    #[command(flatten)]
    pub tls: TlsArgs,
}
