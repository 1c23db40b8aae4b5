//! The media side of request bodies: a turn's texts, images, audio and video as the content
//! parts of one message (chat, Responses, Anthropic shapes), and the bodies of the media
//! endpoint types (`nim_embeddings` with images, `image_retrieval`, `audio_transcription`,
//! `image_generation`). See `docs/endpoints.md`.

use inferbench_core::plan::{EndpointType, RunPlan};
use serde_json::{Map, Value, json};

use super::TurnInput;
use crate::error::WorkloadError;
use crate::media::{MediaRef, split_audio};

fn plan_err(field: &'static str, message: impl Into<String>) -> WorkloadError {
    WorkloadError::Plan {
        field,
        message: message.into(),
    }
}

/// Refuses media an endpoint type does not send (AIPerf drops some silently, or fails at
/// request time): the error names the field and where such media can go.
pub(super) fn check_media(endpoint: EndpointType, turn: &TurnInput) -> Result<(), WorkloadError> {
    let name = endpoint.as_str();
    let refuse = |field: &'static str, takes: &str| {
        Err(plan_err(
            field,
            format!("the {name} endpoint sends no {field} ({field} go with {takes})"),
        ))
    };
    let images = !turn.images.is_empty() && !endpoint.supports_images();
    let audio = !turn.audios.is_empty() && !endpoint.supports_audio();
    if images {
        return refuse(
            "images",
            "chat, chat_embeddings, nim_embeddings, image_retrieval, responses, messages, template",
        );
    }
    if audio {
        return refuse("audios", "chat, responses, audio_transcription, template");
    }
    if !turn.videos.is_empty() && !endpoint.supports_videos() {
        return refuse("videos", "chat, template");
    }
    Ok(())
}

/// Whether the turn has any media to send.
pub(super) fn has_media(turn: &TurnInput) -> bool {
    !(turn.images.is_empty() && turn.audios.is_empty() && turn.videos.is_empty())
}

/// The content of a turn's message: one text alone is a plain string (AIPerf's shortcut),
/// otherwise content parts: the non-empty texts, then the images, the audio, the videos.
/// `text_type` is the text part's type (`text`, or Responses' `input_text`).
pub(super) fn content(
    endpoint: EndpointType,
    texts: &[String],
    turn: &TurnInput,
    text_type: &str,
) -> Result<Value, WorkloadError> {
    if texts.len() == 1 && !has_media(turn) {
        return Ok(Value::from(texts[0].clone()));
    }
    let mut parts: Vec<Value> = texts
        .iter()
        .filter(|t| !t.is_empty())
        .map(|t| json!({"type": text_type, "text": t}))
        .collect();
    for m in &turn.images {
        if let Some(p) = image_part(endpoint, m) {
            parts.push(p);
        }
    }
    for m in turn.audios.iter().filter(|m| !m.content.is_empty()) {
        let (format, data) = split_audio(&m.content).ok_or_else(|| {
            plan_err(
                "audios",
                "an audio clip must be \"<format>,<base64>\" (a local .wav/.mp3 file is encoded so)",
            )
        })?;
        parts.push(json!({"type": "input_audio", "input_audio": {"data": data, "format": format}}));
    }
    for m in turn.videos.iter().filter(|m| !m.content.is_empty()) {
        parts.push(json!({"type": "video_url", "video_url": {"url": &*m.content}}));
    }
    Ok(if parts.is_empty() {
        Value::from("")
    } else {
        Value::Array(parts)
    })
}

/// One image part in the endpoint's shape; an image with a cache uuid is always sent (an
/// empty URL when only the uuid was given), one without is skipped when empty.
fn image_part(endpoint: EndpointType, m: &MediaRef) -> Option<Value> {
    let url = &*m.content;
    if url.is_empty() && m.uuid.is_none() {
        return None;
    }
    Some(match endpoint {
        EndpointType::Responses => json!({"type": "input_image", "image_url": url}),
        EndpointType::Messages => match url.strip_prefix("data:") {
            Some(rest) => {
                let (head, data) = rest.split_once(',').unwrap_or((rest, ""));
                let media_type = head.split(';').next().filter(|t| !t.is_empty());
                json!({"type": "image", "source": {
                    "type": "base64",
                    "media_type": media_type.unwrap_or("image/png"),
                    "data": data,
                }})
            }
            None => json!({"type": "image", "source": {"type": "url", "url": url}}),
        },
        _ => match &m.uuid {
            Some(u) => json!({"type": "image_url", "image_url": {"url": url}, "uuid": u}),
            None => json!({"type": "image_url", "image_url": {"url": url}}),
        },
    })
}

/// NIM embeddings' `input`: the texts, the images, or, with both, text *i* and image *i*
/// joined by a space (their counts must match).
pub(super) fn nim_inputs(texts: &[&str], turn: &TurnInput) -> Result<Vec<String>, WorkloadError> {
    let images: Vec<&str> = turn
        .images
        .iter()
        .map(|m| &*m.content)
        .filter(|c| !c.is_empty())
        .collect();
    let texts: Vec<&str> = texts.iter().copied().filter(|t| !t.is_empty()).collect();
    Ok(match (texts.is_empty(), images.is_empty()) {
        (_, true) => texts.iter().map(|t| (*t).to_owned()).collect(),
        (true, false) => images.iter().map(|i| (*i).to_owned()).collect(),
        (false, false) => {
            if texts.len() != images.len() {
                return Err(plan_err(
                    "images",
                    format!(
                        "nim_embeddings pairs text i with image i: got {} texts and {} images",
                        texts.len(),
                        images.len()
                    ),
                ));
            }
            texts
                .iter()
                .zip(&images)
                .map(|(t, i)| format!("{t} {i}"))
                .collect()
        }
    })
}

/// `image_retrieval`: `{"input": [{"type": "image_url", "url": …}, …]}` (no model).
pub(super) fn image_retrieval(turn: &TurnInput) -> Result<Map<String, Value>, WorkloadError> {
    let parts: Vec<Value> = turn
        .images
        .iter()
        .filter(|m| !m.content.is_empty())
        .map(|m| json!({"type": "image_url", "url": &*m.content}))
        .collect();
    if parts.is_empty() {
        return Err(plan_err(
            "images",
            "an image_retrieval request needs at least one image",
        ));
    }
    let mut body = Map::new();
    body.insert("input".into(), Value::Array(parts));
    Ok(body)
}

/// The content type of an audio format, as AIPerf names it.
fn audio_mime(format: &str) -> String {
    match format {
        "wav" => "audio/wav".into(),
        "mp3" | "mpga" | "mpeg" => "audio/mpeg".into(),
        "flac" => "audio/flac".into(),
        "ogg" => "audio/ogg".into(),
        "m4a" | "mp4" => "audio/mp4".into(),
        "webm" => "audio/webm".into(),
        other => format!("audio/{other}"),
    }
}

/// `audio_transcription`: the turn's first audio clip as the `file` field
/// (`{b64_data, filename: "audio.<fmt>", content_type}`), then `model`. The engine sends it
/// as a multipart form.
pub(super) fn audio_transcription(
    model: &str,
    turn: &TurnInput,
) -> Result<Map<String, Value>, WorkloadError> {
    let first = turn
        .audios
        .first()
        .filter(|m| !m.content.is_empty())
        .ok_or_else(|| {
            plan_err(
                "audios",
                "an audio_transcription request needs an audio clip",
            )
        })?;
    let (format, data) = split_audio(&first.content)
        .ok_or_else(|| plan_err("audios", "an audio clip must be \"<format>,<base64>\""))?;
    let format = format.to_ascii_lowercase();
    let mut body = Map::new();
    body.insert(
        "file".into(),
        json!({
            "b64_data": data,
            "filename": format!("audio.{format}"),
            "content_type": audio_mime(&format),
        }),
    );
    body.insert("model".into(), Value::from(model));
    Ok(body)
}

/// `image_generation`: the first text as `prompt`, `model`, `response_format: "b64_json"`
/// (AIPerf's default, which SGLang needs), `n: 1`, and `stream: true` when streaming.
pub(super) fn image_generation(
    plan: &RunPlan,
    model: &str,
    turn: &TurnInput,
) -> Result<Map<String, Value>, WorkloadError> {
    let prompt = turn
        .texts
        .first()
        .ok_or_else(|| plan_err("texts", "an image_generation request needs a text prompt"))?;
    let mut body = Map::new();
    body.insert("prompt".into(), Value::from(prompt.clone()));
    body.insert("model".into(), Value::from(model));
    body.insert("response_format".into(), Value::from("b64_json"));
    body.insert("n".into(), Value::from(1));
    if plan.streaming {
        body.insert("stream".into(), Value::Bool(true));
    }
    Ok(body)
}

/// The form endpoint's file field is its own: `--extra-inputs file` or a row's `extra.file`
/// would replace the upload (AIPerf drops them with a warning; here it is an error).
pub(super) fn check_reserved(
    endpoint: EndpointType,
    plan: &RunPlan,
    turn: &TurnInput,
) -> Result<(), WorkloadError> {
    if endpoint != EndpointType::AudioTranscription {
        return Ok(());
    }
    if plan.extra_inputs.contains_key("file") {
        return Err(plan_err(
            "extra_inputs",
            "--extra-inputs file: the audio_transcription endpoint sends the turn's audio as `file`",
        ));
    }
    if turn.extra.as_ref().is_some_and(|e| e.contains_key("file")) {
        return Err(plan_err(
            "extra",
            "extra.file: the audio_transcription endpoint sends the turn's audio as `file`",
        ));
    }
    Ok(())
}
