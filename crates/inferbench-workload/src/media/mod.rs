//! Images, audio and video sent with a turn (docs/datasets.md, "Images, audio and video"):
//! a dataset's media value resolved as AIPerf 0.13 does (a URL passes through, an encoded
//! value stays as it is, a local file is read and base64-encoded), and the synthetic media
//! of `--image-*` and `--audio-*` (`synth`). The encoded value is shared (`Arc<str>`): a file
//! named by many rows is read and encoded once.

pub mod png;
pub mod synth;
pub mod wav;

use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::sync::Arc;

use base64::Engine as _;

/// Which kind of media a value is.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum MediaKind {
    Image,
    Audio,
    Video,
}

impl MediaKind {
    pub fn noun(self) -> &'static str {
        match self {
            MediaKind::Image => "image",
            MediaKind::Audio => "audio",
            MediaKind::Video => "video",
        }
    }
}

/// One image, audio clip or video as a turn holds it (AIPerf's `Turn` contents): an image or
/// video is a URL or a `data:` URL; an audio clip is `"<format>,<base64>"` (`wav` or `mp3`).
#[derive(Clone, Debug, PartialEq)]
pub struct MediaRef {
    pub content: Arc<str>,
    /// `image_uuids`: the cache id sent with the image part (vLLM's multimodal cache).
    pub uuid: Option<String>,
    /// Seconds of an audio clip, when known (synthetic clips, WAV files).
    pub seconds: Option<f64>,
}

impl MediaRef {
    pub fn new(content: impl Into<Arc<str>>) -> Self {
        MediaRef {
            content: content.into(),
            uuid: None,
            seconds: None,
        }
    }
}

/// `"data:<mime>;base64,<b64 of bytes>"`.
pub fn data_url(mime: &str, bytes: &[u8]) -> String {
    let b64 = base64::engine::general_purpose::STANDARD.encode(bytes);
    let mut s = String::with_capacity(b64.len() + mime.len() + 13);
    s.push_str("data:");
    s.push_str(mime);
    s.push_str(";base64,");
    s.push_str(&b64);
    s
}

/// `"<format>,<b64 of bytes>"`: AIPerf's audio content.
pub fn audio_content(format: &str, bytes: &[u8]) -> String {
    let b64 = base64::engine::general_purpose::STANDARD.encode(bytes);
    format!("{format},{b64}")
}

/// Resolves dataset media values, reading each local file once.
#[derive(Default)]
pub struct MediaResolver {
    cache: HashMap<(MediaKind, PathBuf), MediaRef>,
}

impl MediaResolver {
    /// AIPerf's order: an already encoded value (a `data:` URL for images and video;
    /// `wav,…`/`mp3,…` for audio) is kept; a URL (`scheme://host…`) passes through, except
    /// for audio, which the chat API takes only inline; anything else is a local file path,
    /// read and encoded. The error is one line naming the value or the file.
    pub fn resolve(&mut self, kind: MediaKind, value: &str) -> Result<MediaRef, String> {
        if is_encoded(kind, value) {
            return Ok(MediaRef::new(value));
        }
        if value.contains("://") {
            let (scheme, rest) = value.split_once("://").unwrap_or_default();
            let host = rest.split(['/', '?', '#']).next().unwrap_or_default();
            let scheme_ok = scheme
                .chars()
                .next()
                .is_some_and(|c| c.is_ascii_alphabetic())
                && scheme
                    .chars()
                    .all(|c| c.is_ascii_alphanumeric() || "+-.".contains(c));
            if !scheme_ok || host.is_empty() {
                return Err(format!("{value:?}: a URL needs both a scheme and a host"));
            }
            if kind == MediaKind::Audio {
                return Err(format!(
                    "{value:?}: audio is sent inline (input_audio carries the data); give a local .wav or .mp3 file or \"wav,<base64>\""
                ));
            }
            return Ok(MediaRef::new(value));
        }
        let path = PathBuf::from(value);
        if let Some(m) = self.cache.get(&(kind, path.clone())) {
            return Ok(m.clone());
        }
        let m = encode_file(kind, &path)?;
        self.cache.insert((kind, path), m.clone());
        Ok(m)
    }
}

fn is_encoded(kind: MediaKind, value: &str) -> bool {
    let lower_prefix = |p: &str| {
        value
            .get(..p.len())
            .is_some_and(|v| v.eq_ignore_ascii_case(p))
    };
    match kind {
        MediaKind::Image | MediaKind::Video => lower_prefix("data:"),
        // AIPerf's loader knows `wav,…` and `mp3,…`; its chat renderer also takes a
        // `data:audio/…` URL (the loader would read that as a path and fail: accepted here).
        MediaKind::Audio => {
            lower_prefix("data:audio/")
                || value.split_once(',').is_some_and(|(f, _)| {
                    !f.contains(':')
                        && (f.eq_ignore_ascii_case("wav") || f.eq_ignore_ascii_case("mp3"))
                })
        }
    }
}

fn encode_file(kind: MediaKind, path: &Path) -> Result<MediaRef, String> {
    let shown = path.display();
    let ext = path
        .extension()
        .map(|e| e.to_string_lossy().to_ascii_lowercase())
        .unwrap_or_default();
    // Checked before reading, so that a bad name is refused without touching the file.
    let audio_or_video_format = match (kind, ext.as_str()) {
        (MediaKind::Image, _) => "",
        (MediaKind::Audio, "wav" | "mp3") | (MediaKind::Video, "mp4" | "webm") => ext.as_str(),
        (MediaKind::Audio, _) => {
            return Err(format!(
                "{shown}: '.{ext}' is not a supported audio format (wav, mp3)"
            ));
        }
        (MediaKind::Video, _) => {
            return Err(format!(
                "{shown}: '.{ext}' is not a supported video format (mp4, webm)"
            ));
        }
    };
    let bytes = std::fs::read(path).map_err(|e| {
        if e.kind() == std::io::ErrorKind::NotFound {
            format!("{shown}: no such {} file", kind.noun())
        } else {
            format!("{shown}: cannot read: {e}")
        }
    })?;
    Ok(match kind {
        MediaKind::Image => {
            let mime = if bytes.starts_with(b"\x89PNG\r\n\x1a\n") {
                "image/png"
            } else if bytes.starts_with(&[0xFF, 0xD8, 0xFF]) {
                "image/jpeg"
            } else {
                return Err(format!(
                    "{shown}: not a PNG or JPEG image (the formats AIPerf sends)"
                ));
            };
            MediaRef::new(data_url(mime, &bytes))
        }
        MediaKind::Audio => MediaRef {
            seconds: if ext == "wav" {
                wav::duration_seconds(&bytes)
            } else {
                None
            },
            ..MediaRef::new(audio_content(audio_or_video_format, &bytes))
        },
        MediaKind::Video => {
            MediaRef::new(data_url(&format!("video/{audio_or_video_format}"), &bytes))
        }
    })
}

/// The (format, base64) of an audio content: `"wav,<b64>"`, or a `data:audio/<fmt>;…,<b64>`
/// URL (format `wav` when the URL names none). None for anything else.
pub fn split_audio(content: &str) -> Option<(&str, &str)> {
    let (head, b64) = content.split_once(',')?;
    match head.strip_prefix("data:audio/") {
        Some(rest) => {
            let fmt = rest.split(';').next().unwrap_or_default();
            Some((if fmt.is_empty() { "wav" } else { fmt }, b64))
        }
        None => Some((head, b64)),
    }
}

#[cfg(test)]
mod tests;
