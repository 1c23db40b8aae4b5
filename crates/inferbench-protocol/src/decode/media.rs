//! The media APIs: audio transcription (a `text` answer, JSON or plain text) and image
//! generation (images in `data[]`, or one per streamed event).

use serde_json::Value;

use super::common::{error_decoded, error_of, usage};
use super::{DecodeError, Decoded, excerpt};

/// An `audio_transcription` answer: JSON (`json`, `verbose_json`) gives its `text` as the
/// content (and `usage`); any other body (`text`, `srt`, `vtt`) is the transcript itself.
/// An empty transcript, or JSON without `text`, is not an answer.
pub(super) fn decode_transcription(data: &str) -> Result<Decoded, DecodeError> {
    let unexpected = || DecodeError::Unexpected {
        endpoint: "audio_transcription",
        expected: "a transcript (JSON with a non-empty \"text\", or plain text)",
        excerpt: excerpt(data),
    };
    match serde_json::from_str::<Value>(data) {
        Ok(v @ Value::Object(_)) => {
            if let Some(e) = error_of(&v) {
                return Ok(error_decoded(e));
            }
            match v.get("text").and_then(Value::as_str) {
                Some(t) if !t.is_empty() => Ok(Decoded {
                    content: Some(t.to_owned()),
                    usage: usage(v.get("usage")),
                    ..Decoded::default()
                }),
                _ => Err(unexpected()),
            }
        }
        // A JSON string is a quoted transcript; any other JSON (a number) or plain text is
        // the transcript as written.
        Ok(Value::String(t)) if !t.is_empty() => Ok(Decoded {
            content: Some(t),
            ..Decoded::default()
        }),
        _ if !data.trim().is_empty() => Ok(Decoded {
            content: Some(data.to_owned()),
            ..Decoded::default()
        }),
        _ => Err(unexpected()),
    }
}

/// An `image_generation` answer: a body with a non-empty `data[]` (each item a `b64_json`
/// or a `url`), or a streamed event carrying a `b64_json` image. No text; `usage` as sent.
/// A streamed event with neither (a lifecycle event) decodes to nothing; a body with
/// neither is not an answer.
pub(super) fn decode_images(data: &str, body: bool) -> Result<Decoded, DecodeError> {
    let v: Value = serde_json::from_str(data).map_err(|_| DecodeError::NotJson {
        excerpt: excerpt(data),
    })?;
    if let Some(e) = error_of(&v) {
        return Ok(error_decoded(e));
    }
    let has_image = v.get("b64_json").is_some_and(Value::is_string)
        || v.get("data")
            .and_then(Value::as_array)
            .is_some_and(|items| {
                !items.is_empty()
                    && items
                        .iter()
                        .all(|i| i.get("b64_json").is_some() || i.get("url").is_some())
            });
    if has_image || !body {
        return Ok(Decoded {
            usage: usage(v.get("usage")),
            ..Decoded::default()
        });
    }
    Err(DecodeError::Unexpected {
        endpoint: "image_generation",
        expected: "data[] of images (b64_json or url)",
        excerpt: excerpt(data),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn transcripts_in_every_response_format() {
        let d = decode_transcription(r#"{"text":"hello there","usage":{"seconds":3}}"#).unwrap();
        assert_eq!(d.content.as_deref(), Some("hello there"));
        assert!(d.usage.is_some());
        let d = decode_transcription("1\n00:00:00,000 --> 00:00:01,000\nhi\n").unwrap();
        assert!(d.content.unwrap().contains("hi"));
        assert_eq!(
            decode_transcription(r#""plain""#)
                .unwrap()
                .content
                .as_deref(),
            Some("plain")
        );
        assert!(decode_transcription(r#"{"text":""}"#).is_err());
        assert!(decode_transcription("  ").is_err());
        let e = decode_transcription(r#"{"error":{"message":"bad audio"}}"#).unwrap();
        assert_eq!(e.error.as_deref(), Some("bad audio"));
    }

    #[test]
    fn images_in_bodies_and_events() {
        assert!(decode_images(r#"{"created":1,"data":[{"b64_json":"AAAA"}]}"#, true).is_ok());
        assert!(decode_images(r#"{"data":[{"url":"https://h/i.png"}]}"#, true).is_ok());
        assert!(decode_images(r#"{"data":[]}"#, true).is_err());
        assert!(decode_images(r#"{"data":[{"x":1}]}"#, true).is_err());
        let ev =
            r#"{"type":"image_generation.completed","b64_json":"AAAA","usage":{"total_tokens":5}}"#;
        assert!(decode_images(ev, false).unwrap().usage.is_some());
        assert_eq!(
            decode_images(r#"{"type":"x"}"#, false).unwrap(),
            Decoded::default()
        );
        assert!(decode_images("nope", true).is_err());
    }
}
