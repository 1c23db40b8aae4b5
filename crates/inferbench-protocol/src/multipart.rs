//! `multipart/form-data` bodies (RFC 7578) from the frozen JSON body of a form endpoint
//! (`audio_transcription`), as AIPerf's transport builds them: a field whose value is
//! `{"b64_data", "filename", "content_type"}` is a file (the data base64-decoded), `null`
//! fields are left out, booleans are `true`/`false`, strings as they are, other values as
//! compact JSON. Fields keep the body's order.

use base64::Engine as _;
use serde_json::{Map, Value};

/// The boundary between parts; `Content-Type: multipart/form-data; boundary=` names it. A
/// body containing it is refused (random bytes hold this 36-byte string with probability
/// about 2^-288 per position).
pub const BOUNDARY: &str = "inferbench-form-8b1d3c5e7f9a2b4c6d8e";

/// The `Content-Type` of a body made by [`form_body`].
pub fn content_type() -> String {
    format!("multipart/form-data; boundary={BOUNDARY}")
}

/// The form encoding of a JSON object body; the error names the field.
pub fn form_body(body: &Map<String, Value>) -> Result<Vec<u8>, String> {
    let mut out = Vec::new();
    for (name, value) in body {
        let (head, data): (String, std::borrow::Cow<'_, [u8]>) = match value {
            Value::Null => continue,
            Value::Object(f) if f.get("b64_data").is_some_and(Value::is_string) => {
                let b64 = f
                    .get("b64_data")
                    .and_then(Value::as_str)
                    .unwrap_or_default();
                let bytes = base64::engine::general_purpose::STANDARD
                    .decode(b64)
                    .map_err(|e| format!("field {name:?}: 'b64_data' is not valid base64 ({e})"))?;
                let filename = f
                    .get("filename")
                    .and_then(Value::as_str)
                    .filter(|s| !s.is_empty())
                    .unwrap_or(name);
                let ctype = f
                    .get("content_type")
                    .and_then(Value::as_str)
                    .filter(|s| !s.is_empty())
                    .unwrap_or("application/octet-stream");
                (
                    format!(
                        "Content-Disposition: form-data; name=\"{}\"; filename=\"{}\"\r\nContent-Type: {ctype}\r\n",
                        quote(name),
                        quote(filename)
                    ),
                    bytes.into(),
                )
            }
            other => {
                let text = match other {
                    Value::String(s) => s.clone(),
                    Value::Bool(b) => b.to_string(),
                    v => v.to_string(),
                };
                (
                    format!(
                        "Content-Disposition: form-data; name=\"{}\"\r\n",
                        quote(name)
                    ),
                    text.into_bytes().into(),
                )
            }
        };
        if memchr::memmem::find(&data, BOUNDARY.as_bytes()).is_some() {
            return Err(format!(
                "field {name:?}: its data contains the multipart boundary"
            ));
        }
        out.extend_from_slice(b"--");
        out.extend_from_slice(BOUNDARY.as_bytes());
        out.extend_from_slice(b"\r\n");
        out.extend_from_slice(head.as_bytes());
        out.extend_from_slice(b"\r\n");
        out.extend_from_slice(&data);
        out.extend_from_slice(b"\r\n");
    }
    out.extend_from_slice(b"--");
    out.extend_from_slice(BOUNDARY.as_bytes());
    out.extend_from_slice(b"--\r\n");
    Ok(out)
}

/// A name inside a quoted header parameter: `"` and line breaks escaped as browsers do.
fn quote(s: &str) -> String {
    s.replace('"', "%22")
        .replace('\r', "%0D")
        .replace('\n', "%0A")
}

/// One part of a form body: its name, filename, content type and data.
#[derive(Debug, PartialEq)]
pub struct Part<'a> {
    pub name: &'a str,
    pub filename: Option<&'a str>,
    pub content_type: Option<&'a str>,
    pub data: &'a [u8],
}

/// The parts of a `multipart/form-data` body with `boundary` (the simulated server reads
/// uploads with it). None when the body is not well formed.
pub fn parse_form<'a>(body: &'a [u8], boundary: &str) -> Option<Vec<Part<'a>>> {
    let delim = format!("--{boundary}");
    let mut rest = body.strip_prefix(delim.as_bytes())?;
    let mut parts = Vec::new();
    loop {
        if rest.starts_with(b"--") {
            return Some(parts);
        }
        rest = rest.strip_prefix(b"\r\n")?;
        let head_end = memchr::memmem::find(rest, b"\r\n\r\n")?;
        let head = std::str::from_utf8(&rest[..head_end]).ok()?;
        let data_start = head_end + 4;
        let next = format!("\r\n{delim}");
        let data_len = memchr::memmem::find(&rest[data_start..], next.as_bytes())?;
        let data = &rest[data_start..data_start + data_len];
        let mut name = None;
        let mut filename = None;
        let mut content_type = None;
        for line in head.split("\r\n") {
            let (k, v) = line.split_once(':')?;
            if k.eq_ignore_ascii_case("content-disposition") {
                for param in v.split(';').map(str::trim) {
                    if let Some(n) = param.strip_prefix("name=") {
                        name = Some(n.trim_matches('"'));
                    } else if let Some(f) = param.strip_prefix("filename=") {
                        filename = Some(f.trim_matches('"'));
                    }
                }
            } else if k.eq_ignore_ascii_case("content-type") {
                content_type = Some(v.trim());
            }
        }
        parts.push(Part {
            name: name?,
            filename,
            content_type,
            data,
        });
        rest = &rest[data_start + data_len + next.len()..];
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn form_by_hand() {
        let body = json!({
            "file": {"b64_data": "UklG", "filename": "audio.wav", "content_type": "audio/wav"},
            "model": "whisper",
            "skip": null,
            "stream": false,
            "temperature": 0.5
        });
        let got = form_body(body.as_object().unwrap()).unwrap();
        let b = BOUNDARY;
        let want = format!(
            "--{b}\r\nContent-Disposition: form-data; name=\"file\"; filename=\"audio.wav\"\r\nContent-Type: audio/wav\r\n\r\nRIF\r\n\
             --{b}\r\nContent-Disposition: form-data; name=\"model\"\r\n\r\nwhisper\r\n\
             --{b}\r\nContent-Disposition: form-data; name=\"stream\"\r\n\r\nfalse\r\n\
             --{b}\r\nContent-Disposition: form-data; name=\"temperature\"\r\n\r\n0.5\r\n\
             --{b}--\r\n"
        );
        assert_eq!(String::from_utf8(got.clone()).unwrap(), want);
        let parts = parse_form(&got, BOUNDARY).unwrap();
        assert_eq!(parts.len(), 4);
        assert_eq!(
            parts[0],
            Part {
                name: "file",
                filename: Some("audio.wav"),
                content_type: Some("audio/wav"),
                data: b"RIF",
            }
        );
        assert_eq!(parts[1].data, b"whisper");
        assert_eq!(content_type(), format!("multipart/form-data; boundary={b}"));
    }

    #[test]
    fn bad_base64_names_the_field() {
        let body = json!({"file": {"b64_data": "not base64!"}});
        let e = form_body(body.as_object().unwrap()).unwrap_err();
        assert!(
            e.starts_with("field \"file\": 'b64_data' is not valid base64"),
            "{e}"
        );
        assert!(parse_form(b"garbage", BOUNDARY).is_none());
    }
}
