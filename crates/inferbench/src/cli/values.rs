//! Values that need more than clap's parsing: `--extra-inputs`, `--header`, `--url`, and the
//! command line as recorded (secrets redacted).

use std::ffi::OsString;

use inferbench_core::plan::HeaderValue;

/// The command line as strings, or an error naming the first argument that is not UTF-8:
/// its position (the program is 0) and the flag before it, if any.
pub fn utf8_args(args: impl IntoIterator<Item = OsString>) -> Result<Vec<String>, String> {
    let mut out: Vec<String> = Vec::new();
    for (i, a) in args.into_iter().enumerate() {
        match a.into_string() {
            Ok(s) => out.push(s),
            Err(raw) => {
                let of = match out.last() {
                    Some(prev) if i > 1 && prev.starts_with('-') => {
                        format!(" (the value of {prev})")
                    }
                    _ => String::new(),
                };
                return Err(format!(
                    "argument {i}{of} is not valid UTF-8: {:?}",
                    raw.to_string_lossy()
                ));
            }
        }
    }
    Ok(out)
}

/// Parse `--extra-inputs` values: `key:value` (value read as JSON when it parses, e.g.
/// `true`, `16`, `1.5`, else as a string) or a whole JSON object. Later values win.
pub fn parse_extra_inputs(
    items: &[String],
) -> Result<serde_json::Map<String, serde_json::Value>, String> {
    let mut out = serde_json::Map::new();
    for item in items {
        let t = item.trim();
        if t.starts_with('{') {
            let v: serde_json::Value = serde_json::from_str(t)
                .map_err(|e| format!("--extra-inputs {item:?}: not a JSON object: {e}"))?;
            let obj = v
                .as_object()
                .ok_or_else(|| format!("--extra-inputs {item:?}: not a JSON object"))?;
            for (k, v) in obj {
                out.insert(k.clone(), v.clone());
            }
            continue;
        }
        let (k, v) = t.split_once(':').ok_or_else(|| {
            format!("--extra-inputs {item:?}: expected key:value or a JSON object")
        })?;
        let k = k.trim();
        if k.is_empty() {
            return Err(format!("--extra-inputs {item:?}: empty key"));
        }
        let v = v.trim();
        let value = serde_json::from_str::<serde_json::Value>(v)
            .unwrap_or_else(|_| serde_json::Value::String(v.to_string()));
        out.insert(k.to_string(), value);
    }
    Ok(out)
}

/// Parse `--header` values: `Name:Value` or a JSON object of names to string values.
pub fn parse_headers(items: &[String]) -> Result<Vec<(String, HeaderValue)>, String> {
    let mut out: Vec<(String, HeaderValue)> = Vec::new();
    let mut push = |name: &str, value: &str| -> Result<(), String> {
        let name = name.trim();
        http::header::HeaderName::from_bytes(name.as_bytes())
            .map_err(|_| format!("--header: invalid header name {name:?}"))?;
        http::header::HeaderValue::from_str(value.trim())
            .map_err(|_| format!("--header {name}: invalid header value"))?;
        out.retain(|(n, _)| !n.eq_ignore_ascii_case(name));
        out.push((
            name.to_string(),
            HeaderValue::for_header(name, value.trim()),
        ));
        Ok(())
    };
    for item in items {
        let t = item.trim();
        if t.starts_with('{') {
            let v: serde_json::Value =
                serde_json::from_str(t).map_err(|e| format!("--header: not a JSON object: {e}"))?;
            for (k, v) in v
                .as_object()
                .ok_or_else(|| "--header: not a JSON object".to_string())?
            {
                let s = match v {
                    serde_json::Value::String(s) => s.clone(),
                    other => other.to_string(),
                };
                push(k, &s)?;
            }
            continue;
        }
        let (k, v) = t
            .split_once(':')
            .ok_or_else(|| "--header: expected Name:Value or a JSON object".to_string())?;
        push(k, v)?;
    }
    Ok(out)
}

/// AIPerf prepends `http://` when the URL has no scheme.
pub fn normalize_url(u: &str) -> Result<String, String> {
    let u = u.trim().trim_end_matches('/');
    let full = if u.contains("://") {
        u.to_string()
    } else {
        format!("http://{u}")
    };
    if !full.starts_with("http://") && !full.starts_with("https://") {
        return Err(format!(
            "--url {u}: only http:// and https:// URLs are supported"
        ));
    }
    let uri: http::Uri = full
        .parse()
        .map_err(|e| format!("--url {u}: not a valid URL: {e}"))?;
    if uri.host().is_none() {
        return Err(format!("--url {u}: no host"));
    }
    Ok(full)
}

/// `user:password@` in a URL: split off, so that the URL kept in the plan, the manifest and
/// the summary holds no credentials (and the Host header gets none); the credentials go out
/// as `Authorization: Basic …`, a secret like `--api-key`.
pub fn split_url_credentials(url: &str) -> (String, Option<String>) {
    let Some((scheme, rest)) = url.split_once("://") else {
        return (url.to_string(), None);
    };
    let authority_end = rest.find(['/', '?', '#']).unwrap_or(rest.len());
    let Some(at) = rest[..authority_end].rfind('@') else {
        return (url.to_string(), None);
    };
    let userinfo = percent_decode(&rest[..at]);
    let auth = format!("Basic {}", base64(userinfo.as_bytes()));
    (format!("{scheme}://{}", &rest[at + 1..]), Some(auth))
}

/// `%XX` escapes of a URL's userinfo, decoded (a `:` or `@` in a password is written so).
fn percent_decode(s: &str) -> String {
    let b = s.as_bytes();
    let mut out = Vec::with_capacity(b.len());
    let mut i = 0;
    while i < b.len() {
        let hex = |c: u8| (c as char).to_digit(16);
        let digit = |k: usize| b.get(k).and_then(|&c| hex(c));
        if b[i] == b'%'
            && let (Some(h), Some(l)) = (digit(i + 1), digit(i + 2))
        {
            out.push((h * 16 + l) as u8);
            i += 3;
        } else {
            out.push(b[i]);
            i += 1;
        }
    }
    String::from_utf8_lossy(&out).into_owned()
}

/// Standard base64 with padding (RFC 4648), for the Basic credentials.
fn base64(bytes: &[u8]) -> String {
    const A: &[u8; 64] = b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
    let mut out = String::with_capacity(bytes.len().div_ceil(3) * 4);
    for c in bytes.chunks(3) {
        let n = (u32::from(c[0]) << 16)
            | (u32::from(*c.get(1).unwrap_or(&0)) << 8)
            | u32::from(*c.get(2).unwrap_or(&0));
        for (k, shift) in [18, 12, 6, 0].into_iter().enumerate() {
            if k <= c.len() {
                out.push(A[(n >> shift) as usize & 63] as char);
            } else {
                out.push('=');
            }
        }
    }
    out
}

/// An argument with a URL's `user:password@` replaced (the rest kept as typed).
fn redact_url_credentials(a: &str) -> String {
    match a.find("://") {
        Some(i) => {
            let rest = &a[i + 3..];
            let end = rest.find(['/', '?', '#']).unwrap_or(rest.len());
            match rest[..end].rfind('@') {
                Some(at) => format!(
                    "{}://{}@{}",
                    &a[..i],
                    inferbench_core::plan::REDACTED,
                    &rest[at + 1..]
                ),
                None => a.to_string(),
            }
        }
        None => a.to_string(),
    }
}

/// The command line as typed, with the values of secret flags replaced.
pub fn redacted_command_line(args: &[String]) -> String {
    let mut out = Vec::with_capacity(args.len());
    let mut redact_next = false;
    let mut header_next = false;
    for a in args {
        if redact_next {
            out.push(inferbench_core::plan::REDACTED.to_string());
            redact_next = false;
            continue;
        }
        if header_next && !a.starts_with('-') {
            out.push(redact_header_arg(a));
            continue;
        }
        header_next = false;
        if a == "--api-key" {
            out.push(a.clone());
            redact_next = true;
        } else if let Some(_v) = a.strip_prefix("--api-key=") {
            out.push(format!("--api-key={}", inferbench_core::plan::REDACTED));
        } else if a == "-H" || a == "--header" {
            out.push(a.clone());
            header_next = true;
        } else {
            out.push(shell_quote(&redact_url_credentials(a)));
        }
    }
    out.join(" ")
}

fn redact_header_arg(a: &str) -> String {
    if a.trim_start().starts_with('{') {
        return shell_quote(&format!("{{{}}}", inferbench_core::plan::REDACTED));
    }
    match a.split_once(':') {
        Some((k, _)) if inferbench_core::plan::is_sensitive_header(k.trim()) => {
            shell_quote(&format!("{}:{}", k, inferbench_core::plan::REDACTED))
        }
        _ => shell_quote(a),
    }
}

fn shell_quote(s: &str) -> String {
    if !s.is_empty()
        && s.chars()
            .all(|c| c.is_ascii_alphanumeric() || "-_./:=,@+".contains(c))
    {
        s.to_string()
    } else {
        format!("'{}'", s.replace('\'', "'\\''"))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[cfg(unix)]
    #[test]
    fn non_utf8_arguments_are_named() {
        use std::os::unix::ffi::OsStringExt;
        let bad = OsString::from_vec(vec![b'a', 0xff]);
        let args = ["inferbench", "profile", "--model"].map(OsString::from);
        let e = utf8_args(args.into_iter().chain([bad.clone()])).unwrap_err();
        assert_eq!(
            e,
            "argument 3 (the value of --model) is not valid UTF-8: \"a\u{fffd}\""
        );
        let e = utf8_args([OsString::from("inferbench"), bad]).unwrap_err();
        assert_eq!(e, "argument 1 is not valid UTF-8: \"a\u{fffd}\"");
        let ok = utf8_args(["inferbench", "profile"].map(OsString::from)).unwrap();
        assert_eq!(ok, ["inferbench", "profile"]);
    }
}
