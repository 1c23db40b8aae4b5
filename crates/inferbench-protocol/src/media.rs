//! What media a request body carries, read from its JSON (AIPerf's `extract_payload_inputs`
//! media counts): image, audio and video parts of a `messages`/`input` list, image
//! retrieval's `input` parts, and an uploaded file. Sizes are the decoded bytes of inline
//! (base64) data; a URL counts as a part of 0 bytes.

use inferbench_core::media::MediaSent;
use inferbench_core::plan::EndpointType;
use serde_json::{Map, Value};

/// Decoded bytes of a base64 text (standard alphabet, padded or not), from its length alone.
pub fn b64_decoded_len(b64: &str) -> u64 {
    let s = b64.trim_end_matches('=');
    let n = s.len() as u64;
    n / 4 * 3
        + match n % 4 {
            2 => 1,
            3 => 2,
            _ => 0,
        }
}

/// Bytes inlined by a `data:…;base64,` URL (0 for anything else, e.g. an http URL).
fn data_url_bytes(url: &str) -> u64 {
    match url.split_once(',') {
        Some((head, b64)) if head.starts_with("data:") && head.ends_with(";base64") => {
            b64_decoded_len(b64)
        }
        _ => 0,
    }
}

/// The media of `body` as `endpoint` sends it. Part types counted: images `image_url`
/// (chat: `image_url.url`; image retrieval: `url`), `input_image` (Responses) and `image`
/// (Anthropic: `source.data`); audio `input_audio` (`input_audio.data`); video `video_url`.
/// An audio upload (`file.b64_data`) counts one audio clip. NIM embeddings' images travel
/// inside `input` strings, which AIPerf does not count as images: only their bytes count.
pub fn media_sent(endpoint: EndpointType, body: &Map<String, Value>) -> MediaSent {
    let mut m = MediaSent::default();
    for key in ["messages", "input"] {
        let Some(Value::Array(items)) = body.get(key) else {
            continue;
        };
        for item in items {
            // Image retrieval's `input` is a flat list of parts; chat and Responses items
            // hold theirs in `content`.
            part(item, &mut m);
            if let Some(Value::Array(parts)) = item.get("content") {
                for p in parts {
                    part(p, &mut m);
                }
            }
            if endpoint == EndpointType::NimEmbeddings
                && let Some(s) = item.as_str()
                && let Some(at) = s.find("data:")
            {
                m.bytes += data_url_bytes(&s[at..]);
            }
        }
    }
    if let Some(b64) = body
        .get("file")
        .and_then(|f| f.get("b64_data"))
        .and_then(Value::as_str)
    {
        m.audios += 1;
        m.bytes += b64_decoded_len(b64);
    }
    m
}

fn s(v: Option<&Value>) -> &str {
    v.and_then(Value::as_str).unwrap_or_default()
}

fn part(p: &Value, m: &mut MediaSent) {
    match p.get("type").and_then(Value::as_str) {
        Some("image_url") => {
            m.images += 1;
            let url = match p.get("image_url") {
                Some(Value::String(u)) => u.as_str(),
                Some(o) => s(o.get("url")),
                None => s(p.get("url")),
            };
            m.bytes += data_url_bytes(url);
        }
        Some("input_image") => {
            m.images += 1;
            m.bytes += data_url_bytes(s(p.get("image_url")));
        }
        Some("image") => {
            m.images += 1;
            if let Some(src) = p.get("source") {
                m.bytes += b64_decoded_len(s(src.get("data")));
            }
        }
        Some("input_audio") => {
            m.audios += 1;
            m.bytes += b64_decoded_len(s(p.get("input_audio").and_then(|a| a.get("data"))));
        }
        Some("video_url") => {
            m.videos += 1;
            m.bytes += data_url_bytes(s(p.get("video_url").and_then(|v| v.get("url"))));
        }
        _ => {}
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn base64_lengths() {
        assert_eq!(b64_decoded_len(""), 0);
        assert_eq!(b64_decoded_len("QQ=="), 1);
        assert_eq!(b64_decoded_len("QUI="), 2);
        assert_eq!(b64_decoded_len("QUJD"), 3);
        assert_eq!(b64_decoded_len("QUJDRA"), 4);
    }

    #[test]
    fn parts_of_every_shape_are_counted() {
        let chat = json!({"messages":[
            {"role":"system","content":"s"},
            {"role":"user","content":[
                {"type":"text","text":"t"},
                {"type":"image_url","image_url":{"url":"data:image/png;base64,QUJD"}},
                {"type":"image_url","image_url":{"url":"https://h/x.png"},"uuid":"u"},
                {"type":"input_audio","input_audio":{"data":"QUI=","format":"wav"}},
                {"type":"video_url","video_url":{"url":"data:video/mp4;base64,QQ=="}}
            ]}
        ]});
        let m = media_sent(EndpointType::Chat, chat.as_object().unwrap());
        assert_eq!(
            (m.images, m.audios, m.videos, m.bytes),
            (2, 1, 1, 3 + 2 + 1)
        );
        let retrieval =
            json!({"input":[{"type":"image_url","url":"data:image/jpeg;base64,QUJDRA"}]});
        let m = media_sent(EndpointType::ImageRetrieval, retrieval.as_object().unwrap());
        assert_eq!((m.images, m.bytes), (1, 4));
        let upload = json!({"file":{"b64_data":"QUJD","filename":"audio.wav"},"model":"m"});
        let m = media_sent(
            EndpointType::AudioTranscription,
            upload.as_object().unwrap(),
        );
        assert_eq!((m.audios, m.bytes), (1, 3));
        let nim = json!({"input":["a cat data:image/png;base64,QUJD"],"model":"m"});
        let m = media_sent(EndpointType::NimEmbeddings, nim.as_object().unwrap());
        assert_eq!((m.images, m.bytes), (0, 3));
        let responses = json!({"input":[{"type":"message","role":"user","content":[
            {"type":"input_image","image_url":"data:image/png;base64,QQ=="}]}]});
        assert_eq!(
            media_sent(EndpointType::Responses, responses.as_object().unwrap()).images,
            1
        );
        let text = json!({"messages":[{"role":"user","content":"hi"}]});
        assert!(media_sent(EndpointType::Chat, text.as_object().unwrap()).is_empty());
    }
}
