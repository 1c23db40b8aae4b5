//! The headers of a request, in one place: the engine builds each request's head from
//! [`wire_headers`], and the raw export lists the same headers, secrets redacted, with
//! [`request_headers`] (offline too: [`configured_headers`] takes the plan's key and
//! headers, which is all a manifest holds).

use http::header::{self, HeaderName, HeaderValue};
use inferbench_core::plan::{self, REDACTED, Secret, is_sensitive_header};

/// What every request says it is.
pub const USER_AGENT: &str = concat!("inferbench/", env!("CARGO_PKG_VERSION"));

/// A header sent with every request besides the engine's own (the `--api-key`'s
/// `Authorization`, a `--header`): checked once, kept as the user spelled it (for the
/// export) and in its wire form.
#[derive(Clone, PartialEq)]
pub struct ConfiguredHeader {
    name: String,
    value: String,
    sensitive: bool,
    wire_name: HeaderName,
    wire_value: HeaderValue,
    /// `--session-header`: not a header of its own but the name the per-session id goes out
    /// under, in place of `X-Correlation-ID` (its value is unused).
    session: bool,
}

/// Which part of a configured header is not valid on the wire.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum InvalidHeader {
    Name,
    Value,
}

impl ConfiguredHeader {
    /// Checks `name` and `value` for the wire. A sensitive value is redacted in the export
    /// and in `Debug`.
    pub fn new(name: &str, value: &str, sensitive: bool) -> Result<Self, InvalidHeader> {
        let wire_name = HeaderName::from_bytes(name.as_bytes()).map_err(|_| InvalidHeader::Name)?;
        let mut wire_value = HeaderValue::from_str(value).map_err(|_| InvalidHeader::Value)?;
        wire_value.set_sensitive(sensitive);
        Ok(ConfiguredHeader {
            name: name.to_string(),
            value: value.to_string(),
            sensitive,
            wire_name,
            wire_value,
            session: false,
        })
    }

    /// `--session-header NAME`: the per-session id is sent as `NAME` instead of
    /// `X-Correlation-ID` (AIPerf replaces the default header with it). Listed with the
    /// configured headers so that the engine and the raw export read the same list.
    pub fn session(name: &str) -> Result<Self, InvalidHeader> {
        let mut h = ConfiguredHeader::new(name, "", false)?;
        h.session = true;
        Ok(h)
    }

    /// The name as given (the wire form is lower case).
    pub fn name(&self) -> &str {
        &self.name
    }

    pub fn value(&self) -> &str {
        &self.value
    }

    pub fn sensitive(&self) -> bool {
        self.sensitive
    }

    /// The checked wire form (its value marked sensitive when it is).
    pub(crate) fn wire(&self) -> (&HeaderName, &HeaderValue) {
        (&self.wire_name, &self.wire_value)
    }
}

impl std::fmt::Debug for ConfiguredHeader {
    // The engine's config is printed in debugging; a key must not be.
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let value = if self.sensitive {
            REDACTED
        } else {
            &self.value
        };
        f.debug_struct("ConfiguredHeader")
            .field("name", &self.name)
            .field("value", &value)
            .field("sensitive", &self.sensitive)
            .finish()
    }
}

/// The configured headers of a plan, in the order they are applied: the `--api-key` as
/// `Authorization: Bearer KEY`, then each `--header` in order. Errors name the flag.
pub fn configured_headers(
    api_key: Option<&Secret>,
    headers: &[(String, plan::HeaderValue)],
) -> Result<Vec<ConfiguredHeader>, String> {
    let mut out = Vec::with_capacity(headers.len() + 1);
    if let Some(k) = api_key {
        let v = format!("Bearer {}", k.expose());
        out.push(
            ConfiguredHeader::new("Authorization", &v, true)
                .map_err(|_| "--api-key: not a valid header value".to_string())?,
        );
    }
    for (name, value) in headers {
        let h = ConfiguredHeader::new(name, value.expose(), is_sensitive_header(name)).map_err(
            |e| match e {
                InvalidHeader::Name => format!("--header: invalid name {name:?}"),
                InvalidHeader::Value => format!("--header {name}: invalid value"),
            },
        )?;
        out.push(h);
    }
    Ok(out)
}

/// One header of a request as it goes out.
pub(crate) struct WireHeader<'a> {
    /// As written in the export.
    pub name: &'a str,
    pub value: &'a str,
    pub sensitive: bool,
    pub wire_name: HeaderName,
    /// Set for a configured header (already checked); the engine's own are made from `value`.
    pub wire_value: Option<&'a HeaderValue>,
}

impl<'a> WireHeader<'a> {
    /// The value as it goes on the wire: the configured one (checked when configured), or
    /// the engine's own (constants and UUIDs, valid by construction).
    pub(crate) fn wire_bytes(&self) -> &'a [u8] {
        self.wire_value
            .map_or(self.value.as_bytes(), HeaderValue::as_bytes)
    }
}

/// The headers of one request in wire order, after `Host` (which the transport adds from the
/// URI): `Content-Type`, `User-Agent`, `X-Request-ID`, `X-Correlation-ID`, `Accept` when
/// streaming, then the configured ones. A configured header whose name is already there
/// replaces it in place (the last of a name wins), as `HeaderMap::insert` does.
pub(crate) fn wire_headers<'a>(
    configured: &'a [ConfiguredHeader],
    request_id: &'a str,
    correlation_id: &'a str,
    streaming: bool,
) -> Vec<WireHeader<'a>> {
    let own = |name: &'a str, wire_name: HeaderName, value: &'a str| WireHeader {
        name,
        value,
        sensitive: false,
        wire_name,
        wire_value: None,
    };
    let mut out = Vec::with_capacity(5 + configured.len());
    out.push(own(
        "Content-Type",
        header::CONTENT_TYPE,
        "application/json",
    ));
    out.push(own("User-Agent", header::USER_AGENT, USER_AGENT));
    out.push(own(
        "X-Request-ID",
        HeaderName::from_static("x-request-id"),
        request_id,
    ));
    match configured.iter().find(|h| h.session) {
        Some(s) => out.push(own(&s.name, s.wire_name.clone(), correlation_id)),
        None => out.push(own(
            "X-Correlation-ID",
            HeaderName::from_static("x-correlation-id"),
            correlation_id,
        )),
    }
    if streaming {
        out.push(own("Accept", header::ACCEPT, "text/event-stream"));
    }
    for h in configured.iter().filter(|h| !h.session) {
        let w = WireHeader {
            name: &h.name,
            value: &h.value,
            sensitive: h.sensitive,
            wire_name: h.wire_name.clone(),
            wire_value: Some(&h.wire_value),
        };
        match out.iter_mut().find(|o| o.wire_name == h.wire_name) {
            Some(slot) => *slot = w,
            None => out.push(w),
        }
    }
    out
}

/// The headers of one request as (name, value) in wire order (see [`wire_headers`]; `Host`
/// is not listed). With `redact`, a sensitive value reads [`REDACTED`]. This is what the raw
/// export shows; given the plan's [`configured_headers`] and a record's ids and streaming
/// flag, it is the same offline as during the run.
pub fn request_headers(
    configured: &[ConfiguredHeader],
    request_id: &str,
    correlation_id: &str,
    streaming: bool,
    redact: bool,
) -> Vec<(String, String)> {
    wire_headers(configured, request_id, correlation_id, streaming)
        .into_iter()
        .map(|h| {
            let value = if redact && h.sensitive {
                REDACTED
            } else {
                h.value
            };
            (h.name.to_string(), value.to_string())
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn pairs(v: &[(&str, &str)]) -> Vec<(String, String)> {
        v.iter()
            .map(|(n, v)| (n.to_string(), v.to_string()))
            .collect()
    }

    #[test]
    fn own_headers_then_configured_in_order() {
        let cfg = configured_headers(
            Some(&Secret::new("sk-1")),
            &[
                (
                    "X-Team".into(),
                    plan::HeaderValue::for_header("X-Team", "a"),
                ),
                (
                    "X-Api-Key".into(),
                    plan::HeaderValue::for_header("X-Api-Key", "k2"),
                ),
            ],
        )
        .unwrap();
        let ua = format!("inferbench/{}", env!("CARGO_PKG_VERSION"));
        let plain = request_headers(&cfg, "rid", "cid", true, false);
        assert_eq!(
            plain,
            pairs(&[
                ("Content-Type", "application/json"),
                ("User-Agent", &ua),
                ("X-Request-ID", "rid"),
                ("X-Correlation-ID", "cid"),
                ("Accept", "text/event-stream"),
                ("Authorization", "Bearer sk-1"),
                ("X-Team", "a"),
                ("X-Api-Key", "k2"),
            ])
        );
        // Redacted: the key and the key-like header; not streaming: no Accept.
        let redacted = request_headers(&cfg, "rid", "cid", false, true);
        assert_eq!(
            redacted,
            pairs(&[
                ("Content-Type", "application/json"),
                ("User-Agent", &ua),
                ("X-Request-ID", "rid"),
                ("X-Correlation-ID", "cid"),
                ("Authorization", REDACTED),
                ("X-Team", "a"),
                ("X-Api-Key", REDACTED),
            ])
        );
    }

    #[test]
    fn a_configured_header_replaces_ours_in_place_and_the_last_of_a_name_wins() {
        let h = |n: &str, v: &str| (n.to_string(), plan::HeaderValue::for_header(n, v));
        let cfg = configured_headers(
            Some(&Secret::new("sk-1")),
            &[
                h("user-agent", "custom"),
                h("X-A", "1"),
                h("authorization", "Bearer other"),
                h("x-a", "2"),
            ],
        )
        .unwrap();
        assert_eq!(
            request_headers(&cfg, "r", "c", false, false),
            pairs(&[
                ("Content-Type", "application/json"),
                ("user-agent", "custom"),
                ("X-Request-ID", "r"),
                ("X-Correlation-ID", "c"),
                ("authorization", "Bearer other"),
                ("x-a", "2"),
            ])
        );
    }

    #[test]
    fn invalid_headers_name_the_flag() {
        let bad_key = Secret::new("a\nb");
        assert_eq!(
            configured_headers(Some(&bad_key), &[]).unwrap_err(),
            "--api-key: not a valid header value"
        );
        let bad_name = [("a b".to_string(), plan::HeaderValue::Plain("v".into()))];
        assert_eq!(
            configured_headers(None, &bad_name).unwrap_err(),
            "--header: invalid name \"a b\""
        );
        let bad_value = [("X-A".to_string(), plan::HeaderValue::Plain("v\r\n".into()))];
        assert_eq!(
            configured_headers(None, &bad_value).unwrap_err(),
            "--header X-A: invalid value"
        );
    }

    #[test]
    fn debug_hides_a_sensitive_value() {
        let h = ConfiguredHeader::new("Authorization", "Bearer sk-secret", true).unwrap();
        let d = format!("{h:?}");
        assert!(!d.contains("sk-secret"), "{d}");
        assert!(d.contains(REDACTED), "{d}");
    }

    #[test]
    fn a_session_header_renames_the_correlation_header_in_place() {
        let mut cfg = configured_headers(None, &[]).unwrap();
        cfg.push(ConfiguredHeader::session("X-Session-ID").unwrap());
        let ua = format!("inferbench/{}", env!("CARGO_PKG_VERSION"));
        assert_eq!(
            request_headers(&cfg, "r", "c", false, false),
            pairs(&[
                ("Content-Type", "application/json"),
                ("User-Agent", &ua),
                ("X-Request-ID", "r"),
                ("X-Session-ID", "c"),
            ])
        );
    }
}
