//! Request parsing (a small typed view of the OpenAI body), output length rules, the fault
//! sequences and the body hash that picks where the word cycle starts.

use std::borrow::Cow;
use std::fmt;

use serde::Deserialize;
use serde::de::{self, Deserializer, IgnoredAny, MapAccess, SeqAccess, Visitor};

use inferbench_core::plan::EndpointType;

use crate::config::MAX_OUTPUT_TOKENS;

/// Which route a request came in on.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Endpoint {
    Chat,
    Completions,
    /// OpenAI Responses API.
    Responses,
    /// Anthropic Messages API.
    Messages,
    Embeddings,
    NimRankings,
    TeiRankings,
    CohereRankings,
    /// Hugging Face TGI: `/generate` (`stream: false`) or `/generate_stream`.
    Generate {
        stream: bool,
    },
    /// NIM image retrieval (`/v1/infer`).
    ImageRetrieval,
    /// OpenAI audio transcription (`/v1/audio/transcriptions`, a multipart upload).
    Transcription,
    /// OpenAI image generation (`/v1/images/generations`).
    Images,
}

/// Number of [`Endpoint`] kinds, for the per-endpoint counters.
pub(crate) const ENDPOINT_KINDS: usize = 12;

impl Endpoint {
    /// Index into the per-endpoint counters.
    pub(crate) fn index(self) -> usize {
        match self {
            Endpoint::Chat => 0,
            Endpoint::Completions => 1,
            Endpoint::Responses => 2,
            Endpoint::Messages => 3,
            Endpoint::Embeddings => 4,
            Endpoint::NimRankings => 5,
            Endpoint::TeiRankings => 6,
            Endpoint::CohereRankings => 7,
            Endpoint::Generate { .. } => 8,
            Endpoint::ImageRetrieval => 9,
            Endpoint::Transcription => 10,
            Endpoint::Images => 11,
        }
    }

    /// The endpoint-type name (AIPerf's `--endpoint-type`) of counter `i`.
    pub(crate) fn name_of(i: usize) -> &'static str {
        [
            "chat",
            "completions",
            "responses",
            "messages",
            "embeddings",
            "nim_rankings",
            "hf_tei_rankings",
            "cohere_rankings",
            "huggingface_generate",
            "image_retrieval",
            "audio_transcription",
            "image_generation",
        ]
        .get(i)
        .copied()
        .unwrap_or("unknown")
    }

    /// The endpoint type this route serves (both TGI routes are `huggingface_generate`).
    pub(crate) fn endpoint_type(self) -> EndpointType {
        match self {
            Endpoint::Chat => EndpointType::Chat,
            Endpoint::Completions => EndpointType::Completions,
            Endpoint::Responses => EndpointType::Responses,
            Endpoint::Messages => EndpointType::Messages,
            Endpoint::Embeddings => EndpointType::Embeddings,
            Endpoint::NimRankings => EndpointType::NimRankings,
            Endpoint::TeiRankings => EndpointType::HfTeiRankings,
            Endpoint::CohereRankings => EndpointType::CohereRankings,
            Endpoint::Generate { .. } => EndpointType::HuggingfaceGenerate,
            Endpoint::ImageRetrieval => EndpointType::ImageRetrieval,
            Endpoint::Transcription => EndpointType::AudioTranscription,
            Endpoint::Images => EndpointType::ImageGeneration,
        }
    }

    /// Whether the answer is generated text (the others answer with vectors or scores): the
    /// endpoint type's own rule, so the simulator and the metrics never disagree.
    pub(crate) fn produces_tokens(self) -> bool {
        self.endpoint_type().produces_tokens()
    }
}

/// The fields the simulator reads; everything else is ignored.
#[derive(Debug, Default, Deserialize)]
pub(crate) struct InferRequest<'a> {
    #[serde(default, borrow)]
    pub model: Option<Cow<'a, str>>,
    #[serde(default)]
    pub messages: Option<Messages>,
    #[serde(default)]
    pub prompt: Option<PromptWords>,
    #[serde(default)]
    pub stream: Option<bool>,
    #[serde(default)]
    pub stream_options: Option<StreamOptions>,
    #[serde(default)]
    pub max_tokens: Option<u64>,
    #[serde(default)]
    pub max_completion_tokens: Option<u64>,
    #[serde(default)]
    pub min_tokens: Option<u64>,
    /// Responses API: `input` (a string or items); embeddings: `input` (texts or token ids).
    #[serde(default)]
    pub input: Option<ListWords>,
    /// Responses API system prompt.
    #[serde(default)]
    pub instructions: Option<PromptWords>,
    /// Anthropic top-level system prompt (a string or text blocks).
    #[serde(default)]
    pub system: Option<PromptWords>,
    #[serde(default)]
    pub max_output_tokens: Option<u64>,
    /// TGI prompt.
    #[serde(default)]
    pub inputs: Option<PromptWords>,
    /// TGI generation parameters.
    #[serde(default)]
    pub parameters: Option<TgiParameters>,
    /// Rankings query (a string, or NIM's `{"text": ...}`).
    #[serde(default)]
    pub query: Option<PromptWords>,
    /// NIM rankings passages (`[{"text": ...}]`).
    #[serde(default)]
    pub passages: Option<ListWords>,
    /// TEI rerank texts.
    #[serde(default)]
    pub texts: Option<ListWords>,
    /// Cohere rerank documents.
    #[serde(default)]
    pub documents: Option<ListWords>,
    /// Image generation: images to make (default 1) and `b64_json` or `url`.
    #[serde(default)]
    pub n: Option<u64>,
    #[serde(default, borrow)]
    pub response_format: Option<Cow<'a, str>>,
    /// Audio transcription: the uploaded file's size (set from the form, not from JSON).
    #[serde(skip)]
    pub upload_bytes: Option<u64>,
    // Accepted for completeness: with no real EOS, output length never depends on it.
    #[serde(default)]
    #[allow(dead_code)]
    pub ignore_eos: Option<bool>,
}

#[derive(Debug, Deserialize)]
pub(crate) struct TgiParameters {
    #[serde(default)]
    pub max_new_tokens: Option<u64>,
}

/// A value that is a list (or a lone string): its element count and whitespace word count.
#[derive(Debug, Default, Clone, Copy, PartialEq, Eq)]
pub(crate) struct ListWords {
    pub items: u64,
    pub words: u64,
}

impl<'de> Deserialize<'de> for ListWords {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        struct V;
        impl<'de> Visitor<'de> for V {
            type Value = ListWords;
            fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
                f.write_str("a string or a list")
            }
            fn visit_str<E: de::Error>(self, v: &str) -> Result<ListWords, E> {
                Ok(ListWords {
                    items: 1,
                    words: v.split_whitespace().count() as u64,
                })
            }
            fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<ListWords, A::Error> {
                let mut out = ListWords::default();
                while let Some(PromptWords(w)) = seq.next_element()? {
                    out.items += 1;
                    out.words += w;
                }
                Ok(out)
            }
        }
        d.deserialize_any(V)
    }
}

#[derive(Debug, Deserialize)]
pub(crate) struct StreamOptions {
    #[serde(default)]
    pub include_usage: Option<bool>,
    #[serde(default)]
    pub continuous_usage_stats: Option<bool>,
}

/// Whitespace word count of whatever text a prompt value holds: a string, an array of strings,
/// an array of token ids (one each), or content parts (`{"type":"text","text":...}`). Counting
/// while deserializing avoids allocating the prompt text.
#[derive(Debug, Default, Clone, Copy, PartialEq, Eq)]
pub(crate) struct PromptWords(pub u64);

/// `messages`: an array whose elements' `content` (or `text`) is counted.
#[derive(Debug, Default, Clone, Copy, PartialEq, Eq)]
pub(crate) struct Messages(pub u64);

struct WordsVisitor;

impl<'de> Visitor<'de> for WordsVisitor {
    type Value = PromptWords;

    fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
        f.write_str("prompt text, token ids or content parts")
    }
    fn visit_str<E: de::Error>(self, v: &str) -> Result<PromptWords, E> {
        Ok(PromptWords(v.split_whitespace().count() as u64))
    }
    fn visit_u64<E: de::Error>(self, _: u64) -> Result<PromptWords, E> {
        Ok(PromptWords(1))
    }
    fn visit_i64<E: de::Error>(self, _: i64) -> Result<PromptWords, E> {
        Ok(PromptWords(1))
    }
    fn visit_f64<E: de::Error>(self, _: f64) -> Result<PromptWords, E> {
        Ok(PromptWords(1))
    }
    fn visit_bool<E: de::Error>(self, _: bool) -> Result<PromptWords, E> {
        Ok(PromptWords(0))
    }
    fn visit_unit<E: de::Error>(self) -> Result<PromptWords, E> {
        Ok(PromptWords(0))
    }
    fn visit_none<E: de::Error>(self) -> Result<PromptWords, E> {
        Ok(PromptWords(0))
    }
    fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<PromptWords, A::Error> {
        let mut n = 0;
        while let Some(PromptWords(w)) = seq.next_element()? {
            n += w;
        }
        Ok(PromptWords(n))
    }
    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<PromptWords, A::Error> {
        let mut n = 0;
        while let Some(key) = map.next_key::<TextKey>()? {
            if key.0 {
                n += map.next_value::<PromptWords>()?.0;
            } else {
                map.next_value::<IgnoredAny>()?;
            }
        }
        Ok(PromptWords(n))
    }
}

impl<'de> Deserialize<'de> for PromptWords {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        d.deserialize_any(WordsVisitor)
    }
}

impl<'de> Deserialize<'de> for Messages {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        struct V;
        impl<'de> Visitor<'de> for V {
            type Value = Messages;
            fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
                f.write_str("an array of messages")
            }
            fn visit_seq<A: SeqAccess<'de>>(self, seq: A) -> Result<Messages, A::Error> {
                WordsVisitor.visit_seq(seq).map(|w| Messages(w.0))
            }
        }
        d.deserialize_seq(V)
    }
}

/// A map key: true for the keys holding text (`content` of a message, `text` of a part).
struct TextKey(bool);

impl<'de> Deserialize<'de> for TextKey {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        struct V;
        impl Visitor<'_> for V {
            type Value = TextKey;
            fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
                f.write_str("a key")
            }
            fn visit_str<E: de::Error>(self, v: &str) -> Result<TextKey, E> {
                Ok(TextKey(v == "content" || v == "text"))
            }
        }
        d.deserialize_str(V)
    }
}

/// Output length and finish reason for one request.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct OutputLen {
    pub tokens: usize,
    pub finish: &'static str,
}

/// Applies the length rules: with no real EOS, a given limit is produced exactly (finish
/// "length"); without it, `default_output_tokens` raised to `min_tokens` (finish "stop"). The
/// limit is `max_completion_tokens` else `max_tokens` (chat), `max_tokens` (completions,
/// messages), `max_output_tokens` (responses) or `parameters.max_new_tokens` (TGI).
pub(crate) fn output_len(
    req: &InferRequest<'_>,
    endpoint: Endpoint,
    default_tokens: usize,
) -> Result<OutputLen, String> {
    let (max, name) = match endpoint {
        Endpoint::Chat => match req.max_completion_tokens {
            Some(v) => (Some(v), "max_completion_tokens"),
            None => (req.max_tokens, "max_tokens"),
        },
        Endpoint::Responses => (req.max_output_tokens, "max_output_tokens"),
        Endpoint::Generate { .. } => (
            req.parameters.as_ref().and_then(|p| p.max_new_tokens),
            "parameters.max_new_tokens",
        ),
        _ => (req.max_tokens, "max_tokens"),
    };
    let min = req.min_tokens.unwrap_or(0);
    let limit = MAX_OUTPUT_TOKENS as u64;
    match max {
        Some(0) => Err(format!("{name} must be at least 1")),
        Some(m) if m > limit => Err(format!(
            "{name} {m} exceeds the simulator's limit of {limit} tokens"
        )),
        Some(m) if min > m => Err(format!("min_tokens {min} exceeds {name} {m}")),
        Some(m) => Ok(OutputLen {
            tokens: m as usize,
            finish: "length",
        }),
        None if min > limit => Err(format!(
            "min_tokens {min} exceeds the simulator's limit of {limit} tokens"
        )),
        None => Ok(OutputLen {
            tokens: default_tokens.max(min as usize),
            finish: "stop",
        }),
    }
}

/// What a request asks of the simulator, once its required fields are checked.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct Asked {
    /// Whitespace words of the input (`usage` prompt/input tokens).
    pub prompt_words: u64,
    /// Inputs to embed or passages to rank (0 for text generation).
    pub items: u64,
}

/// Checks the fields `endpoint` requires and counts the input words.
pub(crate) fn asked(req: &InferRequest<'_>, endpoint: Endpoint) -> Result<Asked, String> {
    let missing = |f: &str| Err(format!("missing required field `{f}`"));
    let words = |w: Option<PromptWords>| w.map_or(0, |w| w.0);
    let text = |prompt_words| {
        Ok(Asked {
            prompt_words,
            items: 0,
        })
    };
    match endpoint {
        Endpoint::Chat => match req.messages {
            Some(m) => text(m.0),
            None => missing("messages"),
        },
        Endpoint::Completions => match req.prompt {
            Some(p) => text(p.0),
            None => missing("prompt"),
        },
        Endpoint::Responses => match req.input {
            Some(i) => text(i.words + words(req.instructions)),
            None => missing("input"),
        },
        Endpoint::Messages => match (req.messages, req.max_tokens) {
            (Some(m), Some(_)) => text(m.0 + words(req.system)),
            (None, _) => missing("messages"),
            (_, None) => missing("max_tokens"),
        },
        Endpoint::Generate { .. } => match req.inputs {
            Some(i) => text(i.0),
            None => missing("inputs"),
        },
        Endpoint::Embeddings => match (req.input, req.messages) {
            (Some(i), _) if i.items > 0 => Ok(Asked {
                prompt_words: i.words,
                items: i.items,
            }),
            (Some(_), _) => Err("`input` must not be empty".to_owned()),
            // chat_embeddings: chat messages (with media parts) make one embedding.
            (None, Some(m)) => Ok(Asked {
                prompt_words: m.0,
                items: 1,
            }),
            (None, None) => missing("input"),
        },
        Endpoint::ImageRetrieval => match req.input {
            Some(i) if i.items > 0 => Ok(Asked {
                prompt_words: 0,
                items: i.items,
            }),
            Some(_) => Err("`input` must not be empty".to_owned()),
            None => missing("input"),
        },
        Endpoint::Transcription => match req.upload_bytes {
            Some(_) => Ok(Asked {
                prompt_words: 0,
                items: 1,
            }),
            None => missing("file"),
        },
        Endpoint::Images => match (req.prompt, req.n) {
            (_, Some(0)) => Err("`n` must be at least 1".to_owned()),
            (_, Some(n)) if n > 10 => Err("`n` must be at most 10".to_owned()),
            (Some(p), n) => Ok(Asked {
                prompt_words: p.0,
                items: n.unwrap_or(1),
            }),
            (None, _) => missing("prompt"),
        },
        Endpoint::NimRankings | Endpoint::TeiRankings | Endpoint::CohereRankings => {
            let (list, name) = match endpoint {
                Endpoint::NimRankings => (req.passages, "passages"),
                Endpoint::TeiRankings => (req.texts, "texts"),
                _ => (req.documents, "documents"),
            };
            match (req.query, list) {
                (Some(q), Some(l)) => Ok(Asked {
                    prompt_words: q.0 + l.words,
                    items: l.items,
                }),
                (None, _) => missing("query"),
                (_, None) => missing(name),
            }
        }
    }
}

/// Deterministic fault choice by arrival number k (1-based): request k is hit when
/// floor((k + offset) * rate / 100) > floor((k + offset - 1) * rate / 100), which spreads
/// exactly rate% of hits evenly over any run.
#[derive(Debug, Clone, Copy)]
pub(crate) struct FaultPlan {
    error_rate: f64,
    cut_rate: f64,
    error_offset: u64,
    cut_offset: u64,
}

impl FaultPlan {
    pub(crate) fn new(error_rate: f64, cut_rate: f64, seed: u64) -> Self {
        // Seed 0 reproduces the recording mock (errors at k = 10, 20, ...; cuts offset by 7 so
        // they do not land on errors). Other seeds pick both phases from the run seed.
        let (error_offset, cut_offset) = if seed == 0 {
            (0, 7)
        } else {
            let b = inferbench_core::seed::derive_seed(seed, "sim-faults");
            let e = u64::from_le_bytes(b[0..8].try_into().unwrap_or_default());
            let c = u64::from_le_bytes(b[8..16].try_into().unwrap_or_default());
            (e % 100, c % 100)
        };
        FaultPlan {
            error_rate,
            cut_rate,
            error_offset,
            cut_offset,
        }
    }

    pub(crate) fn hit(rate: f64, k: u64) -> bool {
        if rate <= 0.0 || k == 0 {
            return false;
        }
        (k as f64 * rate / 100.0).floor() > ((k - 1) as f64 * rate / 100.0).floor()
    }

    pub(crate) fn is_error(&self, k: u64) -> bool {
        Self::hit(self.error_rate, k + self.error_offset)
    }

    /// The error rate and its phase: the first share of the arrivals (faults::pick).
    pub(crate) fn error_share(&self) -> (f64, u64) {
        (self.error_rate, self.error_offset)
    }

    pub(crate) fn is_cut(&self, k: u64) -> bool {
        Self::hit(self.cut_rate, k + self.cut_offset)
    }
}

/// Fast deterministic hash of the request body (8 bytes at a time, then a final mix).
pub(crate) fn body_hash(bytes: &[u8]) -> u64 {
    const K: u64 = 0x9E37_79B9_7F4A_7C15;
    let mut h = 0xcbf2_9ce4_8422_2325 ^ bytes.len() as u64;
    let mut chunks = bytes.chunks_exact(8);
    for c in &mut chunks {
        let mut w = [0u8; 8];
        w.copy_from_slice(c);
        h = (h ^ u64::from_le_bytes(w)).wrapping_mul(K).rotate_left(29);
    }
    let mut tail = [0u8; 8];
    tail[..chunks.remainder().len()].copy_from_slice(chunks.remainder());
    h = (h ^ u64::from_le_bytes(tail)).wrapping_mul(K);
    // splitmix64 finalizer so every input bit reaches the low bits used for the modulo.
    h ^= h >> 30;
    h = h.wrapping_mul(0xBF58_476D_1CE4_E5B9);
    h ^= h >> 27;
    h = h.wrapping_mul(0x94D0_49BB_1331_11EB);
    h ^ (h >> 31)
}

#[cfg(test)]
mod tests {
    use super::*;

    const ALL: [Endpoint; 13] = [
        Endpoint::Chat,
        Endpoint::Completions,
        Endpoint::Responses,
        Endpoint::Messages,
        Endpoint::Embeddings,
        Endpoint::NimRankings,
        Endpoint::TeiRankings,
        Endpoint::CohereRankings,
        Endpoint::Generate { stream: false },
        Endpoint::Generate { stream: true },
        Endpoint::ImageRetrieval,
        Endpoint::Transcription,
        Endpoint::Images,
    ];

    #[test]
    fn each_route_maps_to_the_endpoint_type_its_counter_is_named_after() {
        for e in ALL {
            assert_eq!(Endpoint::name_of(e.index()), e.endpoint_type().as_str());
        }
    }

    #[test]
    fn only_the_vector_score_and_media_routes_produce_no_tokens() {
        let silent: Vec<Endpoint> = ALL.into_iter().filter(|e| !e.produces_tokens()).collect();
        assert_eq!(
            silent,
            vec![
                Endpoint::Embeddings,
                Endpoint::NimRankings,
                Endpoint::TeiRankings,
                Endpoint::CohereRankings,
                Endpoint::ImageRetrieval,
                Endpoint::Transcription,
                Endpoint::Images,
            ]
        );
    }

    fn parse(s: &str) -> InferRequest<'_> {
        serde_json::from_str(s).unwrap()
    }

    #[test]
    fn counts_words_in_all_prompt_shapes() {
        let r = parse(
            r#"{"messages":[{"role":"system","content":"be  brief"},
                {"role":"user","content":[{"type":"text","text":"hello there world"},
                 {"type":"image_url","image_url":{"url":"data:x y z"}}]}],"model":"m\"x"}"#,
        );
        assert_eq!(r.messages, Some(Messages(5)));
        assert_eq!(r.model.as_deref(), Some("m\"x"));
        let r = parse(r#"{"prompt":" I did present him"}"#);
        assert_eq!(r.prompt, Some(PromptWords(4)));
        let r = parse(r#"{"prompt":["a b","c"]}"#);
        assert_eq!(r.prompt, Some(PromptWords(3)));
        let r = parse(r#"{"prompt":[1,2,3,4,5,6,7]}"#);
        assert_eq!(r.prompt, Some(PromptWords(7)));
        // The fixtures' prompt: 23 whitespace words.
        let r = parse(
            r#"{"messages":[{"role":"user","content":" Sblood I would my face were in your belly FALSTAFF Godamercy so should I be sure to be heartburnt Enter the Hostess How"}]}"#,
        );
        assert_eq!(r.messages, Some(Messages(23)));
    }

    #[test]
    fn messages_must_be_an_array() {
        assert!(serde_json::from_str::<InferRequest>(r#"{"messages":"hi"}"#).is_err());
        assert!(serde_json::from_str::<InferRequest>(r#"{"max_tokens":-1,"prompt":"x"}"#).is_err());
    }

    #[test]
    fn length_rules() {
        let r = parse(r#"{"max_completion_tokens":16,"max_tokens":3,"min_tokens":16}"#);
        assert_eq!(
            output_len(&r, Endpoint::Chat, 7),
            Ok(OutputLen {
                tokens: 16,
                finish: "length"
            })
        );
        // Completions read only max_tokens, which is then below min_tokens.
        assert_eq!(
            output_len(&r, Endpoint::Completions, 7),
            Err("min_tokens 16 exceeds max_tokens 3".to_owned())
        );
        let r = parse(r#"{"max_completion_tokens":16,"max_tokens":3}"#);
        assert_eq!(output_len(&r, Endpoint::Completions, 7).unwrap().tokens, 3);
        let r = parse(r#"{}"#);
        assert_eq!(
            output_len(&r, Endpoint::Chat, 7),
            Ok(OutputLen {
                tokens: 7,
                finish: "stop"
            })
        );
        let r = parse(r#"{"min_tokens":9}"#);
        assert_eq!(output_len(&r, Endpoint::Chat, 7).unwrap().tokens, 9);
        assert!(output_len(&parse(r#"{"max_tokens":0}"#), Endpoint::Chat, 7).is_err());
        assert!(
            output_len(
                &parse(r#"{"max_tokens":4,"min_tokens":5}"#),
                Endpoint::Chat,
                7
            )
            .is_err()
        );
        assert!(output_len(&parse(r#"{"max_tokens":99999999}"#), Endpoint::Chat, 7).is_err());
    }

    #[test]
    fn fault_sequence_matches_the_recording_mock() {
        // Fixture README: rate 10 errors at k = 10, 20, ..., 80; rate 5 cuts at 13, 33, 53, 73.
        let p = FaultPlan::new(10.0, 5.0, 0);
        let errors: Vec<u64> = (1..=80).filter(|&k| p.is_error(k)).collect();
        assert_eq!(errors, vec![10, 20, 30, 40, 50, 60, 70, 80]);
        let cuts: Vec<u64> = (1..=80).filter(|&k| p.is_cut(k)).collect();
        assert_eq!(cuts, vec![13, 33, 53, 73]);
    }

    #[test]
    fn fault_rates_are_exact_for_any_seed() {
        for seed in [1, 2, 99] {
            let p = FaultPlan::new(25.0, 0.0, seed);
            assert_eq!((1..=400).filter(|&k| p.is_error(k)).count(), 100);
            assert_eq!((1..=400).filter(|&k| p.is_cut(k)).count(), 0);
        }
        let all = FaultPlan::new(100.0, 100.0, 3);
        assert!((1..=50).all(|k| all.is_error(k) && all.is_cut(k)));
    }

    #[test]
    fn hash_is_deterministic_and_input_sensitive() {
        assert_eq!(body_hash(b"hello world!"), body_hash(b"hello world!"));
        assert_ne!(body_hash(b"hello world!"), body_hash(b"hello world?"));
        assert_ne!(body_hash(b""), body_hash(b"\0"));
    }
}
