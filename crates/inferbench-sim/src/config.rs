//! Server configuration and its validation.

use std::sync::Arc;
use std::time::Duration;

/// Largest output length a request may ask for. A non-streaming answer is built in memory, so an
/// absurd `max_tokens` must be refused rather than exhaust the host.
pub const MAX_OUTPUT_TOKENS: usize = 1 << 20;

/// How reasoning text is sent.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum ReasoningField {
    /// Chat: the `reasoning_content` key (vLLM, SGLang, DeepSeek). The Responses and Messages
    /// APIs use their own reasoning events, items and blocks with either field setting.
    #[default]
    ReasoningContent,
    /// Chat: the `reasoning` key (vLLM's newer name, OpenRouter, gpt-oss servers).
    Reasoning,
    /// Inside the output text, wrapped in `<think>…</think>`, on every text endpoint
    /// (completions and TGI included): what a server without a reasoning parser sends.
    ThinkTags,
}

impl ReasoningField {
    /// The chat JSON key (`content` for [`ReasoningField::ThinkTags`]).
    pub fn key(self) -> &'static str {
        match self {
            ReasoningField::ReasoningContent => "reasoning_content",
            ReasoningField::Reasoning => "reasoning",
            ReasoningField::ThinkTags => "content",
        }
    }

    /// Parses the `--reasoning-field` value: `reasoning_content`, `reasoning` or `think`.
    pub fn parse(s: &str) -> Option<ReasoningField> {
        match s {
            "reasoning_content" => Some(ReasoningField::ReasoningContent),
            "reasoning" => Some(ReasoningField::Reasoning),
            "think" | "think_tags" => Some(ReasoningField::ThinkTags),
            _ => None,
        }
    }
}

/// How the simulated server answers. See `docs/simulated-server.md` for the model.
#[derive(Debug, Clone)]
pub struct SimConfig {
    /// Delay from request arrival to the first token.
    pub ttft: Duration,
    /// Delay between consecutive tokens.
    pub itl: Duration,
    /// Tokens per SSE event after the first (which always holds one); the last holds the rest.
    pub tokens_per_chunk: usize,
    /// Send a role-only delta `{"role":"assistant","content":""}` at arrival, before the TTFT
    /// delay; otherwise the role rides on the first token event.
    pub role_first_chunk: bool,
    /// Leading output tokens sent as reasoning (chat, responses and messages; every text
    /// endpoint with [`ReasoningField::ThinkTags`]); they count toward the output budget.
    pub reasoning_tokens: usize,
    /// How reasoning text is sent.
    pub reasoning_field: ReasoningField,
    /// Percent of inference requests answered with HTTP 500.
    pub error_rate: f64,
    /// Percent of requests whose stream is cut after half its token events.
    pub cut_rate: f64,
    /// Chooses the phase of the error and cut sequences; 0 reproduces the recording mock.
    pub seed: u64,
    /// Model id reported by `/v1/models` and echoed when a request names no model.
    pub model: String,
    /// Output length when the request sets no `max_tokens`.
    pub default_output_tokens: usize,
    /// Token texts, cycled; each one counts as one token.
    pub words: Arc<Vec<String>>,
    /// With a key, a question the key holds is answered (right or wrong, see
    /// [`crate::AnswerKey`]) in place of the filler words; any other prompt is refused.
    pub answers: Option<Arc<crate::AnswerKey>>,
    /// Capacity, faults and exporters beyond the pacing (the batched scheduler, the
    /// counter-reset fault, the simulated GPUs); the default changes nothing.
    pub serving: Serving,
}

/// How the server serves beyond its pacing. The default is today's model: every request
/// runs at once, paced alone, and the metrics never reset.
#[derive(Debug, Clone, PartialEq)]
pub struct Serving {
    /// Requests in the running batch at most; later ones wait in a FIFO queue
    /// (`vllm:num_requests_waiting`). None: no limit.
    pub max_running: Option<u32>,
    /// Output tokens per second the whole running batch shares: each stream's gap between
    /// tokens is `max(itl, running / decode_tokens_per_s)`. None: every stream at `itl`.
    pub decode_tokens_per_s: Option<f64>,
    /// Prefill cost per input token (`usage.prompt_tokens`, the whitespace word count),
    /// microseconds, added to the first token's delay.
    pub prefill_us_per_token: f64,
    /// Every counter and histogram of `/metrics` restarts from zero this long after the
    /// server started, and every `_created` changes, as after a process restart (once).
    pub metrics_reset_after: Option<Duration>,
    /// Simulated GPUs behind `/dcgm/metrics`.
    pub gpus: u32,
    /// Token capacity of the simulated KV cache: `vllm:kv_cache_usage_perc` is the running
    /// requests' input plus generated tokens over this (clamped to 1).
    pub kv_capacity_tokens: u64,
    /// Faults at a percentage of inference requests each (docs/faults.md); no request gets
    /// two: after `error_rate`'s, each kind takes its share of the arrivals the earlier left.
    pub faults: Vec<(crate::faults::FaultKind, f64)>,
    /// Close the connection after every inference response, with no `Connection: close`
    /// and a `Keep-Alive: timeout=5, max=100` header, as llama.cpp's server does.
    pub close_after_response: bool,
    /// Let hyper gather a stream's ready events into one socket write. Off (the default),
    /// each SSE event is handed over and flushed before the next is produced, so every
    /// event is a `write` of its own at every delay, as vLLM and llama.cpp flush each token.
    pub coalesce: bool,
}

impl Default for Serving {
    fn default() -> Self {
        Serving {
            max_running: None,
            decode_tokens_per_s: None,
            prefill_us_per_token: 0.0,
            metrics_reset_after: None,
            gpus: 1,
            kv_capacity_tokens: 131_072,
            faults: Vec::new(),
            close_after_response: false,
            coalesce: false,
        }
    }
}

impl Serving {
    /// Whether anything but the pacing decides when tokens are due.
    pub(crate) fn paces(&self) -> bool {
        self.decode_tokens_per_s.is_some() || self.prefill_us_per_token > 0.0
    }
}

/// The words the recording mock cycles (see the fixtures' README).
pub fn default_words() -> Vec<String> {
    [" the", " and", " to", " of", " you", " my", " a", " that"]
        .iter()
        .map(|w| (*w).to_owned())
        .collect()
}

impl Default for SimConfig {
    /// AIPerf mock-server latencies (TTFT 20 ms, ITL 5 ms), one token per event, no faults.
    fn default() -> Self {
        SimConfig {
            ttft: Duration::from_millis(20),
            itl: Duration::from_millis(5),
            tokens_per_chunk: 1,
            role_first_chunk: false,
            reasoning_tokens: 0,
            reasoning_field: ReasoningField::ReasoningContent,
            error_rate: 0.0,
            cut_rate: 0.0,
            seed: 0,
            model: "mock-model".to_owned(),
            default_output_tokens: 16,
            words: Arc::new(default_words()),
            answers: None,
            serving: Serving::default(),
        }
    }
}

/// A configuration the server refuses to start with.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub enum SimConfigError {
    #[error("tokens_per_chunk must be at least 1")]
    TokensPerChunk,
    #[error("words must hold at least one token text")]
    NoWords,
    #[error("{name} must be a percentage in [0, 100], got {value}")]
    Rate { name: &'static str, value: f64 },
    #[error(
        "the fault percentages (error_rate and every fault) add up to {0}, over 100: a request gets one fault at most"
    )]
    FaultsOver100(f64),
    #[error("default_output_tokens must be between 1 and {MAX_OUTPUT_TOKENS}, got {0}")]
    DefaultOutputTokens(usize),
    #[error("model must not be empty")]
    EmptyModel,
    #[error("ttft + itl x {MAX_OUTPUT_TOKENS} tokens overflows the clock")]
    Delay,
    #[error("answer accuracy must be a fraction in [0, 1], got {0}")]
    AnswerAccuracy(f64),
    #[error("max_running must be at least 1")]
    MaxRunning,
    #[error("decode_tokens_per_s must be a positive number, got {0}")]
    DecodeRate(f64),
    #[error("prefill_us_per_token must be zero or more (and at most 1e6), got {0}")]
    Prefill(f64),
    #[error("gpus must be between 1 and 64, got {0}")]
    Gpus(u32),
    #[error("kv_capacity_tokens must be at least 1")]
    KvCapacity,
}

impl SimConfig {
    /// Checks the values the server relies on.
    pub fn validate(&self) -> Result<(), SimConfigError> {
        if self.tokens_per_chunk == 0 {
            return Err(SimConfigError::TokensPerChunk);
        }
        if self.words.is_empty() {
            return Err(SimConfigError::NoWords);
        }
        for (name, value) in [("error_rate", self.error_rate), ("cut_rate", self.cut_rate)] {
            if !(0.0..=100.0).contains(&value) {
                return Err(SimConfigError::Rate { name, value });
            }
        }
        for &(kind, value) in &self.serving.faults {
            if !(0.0..=100.0).contains(&value) {
                return Err(SimConfigError::Rate {
                    name: kind.name(),
                    value,
                });
            }
        }
        let total = self.error_rate + self.serving.faults.iter().map(|f| f.1).sum::<f64>();
        // A hair over 100 is a sum's rounding (33.3 three times and 0.1), not a request
        // asked to take two faults.
        if total > 100.0 + 1e-9 {
            return Err(SimConfigError::FaultsOver100(total));
        }
        if self.default_output_tokens == 0 || self.default_output_tokens > MAX_OUTPUT_TOKENS {
            return Err(SimConfigError::DefaultOutputTokens(
                self.default_output_tokens,
            ));
        }
        if self.model.is_empty() {
            return Err(SimConfigError::EmptyModel);
        }
        if let Some(k) = &self.answers
            && !(0.0..=1.0).contains(&k.accuracy)
        {
            return Err(SimConfigError::AnswerAccuracy(k.accuracy));
        }
        let sv = &self.serving;
        if sv.max_running == Some(0) {
            return Err(SimConfigError::MaxRunning);
        }
        if let Some(r) = sv.decode_tokens_per_s
            && !(r.is_finite() && r > 0.0)
        {
            return Err(SimConfigError::DecodeRate(r));
        }
        if !(sv.prefill_us_per_token.is_finite() && (0.0..=1e6).contains(&sv.prefill_us_per_token))
        {
            return Err(SimConfigError::Prefill(sv.prefill_us_per_token));
        }
        if !(1..=64).contains(&sv.gpus) {
            return Err(SimConfigError::Gpus(sv.gpus));
        }
        if sv.kv_capacity_tokens == 0 {
            return Err(SimConfigError::KvCapacity);
        }
        // Deadlines are computed in nanoseconds; make sure the longest allowed stream fits.
        let max = (self.itl.as_nanos())
            .checked_mul(MAX_OUTPUT_TOKENS as u128)
            .and_then(|v| v.checked_add(self.ttft.as_nanos()));
        match max {
            Some(v) if v < u64::MAX as u128 / 2 => Ok(()),
            _ => Err(SimConfigError::Delay),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn default_is_valid() {
        assert_eq!(SimConfig::default().validate(), Ok(()));
    }

    #[test]
    fn rejects_bad_values() {
        let mut c = SimConfig {
            tokens_per_chunk: 0,
            ..SimConfig::default()
        };
        assert_eq!(c.validate(), Err(SimConfigError::TokensPerChunk));
        c.tokens_per_chunk = 1;
        c.error_rate = 100.5;
        assert!(matches!(
            c.validate(),
            Err(SimConfigError::Rate {
                name: "error_rate",
                ..
            })
        ));
        c.error_rate = f64::NAN;
        assert!(c.validate().is_err());
        c.error_rate = 0.0;
        c.words = Arc::new(Vec::new());
        assert_eq!(c.validate(), Err(SimConfigError::NoWords));
        c.words = Arc::new(default_words());
        c.default_output_tokens = 0;
        assert_eq!(c.validate(), Err(SimConfigError::DefaultOutputTokens(0)));
    }

    #[test]
    fn fault_percentages_add_up_to_100_at_most() {
        use crate::faults::FaultKind;
        let mut c = SimConfig {
            error_rate: 40.0,
            ..SimConfig::default()
        };
        c.serving.faults = vec![(FaultKind::Reset, 35.0), (FaultKind::Stall, 25.0)];
        assert_eq!(c.validate(), Ok(()), "40 + 35 + 25 = 100");
        c.serving.faults[1].1 = 25.5;
        assert_eq!(c.validate(), Err(SimConfigError::FaultsOver100(100.5)));
        assert!(
            c.validate()
                .unwrap_err()
                .to_string()
                .starts_with("the fault percentages (error_rate and every fault) add up to 100.5")
        );
        // Three thirds, rounded, are not over.
        c.error_rate = 0.0;
        c.serving.faults = vec![(FaultKind::Reset, 100.0 / 3.0); 3];
        assert_eq!(c.validate(), Ok(()));
    }
}
