//! The media routes: NIM image retrieval (`/v1/infer`), OpenAI audio transcription
//! (`/v1/audio/transcriptions`, a multipart upload) and image generation
//! (`/v1/images/generations`). Each answers once, when a first token would be due (its
//! `--sim-ttft-ms`), with a small deterministic body.

use std::borrow::Cow;

use bytes::{BufMut, BytesMut};
use serde_json::{Value, json};

use crate::api::Req;
use crate::render::Words;
use crate::request::{Endpoint, InferRequest};

/// Words in a simulated transcript.
pub(crate) const TRANSCRIPT_WORDS: usize = 12;

/// A 1×1 grey PNG, base64: the image every generation returns.
pub(crate) const PNG_1X1_B64: &str =
    "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAIAAACQd1PeAAAADElEQVR4nGNoaGgAAAMEAYFL09IQAAAAAElFTkSuQmCC";

/// The request an `audio_transcription` form makes: its `model` field and the upload's size.
/// The error says what is missing or malformed.
pub(crate) fn form_request<'a>(
    body: &'a [u8],
    content_type: Option<&str>,
) -> Result<InferRequest<'a>, String> {
    let ct = content_type.unwrap_or_default();
    if !ct
        .trim_start()
        .to_ascii_lowercase()
        .starts_with("multipart/form-data")
    {
        return Err(format!(
            "expected a multipart/form-data upload, got Content-Type {ct:?}"
        ));
    }
    let boundary = ct
        .split(';')
        .map(str::trim)
        .find_map(|p| p.strip_prefix("boundary="))
        .map(|b| b.trim_matches('"'))
        .filter(|b| !b.is_empty())
        .ok_or("the multipart Content-Type names no boundary")?;
    let parts = inferbench_protocol::multipart::parse_form(body, boundary)
        .ok_or("the multipart body is not well formed")?;
    let file = parts
        .iter()
        .find(|p| p.name == "file")
        .ok_or("missing required field `file`")?;
    if file.data.is_empty() {
        return Err("the uploaded `file` is empty".to_owned());
    }
    let model = parts
        .iter()
        .find(|p| p.name == "model")
        .and_then(|p| std::str::from_utf8(p.data).ok())
        .map(Cow::Borrowed);
    Ok(InferRequest {
        model,
        upload_bytes: Some(file.data.len() as u64),
        ..Default::default()
    })
}

/// Whether an image generation request asked for URLs instead of base64.
pub(crate) fn wants_urls(req: &InferRequest<'_>) -> bool {
    req.response_format.as_deref() == Some("url")
}

/// The whole answer of a media route (never streamed, except image generation's one
/// `image_generation.completed` event, see [`images_event`]).
pub(crate) fn full_body(req: &Req, words: &Words, urls: bool) -> BytesMut {
    let mut out = BytesMut::new();
    match req.shape.endpoint {
        Endpoint::ImageRetrieval => {
            let data: Vec<Value> = (0..req.items)
                .map(|i| json!({"index": i, "object": "retrieval", "bounding_boxes": []}))
                .collect();
            out.put_slice(
                json!({"data": data, "usage": {"images_size_mb": 0}})
                    .to_string()
                    .as_bytes(),
            );
        }
        Endpoint::Transcription => {
            out.put_slice(b"{\"text\":\"");
            words.push(&mut out, req.shape.offset, 0..TRANSCRIPT_WORDS);
            out.put_slice(b"\"}");
        }
        _ => {
            let data: Vec<Value> = (0..req.items)
                .map(|i| {
                    if urls {
                        json!({"url": format!("https://sim.invalid/images/{}-{i}.png", req.id)})
                    } else {
                        json!({"b64_json": PNG_1X1_B64})
                    }
                })
                .collect();
            out.put_slice(
                json!({"created": req.created, "data": data, "usage": images_usage(req)})
                    .to_string()
                    .as_bytes(),
            );
        }
    }
    out
}

fn images_usage(req: &Req) -> Value {
    let p = req.shape.prompt_tokens;
    json!({"input_tokens": p, "output_tokens": 0, "total_tokens": p})
}

/// A streamed image generation: one `image_generation.completed` event per image.
pub(crate) fn images_event(req: &Req) -> BytesMut {
    let mut out = BytesMut::new();
    for i in 0..req.items {
        let ev = json!({
            "type": "image_generation.completed",
            "b64_json": PNG_1X1_B64,
            "created_at": req.created,
            "index": i,
            "usage": images_usage(req),
        });
        out.put_slice(b"event: image_generation.completed\ndata: ");
        out.put_slice(ev.to_string().as_bytes());
        out.put_slice(b"\n\n");
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_canned_png_is_a_png() {
        // Base64 of the PNG signature and the IHDR length: 89 50 4E 47 0D 0A 1A 0A 00 00.
        assert!(PNG_1X1_B64.starts_with("iVBORw0KGgoAAAANSUhEUgAAAAEAAAAB"));
    }

    #[test]
    fn forms_are_read_and_checked() {
        let body = b"--B\r\nContent-Disposition: form-data; name=\"file\"; filename=\"a.wav\"\r\n\r\nRIFF\r\n--B\r\nContent-Disposition: form-data; name=\"model\"\r\n\r\nw\r\n--B--\r\n";
        let r = form_request(body, Some("multipart/form-data; boundary=B")).unwrap();
        assert_eq!(r.model.as_deref(), Some("w"));
        assert_eq!(r.upload_bytes, Some(4));
        assert!(
            form_request(body, Some("application/json"))
                .unwrap_err()
                .contains("multipart")
        );
        assert!(
            form_request(body, Some("multipart/form-data"))
                .unwrap_err()
                .contains("boundary")
        );
        let no_file =
            b"--B\r\nContent-Disposition: form-data; name=\"model\"\r\n\r\nw\r\n--B--\r\n";
        assert!(
            form_request(no_file, Some("multipart/form-data; boundary=B"))
                .unwrap_err()
                .contains("`file`")
        );
    }
}
