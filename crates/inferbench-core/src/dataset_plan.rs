//! What the dataset of a run is: synthetic (the default) or read from a file, and how it is
//! sampled. Filled from AIPerf's dataset, prompt and conversation flags; see
//! `docs/datasets.md` and `docs/workload.md`.
//!
//! Every field has a serde default, so a manifest written before a field existed still reads.

use serde::{Deserialize, Serialize};

/// Dataset options beyond the basic synthetic ISL/OSL (those stay on [`crate::RunPlan`]:
/// `isl`, `osl`, `num_dataset_entries`, `random_seed`).
#[derive(Serialize, Deserialize, Clone, Debug, PartialEq)]
pub struct DatasetPlan {
    /// `--input-file`: a file or a directory (directories: `random_pool`, `raw_payload`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub input_file: Option<String>,
    /// `--custom-dataset-type`: `single_turn`, `multi_turn`, `random_pool`, `mooncake_trace`,
    /// `raw_payload`, `inputs_json`, `genai_perf_inputs`. None: detected from the file.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub custom_dataset_type: Option<String>,
    /// `--dataset-sampling-strategy` (`sequential`, `random`, `shuffle`). None: the dataset's
    /// default (sequential for files and traces, shuffle for synthetic and `random_pool`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub sampling_strategy: Option<String>,
    /// `--allow-dataset-wrap`: let a sequential pass over a file dataset start again at the
    /// beginning once every conversation was sent (read by the engine).
    #[serde(default, skip_serializing_if = "is_false")]
    pub allow_dataset_wrap: bool,
    /// `--ignore-trace-delays`: drop every `timestamp` and `delay` read from a file.
    #[serde(default, skip_serializing_if = "is_false")]
    pub ignore_trace_delays: bool,
    /// `--public-dataset` (only `sharegpt`), read from [`Self::public_dataset_path`].
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub public_dataset: Option<String>,
    /// Local copy of the public dataset (inferbench never downloads; AIPerf has no such flag).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub public_dataset_path: Option<String>,

    /// `--isl-block-size` (aliases `--prompt-input-tokens-block-size`,
    /// `--synthetic-input-tokens-block-size`): tokens per `hash_ids` block. None: 512.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub isl_block_size: Option<u64>,
    /// `--seq-dist` (alias `--sequence-distribution`): a weighted mixture of (ISL, OSL) pairs,
    /// kept as typed; parsed by `inferbench_workload::dataset::SeqDist::parse`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub seq_dist: Option<String>,
    /// `--random-range-ratio`: a float, or JSON `{"input": r, "output": r}`, kept as typed;
    /// parsed by `inferbench_workload::dataset::RangeRatio::parse`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub random_range_ratio: Option<String>,
    /// `--isl-dist`: the input lengths as a JSON distribution in AIPerf's config shapes
    /// (log-normal, mixture, empirical, clamps), kept as typed; parsed by
    /// `inferbench_workload::dataset::LengthShape::parse`. Replaces `--isl`/`--isl-stddev`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub isl_dist: Option<String>,
    /// `--osl-dist`: the output lengths, as `isl_dist`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub osl_dist: Option<String>,
    /// `--random-corpus-style`: `vllm` (default) or `sglang`; the range-ratio window.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub random_corpus_style: Option<String>,
    /// `--prompt-corpus`: `sonnet` (the default), `coding` or `random`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub prompt_corpus: Option<String>,
    /// `--num-prefix-prompts` (aliases `--prompt-prefix-pool-size`,
    /// `--prefix-prompt-pool-size`): size of the prefix pool. 0 = no prefixes.
    #[serde(default, skip_serializing_if = "is_zero")]
    pub num_prefix_prompts: usize,
    /// `--prefix-prompt-length` (alias `--prompt-prefix-length`): tokens per prefix.
    #[serde(default, skip_serializing_if = "is_zero")]
    pub prefix_prompt_length: usize,
    /// `--shared-system-prompt-length`: one system prompt of this many tokens, for every
    /// conversation.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub shared_system_prompt_length: Option<usize>,
    /// `--user-context-prompt-length`: a user message of this many tokens, its own for each
    /// conversation, sent before the first turn's prompt.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub user_context_prompt_length: Option<usize>,
    /// `--system-prompt` (or the text of `--system-prompt-file`): a literal system message.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub system_prompt: Option<String>,

    /// `--conversation-num` (aliases `--num-conversations`, `--num-sessions`): conversations
    /// to make. None: `num_dataset_entries` for synthetic data, 100 for `random_pool`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub num_conversations: Option<usize>,
    /// `--conversation-turn-mean` (alias `--session-turns-mean`), default 1.
    #[serde(default = "one")]
    pub conversation_turn_mean: f64,
    /// `--conversation-turn-stddev` (alias `--session-turns-stddev`), default 0.
    #[serde(default)]
    pub conversation_turn_stddev: f64,
    /// `--conversation-turn-delay-mean` (alias `--session-turn-delay-mean`), ms, default 0.
    #[serde(default)]
    pub turn_delay_mean_ms: f64,
    /// `--conversation-turn-delay-stddev` (alias `--session-turn-delay-stddev`), ms, default 0.
    #[serde(default)]
    pub turn_delay_stddev_ms: f64,
    /// `--conversation-turn-delay-ratio` (alias `--session-delay-ratio`), default 1.0.
    #[serde(default = "one")]
    pub turn_delay_ratio: f64,

    /// `--batch-size` (aliases `--prompt-batch-size`, `--batch-size-text`, `-b`): texts per
    /// request for embeddings (and `random_pool`), default 1.
    #[serde(default = "one_usize")]
    pub batch_size: usize,
    /// `--rankings-passages-mean`, default 1.
    #[serde(default = "one")]
    pub rankings_passages_mean: f64,
    /// `--rankings-passages-stddev`, default 0.
    #[serde(default)]
    pub rankings_passages_stddev: f64,
    /// `--rankings-passages-prompt-token-mean`, default 550.
    #[serde(default = "default_rankings_tokens")]
    pub rankings_passages_token_mean: f64,
    /// `--rankings-passages-prompt-token-stddev`, default 0.
    #[serde(default)]
    pub rankings_passages_token_stddev: f64,
    /// `--rankings-query-prompt-token-mean`, default 550.
    #[serde(default = "default_rankings_tokens")]
    pub rankings_query_token_mean: f64,
    /// `--rankings-query-prompt-token-stddev`, default 0.
    #[serde(default)]
    pub rankings_query_token_stddev: f64,
    /// `--apply-chat-template`: ISL counted through the model's chat template, synthetic
    /// prompts shortened by its cost (docs/workload.md "Chat templates").
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub apply_chat_template: bool,
    /// `--use-think-time-only` (`weka_trace`, `tracelab`): a later turn waits its recorded
    /// `think_time` instead of the idle gap between the trace's request times.
    #[serde(default, skip_serializing_if = "is_false")]
    pub use_think_time_only: bool,
    /// `--max-context-length` (`weka_trace`): drop every trace whose largest request
    /// (input plus output tokens, parent or subagent) exceeds it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub max_context_length: Option<u64>,
    /// `--image-*` and `--audio-*`: synthetic images and audio with every synthetic turn.
    #[serde(
        default,
        skip_serializing_if = "crate::media_plan::MediaPlan::is_default"
    )]
    pub media: crate::media_plan::MediaPlan,
    /// `--synthesis-*` and `--inter-turn-delay-cap-seconds` (docs/datasets.md).
    #[serde(
        default,
        skip_serializing_if = "crate::replay_plan::ReplayPlan::is_default"
    )]
    pub replay: crate::replay_plan::ReplayPlan,
}

impl Default for DatasetPlan {
    fn default() -> Self {
        DatasetPlan {
            input_file: None,
            custom_dataset_type: None,
            sampling_strategy: None,
            allow_dataset_wrap: false,
            ignore_trace_delays: false,
            public_dataset: None,
            public_dataset_path: None,
            isl_block_size: None,
            seq_dist: None,
            random_range_ratio: None,
            isl_dist: None,
            osl_dist: None,
            random_corpus_style: None,
            prompt_corpus: None,
            num_prefix_prompts: 0,
            prefix_prompt_length: 0,
            shared_system_prompt_length: None,
            user_context_prompt_length: None,
            system_prompt: None,
            num_conversations: None,
            conversation_turn_mean: 1.0,
            conversation_turn_stddev: 0.0,
            turn_delay_mean_ms: 0.0,
            turn_delay_stddev_ms: 0.0,
            turn_delay_ratio: 1.0,
            batch_size: 1,
            rankings_passages_mean: 1.0,
            rankings_passages_stddev: 0.0,
            rankings_passages_token_mean: 550.0,
            rankings_passages_token_stddev: 0.0,
            rankings_query_token_mean: 550.0,
            rankings_query_token_stddev: 0.0,
            apply_chat_template: false,
            use_think_time_only: false,
            max_context_length: None,
            media: crate::media_plan::MediaPlan::default(),
            replay: crate::replay_plan::ReplayPlan::default(),
        }
    }
}

fn is_false(b: &bool) -> bool {
    !*b
}
fn is_zero(n: &usize) -> bool {
    *n == 0
}
fn one() -> f64 {
    1.0
}
fn one_usize() -> usize {
    1
}
fn default_rankings_tokens() -> f64 {
    550.0
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn empty_object_reads_as_the_defaults() {
        let p: DatasetPlan = serde_json::from_str("{}").unwrap();
        assert_eq!(p, DatasetPlan::default());
        assert_eq!(p.conversation_turn_mean, 1.0);
        assert_eq!(p.turn_delay_ratio, 1.0);
        assert_eq!(p.batch_size, 1);
        assert_eq!(p.rankings_query_token_mean, 550.0);
        let back: DatasetPlan = serde_json::from_str(&serde_json::to_string(&p).unwrap()).unwrap();
        assert_eq!(back, p);
    }
}
