//! Values that need more than clap's parsing: `--extra-inputs`, `--header`, `--url`, and the
//! command line as recorded (secrets redacted: docs/secrets.md).

use std::ffi::OsString;

use inferbench_core::plan::{HeaderValue, REDACTED, Secret};

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

/// A flag's fixed names as AIPerf matches its enum values: in any case (the flag also sets
/// `ignore_case`), and given to the plan in lowercase.
pub fn named(
    names: impl IntoIterator<Item = &'static str>,
) -> impl clap::builder::TypedValueParser<Value = String> {
    use clap::builder::TypedValueParser as _;
    clap::builder::PossibleValuesParser::new(names).map(|s: String| s.to_ascii_lowercase())
}

/// `--extra-inputs` values, as AIPerf 0.13 parses them: a value starting with `{` is a JSON
/// object (its values as written); any other is a comma list of `key:value` items, each value
/// typed by AIPerf's `coerce_value` ([`coerce`]). Ours on top: a value starting with `[` or
/// `{` after the colon is JSON when it parses (`stop:["a","b"]`), else its text, and commas
/// inside its brackets do not split. Later keys win.
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
        for part in split_top_level_commas(t) {
            let (k, v) = part.split_once(':').ok_or_else(|| {
                format!(
                    "--extra-inputs {item:?}: {part:?} is not key:value (or give a JSON object)"
                )
            })?;
            let k = k.trim();
            if k.is_empty() {
                return Err(format!("--extra-inputs {item:?}: empty key"));
            }
            let v = v.trim();
            // JSON when it is JSON; else the text as written (an inline template such as
            // `payload_template:{"prompt": {{ text }}}` is no JSON).
            let value = if v.starts_with(['[', '{']) {
                serde_json::from_str::<serde_json::Value>(v)
                    .unwrap_or_else(|_| serde_json::Value::from(v))
            } else {
                coerce(v)
            };
            out.insert(k.to_string(), value);
        }
    }
    Ok(out)
}

/// AIPerf's `coerce_value`: `true`/`false` and `none`/`null` in any case; a run of ASCII
/// digits without a leading zero (or `0`), optionally after `-`, an integer; digits with one
/// `.` (`.5` and `5.` too), optionally after `-`, a float; anything else the string itself
/// (`007`, `1e5`, `0x10` stay strings).
pub(crate) fn coerce(v: &str) -> serde_json::Value {
    use serde_json::Value;
    let digits = |s: &str| !s.is_empty() && s.bytes().all(|b| b.is_ascii_digit());
    match v.to_ascii_lowercase().as_str() {
        "true" => return Value::Bool(true),
        "false" => return Value::Bool(false),
        "none" | "null" => return Value::Null,
        _ => {}
    }
    let unsigned = v.strip_prefix('-').unwrap_or(v);
    if digits(unsigned) && (!unsigned.starts_with('0') || unsigned == "0") {
        // Python's int has no bound; past i64 the JSON number is kept as an f64.
        return match v.parse::<i64>() {
            Ok(i) => Value::from(i),
            Err(_) => v
                .parse::<f64>()
                .map_or_else(|_| Value::from(v), Value::from),
        };
    }
    if unsigned.matches('.').count() == 1
        && digits(&unsigned.replace('.', ""))
        && let Ok(f) = v.parse::<f64>()
    {
        return Value::from(f);
    }
    Value::from(v)
}

/// `a:1,b:[2,3]` → `a:1`, `b:[2,3]`: commas split items except inside brackets, braces or a
/// JSON string within them.
fn split_top_level_commas(t: &str) -> Vec<&str> {
    let (mut parts, mut depth, mut in_str, mut esc, mut from) = (Vec::new(), 0i32, false, false, 0);
    for (i, c) in t.char_indices() {
        if in_str {
            match (esc, c) {
                (true, _) => esc = false,
                (false, '\\') => esc = true,
                (false, '"') => in_str = false,
                _ => {}
            }
            continue;
        }
        match c {
            '"' if depth > 0 => in_str = true,
            '[' | '{' => depth += 1,
            ']' | '}' => depth -= 1,
            ',' if depth <= 0 => {
                parts.push(&t[from..i]);
                from = i + 1;
            }
            _ => {}
        }
    }
    parts.push(&t[from..]);
    parts
}

/// Parse `--header` values: `Name:Value` (a comma list of them, as AIPerf splits them) or a
/// JSON object of names to string values.
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
        // A comma list of Name:Value items, as AIPerf splits `--header` values (so a comma
        // cannot be inside a value given this way; the JSON form keeps it).
        for part in t.split(',') {
            let (k, v) = part.split_once(':').ok_or_else(|| {
                format!("--header: {part:?} is not Name:Value (or give a JSON object)")
            })?;
            push(k, v)?;
        }
    }
    Ok(out)
}

/// AIPerf prepends `http://` when the URL has no scheme. Trailing slashes go, but only
/// after the scheme's `://` (trimmed first, `http://` became `http:`, then `http://http:`).
/// Errors name the URL as given (its credentials already split off by the caller).
pub fn normalize_url(u: &str) -> Result<String, String> {
    let u = u.trim();
    let (scheme, rest) = u.split_once("://").unwrap_or(("http", u));
    let rest = rest.trim_end_matches('/');
    // Schemes are case-insensitive (AIPerf takes `HTTP://` too); the rest of the program
    // compares the lowercase form.
    let full = format!("{}://{rest}", scheme.to_ascii_lowercase());
    if !full.starts_with("http://") && !full.starts_with("https://") {
        return Err(format!(
            "--url {u}: only http:// and https:// URLs are supported"
        ));
    }
    // No authority at all (`http://`, `http:///v1`): `Uri` would only say "empty string".
    if rest.is_empty() || rest.starts_with(['/', '?', '#']) {
        return Err(format!("--url {u}: no host"));
    }
    let uri: http::Uri = full
        .parse()
        .map_err(|e| format!("--url {u}: not a valid URL: {e}"))?;
    if uri.host().is_none_or(str::is_empty) {
        return Err(format!("--url {u}: no host"));
    }
    port_is_a_port(&uri).map_err(|e| format!("--url {u}: {e}"))?;
    Ok(full)
}

/// A port written in `uri` is one (1 to 65535; none or an empty one is the scheme's default).
/// `Uri` keeps a port it cannot read as a u16 (`:99999`), and its u16 is then None: the
/// connection went to the default port, 80 or 443, without a word.
pub fn port_is_a_port(uri: &http::Uri) -> Result<(), String> {
    match uri.authority().and_then(|a| authority_port(a.as_str())) {
        Some(p) if !p.is_empty() && !matches!(p.parse::<u16>(), Ok(1..)) => {
            Err(format!("port {p} is not a port number (1 to 65535)"))
        }
        _ => Ok(()),
    }
}

/// The port text of an authority (`user@host:port`, `[::1]:port`) as written, if any.
fn authority_port(a: &str) -> Option<&str> {
    let host_port = a.rsplit_once('@').map_or(a, |(_, h)| h);
    let after_host = match host_port.strip_prefix('[') {
        Some(v6) => v6.split_once(']').map_or("", |(_, rest)| rest),
        None => host_port,
    };
    after_host.rsplit_once(':').map(|(_, p)| p)
}

#[cfg(test)]
mod url_tests {
    use super::normalize_url;

    #[test]
    fn a_url_is_normalized_as_aiperf_does() {
        let ok = |u: &str| normalize_url(u).unwrap();
        assert_eq!(ok("localhost:8000"), "http://localhost:8000");
        assert_eq!(ok(" http://h:1/v1// "), "http://h:1/v1");
        assert_eq!(ok("https://h/"), "https://h");
        assert_eq!(ok("HTTPS://h:1/v1"), "https://h:1/v1");
    }

    #[test]
    fn a_scheme_without_a_host_is_refused_naming_it() {
        for u in [
            "http://",
            "https://",
            "http:///",
            "http:///v1",
            "http://:80",
        ] {
            assert_eq!(normalize_url(u), Err(format!("--url {u}: no host")));
        }
        for (u, p) in [
            ("localhost:99999", "99999"),
            ("http://h:0/v1", "0"),
            ("https://h:65536", "65536"),
        ] {
            assert_eq!(
                normalize_url(u),
                Err(format!(
                    "--url {u}: port {p} is not a port number (1 to 65535)"
                ))
            );
        }
        assert_eq!(normalize_url("h:65535").unwrap(), "http://h:65535");
        assert_eq!(
            normalize_url("http://[::1]:8000").unwrap(),
            "http://[::1]:8000"
        );
        assert_eq!(normalize_url("http://[::1]").unwrap(), "http://[::1]");
        assert!(normalize_url("http://[::1]:70000").is_err());
        assert!(
            normalize_url("ftp://x")
                .unwrap_err()
                .contains("only http:// and https://")
        );
    }
}

/// `user:password@` in a URL: split off, so that the URL kept in the plan, the manifest and
/// the summary holds no credentials (and the Host header gets none); the credentials go out
/// as `Authorization: Basic …`, a secret like `--api-key`.
pub fn split_url_credentials(url: &str) -> (String, Option<String>) {
    let auth = url_userinfo(url)
        .filter(|u| !u.is_empty())
        .map(|u| format!("Basic {}", base64(percent_decode(u).as_bytes())));
    (without_url_credentials(url), auth)
}

/// Where a URL's authority starts (after its scheme, if any) and where its last `@` is, when
/// it has `user:password@`.
fn userinfo_span(url: &str) -> Option<(usize, usize)> {
    let start = url.find("://").map_or(0, |i| i + 3);
    let rest = &url[start..];
    let end = rest.find(['/', '?', '#']).unwrap_or(rest.len());
    rest[..end].rfind('@').map(|at| (start, start + at))
}

/// The `user:password` of a URL exactly as typed (still percent-encoded), if it has one.
pub fn url_userinfo(url: &str) -> Option<&str> {
    userinfo_span(url).map(|(s, at)| &url[s..at])
}

/// A URL with its `user:password@` removed, with or without a scheme (`bob:pw@h:9` too).
pub fn without_url_credentials(url: &str) -> String {
    match userinfo_span(url) {
        Some((s, at)) => format!("{}{}", &url[..s], &url[at + 1..]),
        None => url.to_string(),
    }
}

/// One `--url` value: normalized ([`normalize_url`]) with its `user:password@` split off, the
/// credentials as the secret value of an `Authorization: Basic …` header. Errors never show
/// the credentials. Called once per URL (a repeated `--url` list calls it for each).
pub fn url_and_credentials(given: &str) -> Result<(String, Option<Secret>), String> {
    let (bare, auth) = split_url_credentials(given.trim());
    Ok((normalize_url(&bare)?, auth.map(Secret::new)))
}

/// Every URL of the profile flags as typed: `--url`, `--server-metrics`, `--gpu-telemetry`.
pub fn url_values(a: &super::ProfileArgs) -> Vec<&str> {
    a.url
        .iter()
        .chain(&a.telemetry.server_metrics)
        .chain(a.telemetry.gpu_telemetry.iter().flatten())
        .map(String::as_str)
        .collect()
}

/// At most one source of the `Authorization` header: `--api-key`, credentials in `--url`, or
/// a `--header Authorization` (AIPerf lets the key silently replace the header; a value the
/// user gave that would never be sent is refused here instead).
pub fn one_authorization(
    api_key: bool,
    url_credentials: bool,
    headers: &[(String, HeaderValue)],
) -> Result<(), String> {
    let header = headers
        .iter()
        .any(|(n, _)| n.eq_ignore_ascii_case("authorization"));
    let given: Vec<&str> = [
        (api_key, "--api-key"),
        (url_credentials, "--url with user:password@"),
        (header, "--header Authorization"),
    ]
    .into_iter()
    .filter_map(|(on, name)| on.then_some(name))
    .collect();
    if given.len() > 1 {
        let verb = if given.len() == 2 { "both" } else { "all" };
        return Err(format!(
            "{} {verb} set the Authorization header: give one",
            given.join(" and ")
        ));
    }
    Ok(())
}

/// Every secret value of a parsed command line, as the strings that may appear in its
/// arguments: the API key, each sensitive header's value (and a `Bearer`'s token alone), and
/// each URL's credentials (as typed, decoded, the password alone, and as Basic). Longest
/// first, so that a secret that holds another is replaced whole.
pub fn secret_values(
    api_key: Option<&str>,
    headers: &[(String, HeaderValue)],
    urls: &[&str],
) -> Vec<String> {
    let mut out: Vec<String> = Vec::new();
    let mut add = |s: &str| {
        let s = s.trim();
        if s.is_empty() {
            return;
        }
        // A value may be typed JSON-escaped, inside a `--header` JSON object.
        let escaped = serde_json::to_string(s).unwrap_or_default();
        for v in [s, escaped.trim_matches('"')] {
            if !v.is_empty() && !out.iter().any(|o| o == v) {
                out.push(v.to_string());
            }
        }
    };
    if let Some(k) = api_key {
        add(k);
    }
    for (_, v) in headers {
        if let HeaderValue::Secret(s) = v {
            add(s.expose());
            if let Some((_, t)) = s.expose().split_once(' ') {
                add(t);
            }
        }
    }
    for u in urls {
        if let Some(info) = url_userinfo(u.trim()) {
            let decoded = percent_decode(info);
            add(info);
            add(&decoded);
            if let Some((_, pw)) = decoded.split_once(':') {
                add(pw);
            }
            add(&base64(decoded.as_bytes()));
        }
    }
    out.sort_by_key(|s| std::cmp::Reverse(s.len()));
    out
}

/// One argument with every secret value in it replaced. A flag's own name (`--header=`, the
/// `-H` of `-HX-Key:v`) is kept, so that only values are touched; a JSON object whose decoded
/// strings hold a secret (however escaped) is replaced whole.
fn scrub(arg: &str, secrets: &[String]) -> String {
    if secrets.is_empty() {
        return arg.to_string();
    }
    let short = arg.len() > 1
        && arg.starts_with('-')
        && !arg[1..].starts_with(|c: char| c == '-' || c.is_ascii_digit());
    let split = if arg.starts_with("--") {
        arg.find('=').map_or(arg.len(), |i| i + 1)
    } else if short {
        // `-HX` or `-H=X`: the one-letter flag, then its value.
        let n = 1 + arg[1..].chars().next().map_or(0, char::len_utf8);
        if arg[n..].starts_with('=') { n + 1 } else { n }
    } else {
        0
    };
    let (name, value) = arg.split_at(split);
    if value.trim_start().starts_with('{')
        && let Ok(v) = serde_json::from_str::<serde_json::Value>(value)
        && json_holds_secret(&v, secrets)
    {
        return format!("{name}{{{REDACTED}}}");
    }
    let mut v = value.to_string();
    for s in secrets {
        if v.contains(s.as_str()) {
            v = v.replace(s.as_str(), REDACTED);
        }
    }
    format!("{name}{v}")
}

fn json_holds_secret(v: &serde_json::Value, secrets: &[String]) -> bool {
    match v {
        serde_json::Value::String(s) => secrets.iter().any(|x| s.contains(x.as_str())),
        serde_json::Value::Array(a) => a.iter().any(|x| json_holds_secret(x, secrets)),
        serde_json::Value::Object(o) => o.values().any(|x| json_holds_secret(x, secrets)),
        _ => false,
    }
}

/// The command line as recorded: every argument with the secret values of the parsed
/// command line ([`secret_values`]) replaced, whatever the spelling that carried them
/// (`-H X`, `-HX`, `--header=X`, `-H=X`, a value of any other flag), then the spelling-based
/// rules of [`redacted_command_line`] on top.
pub fn recorded_command_line(args: &[String], secrets: &[String]) -> String {
    let scrubbed: Vec<String> = args.iter().map(|a| scrub(a, secrets)).collect();
    redacted_command_line(&scrubbed)
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
                Some(at) => format!("{}://{REDACTED}@{}", &a[..i], &rest[at + 1..]),
                None => a.to_string(),
            }
        }
        None => a.to_string(),
    }
}

/// The command line as typed, with the values of secret flags replaced by their spelling
/// (`--api-key`, and a `--header` of a sensitive name in each of its forms). A fallback under
/// [`recorded_command_line`], which redacts by the parsed values.
pub fn redacted_command_line(args: &[String]) -> String {
    let mut out = Vec::with_capacity(args.len());
    let mut redact_next = false;
    let mut header_next = false;
    for a in args {
        if redact_next {
            out.push(REDACTED.to_string());
            redact_next = false;
            continue;
        }
        if header_next && !a.starts_with('-') {
            out.push(shell_quote(&redact_header_arg(a)));
            continue;
        }
        header_next = false;
        if a == "--api-key" {
            out.push(a.clone());
            redact_next = true;
        } else if a.starts_with("--api-key=") {
            out.push(format!("--api-key={REDACTED}"));
        } else if a == "-H" || a == "--header" {
            out.push(a.clone());
            header_next = true;
        } else if let Some(v) = a
            .strip_prefix("--header=")
            .or_else(|| a.strip_prefix("-H="))
            .or_else(|| a.strip_prefix("-H"))
        {
            let flag = &a[..a.len() - v.len()];
            out.push(shell_quote(&format!("{flag}{}", redact_header_arg(v))));
        } else {
            out.push(shell_quote(&redact_url_credentials(a)));
        }
    }
    out.join(" ")
}

/// A `--header` value with a sensitive header's value replaced (a JSON object whole).
fn redact_header_arg(a: &str) -> String {
    if a.trim_start().starts_with('{') {
        return format!("{{{REDACTED}}}");
    }
    match a.split_once(':') {
        Some((k, _)) if inferbench_core::plan::is_sensitive_header(k.trim()) => {
            format!("{k}:{REDACTED}")
        }
        _ => a.to_string(),
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
