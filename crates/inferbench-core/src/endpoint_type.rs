//! The API a run talks to (`--endpoint-type`) and what each type implies.

use serde::{Deserialize, Serialize};

/// The API a run talks to (AIPerf's `--endpoint-type`). Each has a request builder
/// (`inferbench-workload`), a response decoder (`inferbench-client`) and a simulated-server
/// route (`inferbench-sim`).
#[derive(Serialize, Deserialize, Clone, Copy, Debug, PartialEq, Eq, Hash)]
#[serde(rename_all = "snake_case")]
pub enum EndpointType {
    Chat,
    Completions,
    /// OpenAI Responses API.
    Responses,
    /// Anthropic Messages API.
    Messages,
    Embeddings,
    /// NVIDIA NIM embeddings: OpenAI's body; with images, text *i* and image *i* as one input.
    NimEmbeddings,
    /// Chat `messages` (text and media parts) at `/v1/embeddings` (vLLM's multimodal
    /// embedding models): the chat body, an embeddings response.
    ChatEmbeddings,
    /// NIM image retrieval: `{"input": [{"type": "image_url", "url": …}]}` at `/v1/infer`.
    ImageRetrieval,
    /// OpenAI audio transcription: a multipart upload of one audio file, a `text` answer.
    AudioTranscription,
    /// OpenAI image generation: a JSON prompt, images back in `data[].b64_json`/`url`.
    ImageGeneration,
    NimRankings,
    HfTeiRankings,
    CohereRankings,
    HuggingfaceGenerate,
    /// A body rendered from a minijinja template.
    Template,
    /// Verbatim payloads from the dataset.
    Raw,
}

impl EndpointType {
    pub const ALL: [EndpointType; 16] = [
        EndpointType::Chat,
        EndpointType::Completions,
        EndpointType::Responses,
        EndpointType::Messages,
        EndpointType::Embeddings,
        EndpointType::NimEmbeddings,
        EndpointType::ChatEmbeddings,
        EndpointType::ImageRetrieval,
        EndpointType::AudioTranscription,
        EndpointType::ImageGeneration,
        EndpointType::NimRankings,
        EndpointType::HfTeiRankings,
        EndpointType::CohereRankings,
        EndpointType::HuggingfaceGenerate,
        EndpointType::Template,
        EndpointType::Raw,
    ];

    pub fn as_str(self) -> &'static str {
        match self {
            EndpointType::Chat => "chat",
            EndpointType::Completions => "completions",
            EndpointType::Responses => "responses",
            EndpointType::Messages => "messages",
            EndpointType::Embeddings => "embeddings",
            EndpointType::NimEmbeddings => "nim_embeddings",
            EndpointType::ChatEmbeddings => "chat_embeddings",
            EndpointType::ImageRetrieval => "image_retrieval",
            EndpointType::AudioTranscription => "audio_transcription",
            EndpointType::ImageGeneration => "image_generation",
            EndpointType::NimRankings => "nim_rankings",
            EndpointType::HfTeiRankings => "hf_tei_rankings",
            EndpointType::CohereRankings => "cohere_rankings",
            EndpointType::HuggingfaceGenerate => "huggingface_generate",
            EndpointType::Template => "template",
            EndpointType::Raw => "raw",
        }
    }

    pub fn parse(s: &str) -> Option<EndpointType> {
        EndpointType::ALL.into_iter().find(|e| e.as_str() == s)
    }

    /// Default URL path (AIPerf's `endpoint_path`); `template` and `raw` have none and need
    /// `--custom-endpoint` (an empty string here).
    pub fn default_path(self) -> &'static str {
        match self {
            EndpointType::Chat => "/v1/chat/completions",
            EndpointType::Completions => "/v1/completions",
            EndpointType::Responses => "/v1/responses",
            EndpointType::Messages => "/v1/messages",
            EndpointType::Embeddings
            | EndpointType::NimEmbeddings
            | EndpointType::ChatEmbeddings => "/v1/embeddings",
            EndpointType::ImageRetrieval => "/v1/infer",
            EndpointType::AudioTranscription => "/v1/audio/transcriptions",
            EndpointType::ImageGeneration => "/v1/images/generations",
            EndpointType::NimRankings => "/v1/ranking",
            EndpointType::HfTeiRankings => "/rerank",
            EndpointType::CohereRankings => "/v2/rerank",
            EndpointType::HuggingfaceGenerate => "/generate",
            EndpointType::Template | EndpointType::Raw => "",
        }
    }

    /// The path used when streaming, where the API has a separate one (TGI's
    /// `/generate_stream`); otherwise the default path.
    pub fn streaming_path(self) -> &'static str {
        match self {
            EndpointType::HuggingfaceGenerate => "/generate_stream",
            other => other.default_path(),
        }
    }

    /// Whether `--streaming` applies (AIPerf turns it off silently otherwise).
    pub fn supports_streaming(self) -> bool {
        !matches!(
            self,
            EndpointType::Embeddings
                | EndpointType::NimEmbeddings
                | EndpointType::ChatEmbeddings
                | EndpointType::ImageRetrieval
                | EndpointType::AudioTranscription
                | EndpointType::NimRankings
                | EndpointType::HfTeiRankings
                | EndpointType::CohereRankings
        )
    }

    /// Whether responses carry generated tokens; when not, no token metric is computed.
    pub fn produces_tokens(self) -> bool {
        !matches!(
            self,
            EndpointType::Embeddings
                | EndpointType::NimEmbeddings
                | EndpointType::ChatEmbeddings
                | EndpointType::ImageRetrieval
                | EndpointType::AudioTranscription
                | EndpointType::ImageGeneration
                | EndpointType::NimRankings
                | EndpointType::HfTeiRankings
                | EndpointType::CohereRankings
        )
    }

    /// Whether the input texts are tokenized for ISL (AIPerf's `tokenizes_input`): not for
    /// image retrieval and audio transcription, whose inputs are media only.
    pub fn tokenizes_input(self) -> bool {
        !matches!(
            self,
            EndpointType::ImageRetrieval | EndpointType::AudioTranscription
        )
    }

    /// Whether a turn's images are sent (AIPerf's `supports_images`); the image metrics
    /// (`num_images`, `image_throughput`, `image_latency`) apply to these types only.
    pub fn supports_images(self) -> bool {
        matches!(
            self,
            EndpointType::Chat
                | EndpointType::Responses
                | EndpointType::Messages
                | EndpointType::ChatEmbeddings
                | EndpointType::NimEmbeddings
                | EndpointType::ImageRetrieval
                | EndpointType::Template
                | EndpointType::Raw
        )
    }

    /// Whether a turn's audio is sent (AIPerf's `supports_audio`); `audio_duration` and
    /// `rtfx` apply to these types only.
    pub fn supports_audio(self) -> bool {
        matches!(
            self,
            EndpointType::Chat
                | EndpointType::Responses
                | EndpointType::AudioTranscription
                | EndpointType::Template
                | EndpointType::Raw
        )
    }

    /// Whether a turn's videos are sent (AIPerf's `supports_videos`).
    pub fn supports_videos(self) -> bool {
        matches!(
            self,
            EndpointType::Chat | EndpointType::Template | EndpointType::Raw
        )
    }

    /// Whether the body goes out as `multipart/form-data` (AIPerf's `requires_form_data`):
    /// the frozen body is JSON, a file field being `{b64_data, filename, content_type}`.
    pub fn multipart(self) -> bool {
        matches!(self, EndpointType::AudioTranscription)
    }
}
