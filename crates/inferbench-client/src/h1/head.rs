//! An HTTP/1.1 request head as written, and a response head as read (RFC 9112): status,
//! the body's framing, whether the connection stays open, and the content type.

use std::io::Write;

use bytes::{Buf, BytesMut};
use http::{HeaderName, StatusCode};

use super::body::Framing;

/// The most response-head bytes we buffer before calling the head invalid.
pub const MAX_HEAD: usize = 64 * 1024;
/// The most header fields a response head may have.
const MAX_HEADERS: usize = 128;

/// `{method} {target} HTTP/1.1`, then `host`, the headers in order and `content-length`,
/// then the body: one buffer, so that a small request leaves in one write (one TLS record).
/// The values are valid header values (the caller's are checked when configured; the
/// engine's own are constants and UUIDs).
pub fn request<'a>(
    method: &str,
    target: &str,
    host: &[u8],
    headers: impl IntoIterator<Item = (&'a HeaderName, &'a [u8])>,
    body: &[u8],
) -> Vec<u8> {
    let mut w = Vec::with_capacity(512 + target.len() + body.len());
    w.extend_from_slice(method.as_bytes());
    w.push(b' ');
    w.extend_from_slice(target.as_bytes());
    w.extend_from_slice(b" HTTP/1.1\r\nhost: ");
    w.extend_from_slice(host);
    w.extend_from_slice(b"\r\n");
    for (name, value) in headers {
        // Ours is the only framing: a configured length or coding would contradict it.
        if name == http::header::CONTENT_LENGTH || name == http::header::TRANSFER_ENCODING {
            continue;
        }
        w.extend_from_slice(name.as_str().as_bytes());
        w.extend_from_slice(b": ");
        w.extend_from_slice(value);
        w.extend_from_slice(b"\r\n");
    }
    if method != "GET" || !body.is_empty() {
        // Formatted into the buffer: no string per request.
        let _ = write!(w, "content-length: {}\r\n", body.len());
    }
    w.extend_from_slice(b"\r\n");
    w.extend_from_slice(body);
    w
}

/// What the engine needs of a response head.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ResponseHead {
    pub status: StatusCode,
    /// `Content-Type` starts with `text/event-stream`.
    pub event_stream: bool,
    pub framing: Framing,
    /// The connection may carry another request after this response's body.
    pub keep_alive: bool,
}

/// A response head that breaks HTTP/1.1.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct HeadError(pub String);

impl std::fmt::Display for HeadError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.0)
    }
}

/// Parses one response head from the front of `buf` and removes it. None: incomplete.
/// Interim (1xx) responses other than 101 are skipped, as a client that sent no
/// `Expect` may.
pub fn parse_response(buf: &mut BytesMut) -> Result<Option<ResponseHead>, HeadError> {
    loop {
        let mut fields = [httparse::EMPTY_HEADER; MAX_HEADERS];
        let mut r = httparse::Response::new(&mut fields);
        let n = match r.parse(buf) {
            // The same limit for a head that arrived whole, so the answer does not depend
            // on how the bytes were split into reads.
            Ok(httparse::Status::Complete(n)) if n > MAX_HEAD => {
                return Err(HeadError(format!(
                    "the response head is longer than {MAX_HEAD} bytes"
                )));
            }
            Ok(httparse::Status::Complete(n)) => n,
            Ok(httparse::Status::Partial) if buf.len() > MAX_HEAD => {
                return Err(HeadError(format!(
                    "the response head is longer than {MAX_HEAD} bytes"
                )));
            }
            Ok(httparse::Status::Partial) => return Ok(None),
            Err(e) => return Err(HeadError(format!("invalid response head: {e}"))),
        };
        let code = r.code.unwrap_or(0);
        let status = StatusCode::from_u16(code)
            .map_err(|_| HeadError(format!("invalid response status {code}")))?;
        let http11 = r.version == Some(1);
        let mut event_stream = false;
        let mut chunked = None;
        let mut length: Option<u64> = None;
        let mut close = false;
        let mut keep_alive_token = false;
        for h in r.headers.iter() {
            let name = h.name;
            if name.eq_ignore_ascii_case("content-type") {
                event_stream = h
                    .value
                    .trim_ascii_start()
                    .get(..17)
                    .is_some_and(|v| v.eq_ignore_ascii_case(b"text/event-stream"));
            } else if name.eq_ignore_ascii_case("transfer-encoding") {
                // The last coding decides: chunked, or (anything else) up to the close.
                let last = h.value.rsplit(|&b| b == b',').next().unwrap_or_default();
                chunked = Some(last.trim_ascii().eq_ignore_ascii_case(b"chunked"));
            } else if name.eq_ignore_ascii_case("content-length") {
                let v = std::str::from_utf8(h.value)
                    .ok()
                    .and_then(|s| s.trim().parse::<u64>().ok())
                    .ok_or_else(|| HeadError("invalid Content-Length".into()))?;
                if length.is_some_and(|l| l != v) {
                    return Err(HeadError("two different Content-Length values".into()));
                }
                length = Some(v);
            } else if name.eq_ignore_ascii_case("connection") {
                for token in h.value.split(|&b| b == b',') {
                    let t = token.trim_ascii();
                    close |= t.eq_ignore_ascii_case(b"close");
                    keep_alive_token |= t.eq_ignore_ascii_case(b"keep-alive");
                }
            }
        }
        if (100..200).contains(&code) && code != 101 {
            buf.advance(n);
            continue;
        }
        buf.advance(n);
        let framing = if code < 200 || code == 204 || code == 304 {
            Framing::Empty
        } else {
            match (chunked, length) {
                (Some(true), _) => Framing::Chunked,
                (Some(false), _) => Framing::Close,
                (None, Some(l)) => Framing::Length(l),
                (None, None) => Framing::Close,
            }
        };
        // Both a coding and a length: the coding wins, and the connection is not reused
        // (RFC 9112 §6.1: such a message may be an attempt at request smuggling).
        let both = chunked.is_some() && length.is_some();
        let keep_alive = framing != Framing::Close
            && code != 101
            && !close
            && !both
            && (http11 || keep_alive_token);
        return Ok(Some(ResponseHead {
            status,
            event_stream,
            framing,
            keep_alive,
        }));
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    fn parse(s: &[u8]) -> Result<Option<ResponseHead>, HeadError> {
        parse_response(&mut BytesMut::from(s))
    }

    #[test]
    fn request_head_by_hand() {
        let h = [
            (http::header::CONTENT_TYPE, &b"application/json"[..]),
            (http::header::CONTENT_LENGTH, &b"999"[..]),
        ];
        let w = request(
            "POST",
            "/v1/chat/completions?x=1",
            b"127.0.0.1:8000",
            h.iter().map(|(n, v)| (n, *v)),
            b"{}",
        );
        assert_eq!(
            w,
            b"POST /v1/chat/completions?x=1 HTTP/1.1\r\nhost: 127.0.0.1:8000\r\n\
content-type: application/json\r\ncontent-length: 2\r\n\r\n{}"
        );
        assert_eq!(
            request("GET", "/m", b"h", [], b""),
            b"GET /m HTTP/1.1\r\nhost: h\r\n\r\n"
        );
    }

    #[test]
    fn framing_and_keep_alive() {
        let h = parse(
            b"HTTP/1.1 200 OK\r\nContent-Type: text/event-stream; charset=utf-8\r\n\
Transfer-Encoding: chunked\r\n\r\ndata",
        )
        .unwrap()
        .unwrap();
        assert_eq!(h.status, StatusCode::OK);
        assert!(h.event_stream);
        assert_eq!(h.framing, Framing::Chunked);
        assert!(h.keep_alive);
        let h = parse(b"HTTP/1.1 500 Oops\r\ncontent-length: 12\r\nConnection: Close\r\n\r\n")
            .unwrap()
            .unwrap();
        assert_eq!((h.framing, h.keep_alive), (Framing::Length(12), false));
        assert!(!h.event_stream);
        let h = parse(b"HTTP/1.0 200 OK\r\nContent-Length: 1\r\n\r\n")
            .unwrap()
            .unwrap();
        assert!(!h.keep_alive, "HTTP/1.0 without keep-alive closes");
        let h = parse(b"HTTP/1.0 200 OK\r\nContent-Length: 1\r\nConnection: keep-alive\r\n\r\n")
            .unwrap()
            .unwrap();
        assert!(h.keep_alive);
        let h = parse(b"HTTP/1.1 200 OK\r\n\r\n").unwrap().unwrap();
        assert_eq!((h.framing, h.keep_alive), (Framing::Close, false));
        let h = parse(b"HTTP/1.1 204 No Content\r\nContent-Length: 5\r\n\r\n")
            .unwrap()
            .unwrap();
        assert_eq!((h.framing, h.keep_alive), (Framing::Empty, true));
        let h = parse(
            b"HTTP/1.1 200 OK\r\nTransfer-Encoding: gzip, chunked\r\nContent-Length: 3\r\n\r\n",
        )
        .unwrap()
        .unwrap();
        assert_eq!(h.framing, Framing::Chunked, "chunked wins over a length");
        assert!(!h.keep_alive, "and the connection is closed after it");
        let h = parse(b"HTTP/1.1 200 OK\r\nTransfer-Encoding: gzip\r\n\r\n")
            .unwrap()
            .unwrap();
        assert_eq!((h.framing, h.keep_alive), (Framing::Close, false));
    }

    #[test]
    fn interim_responses_are_skipped_and_partial_heads_wait() {
        let mut b = BytesMut::from(
            &b"HTTP/1.1 100 Continue\r\n\r\nHTTP/1.1 201 Created\r\ncontent-length: 0\r\n\r\nX"[..],
        );
        let h = parse_response(&mut b).unwrap().unwrap();
        assert_eq!(h.status, StatusCode::CREATED);
        assert_eq!(&b[..], b"X");
        assert_eq!(parse(b"HTTP/1.1 200 OK\r\nContent-Le").unwrap(), None);
        let mut b = BytesMut::from(&b"HTTP/1.1 200 OK\r\n"[..]);
        assert_eq!(parse_response(&mut b).unwrap(), None);
        assert_eq!(b.len(), 17, "nothing is consumed while incomplete");
    }

    #[test]
    fn broken_heads_are_errors() {
        assert!(parse(b"HTTP/1.1 2x0 OK\r\n\r\n").is_err());
        assert!(parse(b"garbage\r\n\r\n").is_err());
        assert!(parse(b"HTTP/1.1 200 OK\r\nContent-Length: -1\r\n\r\n").is_err());
        assert!(
            parse(b"HTTP/1.1 200 OK\r\nContent-Length: 1\r\nContent-Length: 2\r\n\r\n").is_err()
        );
        let long = [b"HTTP/1.1 200 OK\r\nX: ".as_slice(), &vec![b'a'; MAX_HEAD]].concat();
        assert!(parse(&long).unwrap_err().0.contains("longer than"));
    }

    proptest! {
        /// Arbitrary bytes never panic, and a head is only taken whole.
        #[test]
        fn arbitrary_heads_never_panic(bytes in proptest::collection::vec(any::<u8>(), 0..300)) {
            let mut b = BytesMut::from(&bytes[..]);
            if let Ok(None) = parse_response(&mut b) {
                prop_assert_eq!(b.len(), bytes.len());
            }
        }
    }
}
