//! A dataset row's media fields (`image`/`images`/`image_uuids`, `audio`/`audios`,
//! `video`/`videos`), read and resolved as AIPerf's loaders do (`crate::media`): a singular
//! field holds one string; a plural one a list of strings or of `{name, contents}` objects.
//! Errors name the file, the line and the field (`images[1]`).

use serde_json::Value;

use super::error::DatasetError;
use super::row::{Row, kind};
use crate::media::{MediaKind, MediaRef, MediaResolver};

/// The media fields, allowed wherever texts are.
pub(crate) const MEDIA_FIELDS: &[&str] = &[
    "image",
    "images",
    "image_uuids",
    "audio",
    "audios",
    "video",
    "videos",
];

/// A row's images, audio clips and videos, in field order.
#[derive(Default)]
pub(crate) struct RowMedia {
    pub images: Vec<MediaRef>,
    pub audios: Vec<MediaRef>,
    pub videos: Vec<MediaRef>,
}

impl RowMedia {
    pub fn is_empty(&self) -> bool {
        self.images.is_empty() && self.audios.is_empty() && self.videos.is_empty()
    }
}

pub(crate) fn read_media(r: &Row<'_>, res: &mut MediaResolver) -> Result<RowMedia, DatasetError> {
    let mut out = RowMedia {
        images: read_kind(r, res, MediaKind::Image, "image", "images")?,
        audios: read_kind(r, res, MediaKind::Audio, "audio", "audios")?,
        videos: read_kind(r, res, MediaKind::Video, "video", "videos")?,
    };
    let Some(v) = r.get("image_uuids") else {
        return Ok(out);
    };
    let Value::Array(items) = v else {
        return Err(r.err(
            "image_uuids",
            format!("expected a list of strings, got {}", kind(v)),
        ));
    };
    if r.has("image") {
        return Err(r.err(
            "image_uuids",
            "image_uuids cannot be used with the singular image field",
        ));
    }
    if matches!(r.get("images"), Some(Value::Array(a)) if a.iter().any(Value::is_object)) {
        return Err(r.err(
            "image_uuids",
            "image_uuids cannot be set when images are {name, contents} objects",
        ));
    }
    let mut uuids = Vec::with_capacity(items.len());
    for (i, u) in items.iter().enumerate() {
        match u {
            Value::String(s) if !s.is_empty() => uuids.push(s.clone()),
            _ => {
                return Err(r.err(&format!("image_uuids[{i}]"), "expected a non-empty string"));
            }
        }
    }
    // UUIDs alone refer to images the server already holds: the parts go with empty URLs.
    if !r.has("images") {
        out.images = uuids.iter().map(|_| MediaRef::new("")).collect();
    }
    if uuids.len() != out.images.len() {
        return Err(r.err(
            "image_uuids",
            format!(
                "image_uuids has {} entries but images has {}",
                uuids.len(),
                out.images.len()
            ),
        ));
    }
    for (m, u) in out.images.iter_mut().zip(uuids) {
        m.uuid = Some(u);
    }
    Ok(out)
}

fn read_kind(
    r: &Row<'_>,
    res: &mut MediaResolver,
    media: MediaKind,
    one: &str,
    many: &str,
) -> Result<Vec<MediaRef>, DatasetError> {
    let single = r.opt_str(one)?;
    let list = r.get(many);
    if single.is_some() && list.is_some() {
        return Err(r.err(many, format!("{one} and {many} cannot be set together")));
    }
    let mut resolve = |field: String, v: &str| res.resolve(media, v).map_err(|e| r.err(&field, e));
    if let Some(v) = single {
        return Ok(vec![resolve(one.to_string(), v)?]);
    }
    let Some(list) = list else {
        return Ok(Vec::new());
    };
    let Value::Array(items) = list else {
        return Err(r.err(many, format!("expected a list, got {}", kind(list))));
    };
    let mut out = Vec::with_capacity(items.len());
    for (i, item) in items.iter().enumerate() {
        match item {
            // An empty string stays an empty slot (AIPerf keeps it; no part is sent for it).
            Value::String(s) if s.is_empty() => out.push(MediaRef::new("")),
            Value::String(s) => out.push(resolve(format!("{many}[{i}]"), s)?),
            Value::Object(o) => {
                let Some(Value::Array(contents)) = o.get("contents") else {
                    return Err(r.err(
                        &format!("{many}[{i}].contents"),
                        "expected a list of strings",
                    ));
                };
                for (j, c) in contents.iter().enumerate() {
                    let field = format!("{many}[{i}].contents[{j}]");
                    match c {
                        Value::String(s) if s.is_empty() => out.push(MediaRef::new("")),
                        Value::String(s) => out.push(resolve(field, s)?),
                        other => {
                            return Err(
                                r.err(&field, format!("expected a string, got {}", kind(other)))
                            );
                        }
                    }
                }
            }
            other => {
                return Err(r.err(
                    &format!("{many}[{i}]"),
                    format!(
                        "expected a string or {{name, contents}}, got {}",
                        kind(other)
                    ),
                ));
            }
        }
    }
    Ok(out)
}
